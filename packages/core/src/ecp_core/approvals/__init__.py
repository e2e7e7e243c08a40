"""Approvals: records, resolutions and the action trail (resolving is a run-lifecycle step)."""

from ecp_core.approvals.model import (
    ApprovalActionRecord,
    ApprovalRecord,
    ApprovalResolution,
    ApprovalResolutionRequest,
)

__all__ = [
    "ApprovalActionRecord",
    "ApprovalRecord",
    "ApprovalResolution",
    "ApprovalResolutionRequest",
]
