"""Wire models of the HTTP adapter that the core does not define."""

from typing import Any

import attrs

from ecp_core.approvals.model import ApprovalRecord
from ecp_core.constraints import checked
from ecp_core.signing import PublicSigningKey
from ecp_core.types import ApprovalStatus


@attrs.frozen(kw_only=True, field_transformer=checked)
class ResumeRequest:
    """Body of ``POST /runs/{run_id}/resume``: the value the interrupt waits for."""

    value: Any


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalListResponse:
    """A run's approvals in creation order."""

    approvals: tuple[ApprovalRecord, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class SigningKeysResponse:
    """Keys that verify audit record signatures (the current one last)."""

    keys: tuple[PublicSigningKey, ...]


@attrs.frozen(kw_only=True, field_transformer=checked)
class HealthResponse:
    """Liveness or readiness, with what was checked."""

    status: str
    checks: dict[str, str] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalStatusQuery:
    """The ``status`` query parameter of an approval listing."""

    status: ApprovalStatus
