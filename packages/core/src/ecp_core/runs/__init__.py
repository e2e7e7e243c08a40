"""Runs: the model, the state machine and action handlers.

The engine and use cases live in :mod:`ecp_core.runs.step` and :mod:`ecp_core.runs.service`.
"""

from ecp_core.runs.actions import (
    ActionAlreadyRegistered,
    ActionContext,
    ActionHandler,
    ActionListResponse,
    ActionRegistry,
    ActionResult,
    ActionSource,
    RegisteredAction,
)
from ecp_core.runs.model import (
    AdminRunListResponse,
    ApprovalPausedState,
    ChildRunListResponse,
    ChildRunSummaryResponse,
    FailureState,
    Run,
    RunStatusResponse,
    StartRunRequest,
    public_status,
)
from ecp_core.runs.state_machine import TERMINAL, TRANSITIONS, WAITING, can_transition, transition

__all__ = [
    "TERMINAL",
    "TRANSITIONS",
    "WAITING",
    "ActionAlreadyRegistered",
    "ActionContext",
    "ActionHandler",
    "ActionListResponse",
    "ActionRegistry",
    "ActionResult",
    "ActionSource",
    "AdminRunListResponse",
    "ApprovalPausedState",
    "ChildRunListResponse",
    "ChildRunSummaryResponse",
    "FailureState",
    "RegisteredAction",
    "Run",
    "RunStatusResponse",
    "StartRunRequest",
    "can_transition",
    "public_status",
    "transition",
]
