"""Approvals: records, resolutions, the action trail and the approval use cases."""

from ecp_core.approvals.model import (
    ApprovalActionRecord,
    ApprovalRecord,
    ApprovalResolution,
    ApprovalResolutionRequest,
    ApprovalResolutionResponse,
)
from ecp_core.approvals.service import ApprovalService

__all__ = [
    "ApprovalActionRecord",
    "ApprovalRecord",
    "ApprovalResolution",
    "ApprovalResolutionRequest",
    "ApprovalResolutionResponse",
    "ApprovalService",
]
