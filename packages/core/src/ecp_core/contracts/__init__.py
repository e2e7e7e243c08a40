"""Contracts: named JSON Schemas that approval edits (``resolution_schema_ref``) must satisfy."""

from ecp_core.contracts.model import Contract, CreateContractRequest
from ecp_core.contracts.schema import payload_errors, schema_errors
from ecp_core.contracts.service import ContractService

__all__ = [
    "Contract",
    "ContractService",
    "CreateContractRequest",
    "payload_errors",
    "schema_errors",
]
