"""Approvals.

The records, how a run opens one, what a decision or an escalation does to the run, and the use
cases that resolve and read them.
"""

from ecp_core.runs.approvals.model import (
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
