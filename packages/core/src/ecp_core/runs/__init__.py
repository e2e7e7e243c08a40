"""Runs, one sub-package per concept.

- :mod:`.run`: the run itself (model, state machine, walk, attempts, effects, events);
- :mod:`.approvals`, :mod:`.tasks`, :mod:`.children`, :mod:`.audit`: each concept's records,
  steps and use cases, typed against the moves of :mod:`.run.moves`;
- :mod:`.engine`: the stepper, the lifecycle and the run's use cases, which compose them.
"""

from ecp_core.runs.run.actions import (
    ActionAlreadyRegistered,
    ActionContext,
    ActionHandler,
    ActionListResponse,
    ActionRegistry,
    ActionResult,
    ActionSource,
    RegisteredAction,
)
from ecp_core.runs.run.model import (
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
from ecp_core.runs.run.state_machine import (
    TERMINAL,
    TRANSITIONS,
    WAITING,
    can_transition,
    transition,
)

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
