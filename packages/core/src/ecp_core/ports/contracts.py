"""The contract port: named resolution schemas per tenant."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.contracts.model import Contract


class ContractRepository(Protocol):
    """Immutable contracts (named JSON Schemas) per tenant."""

    def add(self, contract: Contract) -> None:
        """Store a new contract (Conflict when the name exists)."""
        ...

    def get(self, tenant_id: str, name: str) -> Contract | None:
        """One contract, or None."""
        ...


class WithContracts(Protocol):
    """A unit of work that reaches the contracts."""

    @property
    def contracts(self) -> ContractRepository:
        """The contracts."""
        ...


class ContractsUnit(Transaction, WithContracts, Protocol):
    """What the contract use cases need."""


__all__ = ["ContractRepository", "ContractsUnit", "WithContracts"]
