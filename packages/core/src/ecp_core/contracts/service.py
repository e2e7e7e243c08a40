"""Use cases for contracts."""

from collections.abc import Callable

import attrs

from ecp_core.canonical import json_digest
from ecp_core.contracts.model import Contract, CreateContractRequest
from ecp_core.contracts.schema import schema_errors
from ecp_core.errors import Conflict, NotFound, ValidationFailed
from ecp_core.ports.contracts import ContractsUnit
from ecp_core.ports.system import Clock


class ContractService:
    """Creates and reads contracts; a contract never changes once created."""

    def __init__(self, uow: Callable[[], ContractsUnit], clock: Clock) -> None:
        """Wire the service."""
        self._uow = uow
        self._clock = clock

    def create(self, tenant_id: str, request: CreateContractRequest) -> tuple[Contract, bool]:
        """Store a contract; an identical repeat returns it (``False``), a changed one is a Conflict."""
        errors = schema_errors(request.json_schema)
        if errors:
            located = [attrs.evolve(e, loc=("json_schema", *e.loc)) for e in errors]
            raise ValidationFailed("json_schema is not a valid JSON Schema", errors=located)
        digest = json_digest({"json_schema": request.json_schema, "metadata": request.metadata})
        with self._uow() as uow:
            existing = uow.contracts.get(tenant_id, request.name)
            if existing is not None:
                if existing.digest == digest:
                    return existing, False
                raise Conflict(f"contract {request.name!r} exists with other content")
            contract = Contract(
                tenant_id=tenant_id,
                name=request.name,
                json_schema=request.json_schema,
                metadata=request.metadata,
                digest=digest,
                created_at=self._clock.now(),
            )
            uow.contracts.add(contract)
            uow.commit()
        return contract, True

    def get(self, tenant_id: str, name: str) -> Contract:
        """One contract; NotFound otherwise."""
        with self._uow() as uow:
            contract = uow.contracts.get(tenant_id, name)
        if contract is None:
            raise NotFound(f"contract {name!r} not found")
        return contract
