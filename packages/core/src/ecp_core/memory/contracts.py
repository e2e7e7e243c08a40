"""ContractRepository in memory."""

from ecp_core.contracts.model import Contract
from ecp_core.errors import exists
from ecp_core.memory.tables import Repository, detached


class MemoryContracts(Repository):
    """Contracts keyed by (tenant, name)."""

    def add(self, contract: Contract) -> None:
        """Store a new contract."""
        key = (contract.tenant_id, contract.name)
        if key in self._t.table("contracts"):
            raise exists("contract", contract.name)
        self._t.put("contracts", key, contract)

    @detached
    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        found: Contract | None = self._t.table("contracts").get((tenant_id, name))
        return found
