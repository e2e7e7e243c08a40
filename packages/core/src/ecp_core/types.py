"""Enumerations of the specification, with their wire strings."""

import enum


class Capability(enum.StrEnum):
    """What a node may do; policies deny capabilities."""

    NETWORK_READ = "network_read"
    NETWORK_WRITE = "network_write"
    FILESYSTEM_READ = "filesystem_read"
    FILESYSTEM_WRITE = "filesystem_write"
    SECRET_ACCESS = "secret_access"  # noqa: S105 - a capability name, not a secret
    EXTERNAL_API_CALL = "external_api_call"
    PROCESS_SPAWN = "process_spawn"
    MEMORY_READ = "memory_read"
    MEMORY_WRITE = "memory_write"


class SideEffectClass(enum.StrEnum):
    """How far an action's effects reach (docs/decisions/0004-side-effect-classes.md)."""

    UNKNOWN = "unknown"
    NONE = "none"
    IDEMPOTENT = "idempotent"
    NON_IDEMPOTENT = "non_idempotent"
    IRREVERSIBLE = "irreversible"


class AuthMethod(enum.StrEnum):
    """How a caller authenticated."""

    API_KEY = "api_key"
    BEARER = "bearer"


class ServiceRole(enum.StrEnum):
    """Role slugs; permissions are mapped from these in one table."""

    ADMIN = "admin"
    OPERATOR = "operator"
    APPROVER = "approver"
    ANALYST = "analyst"
    VIEWER = "viewer"
    WORKER = "worker"


class RunStatus(enum.StrEnum):
    """Internal run status."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    WAITING_APPROVAL = "WAITING_APPROVAL"
    WAITING_INTERRUPT = "WAITING_INTERRUPT"
    WAITING_TASK = "WAITING_TASK"
    WAITING_CHILD = "WAITING_CHILD"
    WAITING_TIMER = "WAITING_TIMER"
    COMPLETED = "COMPLETED"
    FAILED = "FAILED"
    TERMINATED_BY_POLICY = "TERMINATED_BY_POLICY"
    CANCELED = "CANCELED"


class RunPublicStatus(enum.StrEnum):
    """Run status as clients see it."""

    PENDING = "pending"
    RUNNING = "running"
    WAITING_APPROVAL = "waiting_approval"
    WAITING_INTERRUPT = "waiting_interrupt"
    WAITING_TASK = "waiting_task"
    WAITING_CHILD = "waiting_child"
    WAITING_TIMER = "waiting_timer"
    COMPLETED = "completed"
    FAILED = "failed"
    TERMINATED_BY_POLICY = "terminated_by_policy"
    CANCELED = "canceled"
    PAUSED = "paused"


class ApprovalDecision(enum.StrEnum):
    """What a reviewer decides."""

    APPROVE = "approve"
    REJECT = "reject"
    EDIT_AND_APPROVE = "edit_and_approve"


class ApprovalStatus(enum.StrEnum):
    """Where an approval stands."""

    PENDING = "pending"
    RESOLVED = "resolved"
    ESCALATED = "escalated"
    WITHDRAWN = "withdrawn"
    """Its run was canceled before anyone resolved it; resolving it is refused."""


class HumanInteractionType(enum.StrEnum):
    """Kind of human interaction an approval record asks for."""

    APPROVAL = "approval"


class NodeKind(enum.StrEnum):
    """Kinds of graph node."""

    ACTION = "action"
    APPROVAL = "approval"
    INTERRUPT = "interrupt"
    MAPPING = "mapping"
    TASK = "task"
    SUBGRAPH = "subgraph"
    WAIT = "wait"
    END = "end"


class AttemptStatus(enum.StrEnum):
    """Outcome of one node attempt, as written in its audit record."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"
    REJECTED = "rejected"
    WAITING_APPROVAL = "waiting_approval"
    WAITING_INTERRUPT = "waiting_interrupt"
    WAITING_TIMER = "waiting_timer"
    APPROVED = "approved"
    DENIED = "denied"
    RESUMED = "resumed"
    ESCALATED = "escalated"
    CANCELED = "canceled"
    MIGRATED = "migrated"


class CostMeasurement(enum.StrEnum):
    """How a cost was known: metered by the provider, estimated, or not known at all.

    A connector test keeps its worst case as ``estimated`` when a call may have been served
    without an answer.
    """

    MEASURED = "measured"
    ESTIMATED = "estimated"
    UNMEASURED = "unmeasured"
