"""Which fields each kind of node takes, stated once for readers of the wire format (ADR 0055).

``NodeDefinition`` is one model whose optional fields apply by ``kind``; ``graphs.validation``
enforces the rules. This table states the same rules per kind, so the OpenAPI document can
describe a node as a ``oneOf`` discriminated by ``kind`` (and a generated client gets one class
per kind). A test holds the table to the validation, field by field.
"""

from collections.abc import Mapping

import attrs

from ecp_core.types import NodeKind

APPROVAL_FIELDS = (
    "allowed_actions",
    "resolution_schema_ref",
    "sla_seconds",
    "min_approvals",
    "forbid_self_approval",
    "approver_roles",
    "approver_subjects",
)
"""How a person decides, and who (ADR 0075): on an approval node, or on a node whose work
``requires_approval``."""


@attrs.frozen(kw_only=True)
class KindFields:
    """The fields one kind of node takes besides ``id`` and ``kind``."""

    title: str
    """The name of the kind's schema in the OpenAPI document, such as ``ActionNode``."""
    description: str
    """What a node of this kind does."""
    required: tuple[str, ...] = ()
    """Fields a node of this kind must have."""
    optional: tuple[str, ...] = ()
    """Fields it may have; every other field of ``NodeDefinition`` must be left out."""
    one_of: tuple[str, ...] = ()
    """Fields of which a node of this kind has exactly one."""


NODE_FIELDS: Mapping[NodeKind, KindFields] = {
    NodeKind.ACTION: KindFields(
        title="ActionNode",
        description="Runs a registered action handler; its approval fields apply only when the "
        "action requires approval.",
        required=("action",),
        optional=APPROVAL_FIELDS,
    ),
    NodeKind.APPROVAL: KindFields(
        title="ApprovalNode",
        description="Pauses the run until a person resolves an approval.",
        required=("summary", "rationale"),
        optional=APPROVAL_FIELDS,
    ),
    NodeKind.INTERRUPT: KindFields(
        title="InterruptNode",
        description="Pauses the run until it is resumed with a value, written at target_path.",
        optional=("target_path", "prompt"),
    ),
    NodeKind.MAPPING: KindFields(
        title="MappingNode",
        description="Reshapes the run state with constant and copy operations.",
        required=("operations",),
    ),
    NodeKind.TASK: KindFields(
        title="TaskNode",
        description="Hands its action to an external worker through the task queue; its approval "
        "fields apply only when the action requires approval.",
        required=("action",),
        optional=("lock_seconds", "max_attempts", *APPROVAL_FIELDS),
    ),
    NodeKind.SUBGRAPH: KindFields(
        title="SubgraphNode",
        description="Starts a child run of another deployment and waits for it; its approval "
        "fields apply only when the call requires approval.",
        required=("subgraph",),
        optional=("target_path", *APPROVAL_FIELDS),
    ),
    NodeKind.WAIT: KindFields(
        title="WaitNode",
        description="Waits durably until a time, then moves on: `seconds` after it is reached, or "
        "until the RFC 3339 time at `until_path` in the run state (exactly one of the two).",
        one_of=("seconds", "until_path"),
    ),
    NodeKind.END: KindFields(
        title="EndNode",
        description="Completes the run; an end node has no exits.",
    ),
}
"""Every kind of node and the fields it takes."""
