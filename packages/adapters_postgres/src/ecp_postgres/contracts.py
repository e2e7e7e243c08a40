"""ContractRepository on PostgreSQL."""

from ecp_core.contracts.model import Contract
from ecp_core.errors import exists
from ecp_postgres.rows import Repository, Table

CONTRACTS = Table("ecp_contracts", Contract, jsonb=["json_schema", "metadata"])


class PostgresContracts(Repository):
    """ContractRepository on PostgreSQL."""

    def add(self, contract: Contract) -> None:
        """Store a new contract."""
        self._insert(CONTRACTS, contract, exists("contract", contract.name))

    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        return self._one(CONTRACTS, "tenant_id = %s AND name = %s", (tenant_id, name))
