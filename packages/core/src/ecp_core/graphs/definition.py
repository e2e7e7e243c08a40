"""The declarative graph definition: nodes, edges, conditions and mapping operations."""

from datetime import datetime
from typing import Annotated, Any, Literal

import attrs

from ecp_core.canonical import json_digest
from ecp_core.constraints import AwareUtc, Items, Range, Text, allow_extras, checked
from ecp_core.types import ApprovalDecision, Capability, NodeKind, ServiceRole, SideEffectClass
from ecp_core.wire import unstructure

IDENTIFIER = r"[A-Za-z0-9][A-Za-z0-9_.:-]*"
"""Graph and node ids: a letter or digit, then letters, digits and ``_ . : -``."""

DOTTED_PATH = r"[^.\s]+(\.[^.\s]+)*"
"""A dotted path into the run state, such as ``customer.address.city``."""

DEFAULT_MAX_STEPS = 1000
MAX_STEPS_LIMIT = 100_000

Identifier = Annotated[str, Text(1, 128, pattern=IDENTIFIER)]
DottedPath = Annotated[str, Text(1, 512, pattern=DOTTED_PATH)]
Subject = Annotated[str, Text(1, 512)]
"""A caller's subject, as tokens and API keys name it."""

MAX_MIN_APPROVALS = 10
"""The most distinct approvals an approval node may ask for (ADR 0075)."""

MAX_WAIT_SECONDS = 31_536_000
"""The longest a wait node may wait: a year of seconds (ADR 0078)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ActionDescriptorV1:
    """What an action node runs: a registered handler by name, with its arguments."""

    name: Annotated[str, Text(1)]
    """The registered action to run (`GET /v1/actions` lists them); for a task node, the topic
    workers claim."""
    fingerprint: Annotated[str, Text(1)]
    """The action's version as the graph author pins it, such as `set/1`; it is written into the
    audit record."""
    arguments: dict[str, Any] = attrs.field(factory=dict)
    """The action's arguments, as the action defines them."""
    capability_refs: tuple[Capability, ...] = ()
    """What the action may do (network, files, processes ...); a deployment policy can deny any of
    them."""
    contract_ref: str | None = None
    """The name of a registered contract whose JSON Schema an approver's edited arguments must
    satisfy."""
    identity_configuration: tuple[str, ...] = ()
    """Names of the identity settings the action declares it uses."""
    requires_approval: bool = False
    """Whether a person must approve the action's arguments before it runs."""
    side_effect: SideEffectClass = SideEffectClass.UNKNOWN
    """How the action changes the world, as the author declares it."""
    tool_call_id: Annotated[str, Text(1, 256, trimmed=True)] | None = None
    """The id of the model's tool call this action answers, when it answers one."""


@allow_extras
@attrs.frozen(kw_only=True, field_transformer=checked)
class Condition:
    """An edge rule in CEL over ``state`` (docs/decisions/0003-conditions-in-cel.md)."""

    expression: Annotated[str, Text(1, 4096)]
    """A CEL expression over `state`, the run state; the edge is taken when it is true."""
    branch_rule: Literal["all", "any", "expression"] = "expression"
    """`expression`: evaluate the expression once over `state`; `all` or `any`: once per entry of
    `operand_refs` with `operand` bound to its value, and take the edge when all (any) hold."""
    allow_cycle_traversal: bool = False
    """Whether the edge may close a cycle in the graph."""
    operand_refs: tuple[DottedPath, ...] = ()
    """Dotted paths into the run state whose values `all` and `any` bind to `operand` in turn."""
    metadata: dict[str, Any] = attrs.field(factory=dict)
    """Free-form notes kept with the condition."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConstantMappingOperation:
    """Set ``target_path`` to a fixed ``value``, ignoring the input."""

    target_path: DottedPath
    """The dotted path in the run state to write."""
    value: Any
    """The value to write there."""
    operation: Literal["constant"] = "constant"
    """Always `constant`."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CopyMappingOperation:
    """Copy the value at ``source_path`` to ``target_path`` (a missing source is an error)."""

    source_path: DottedPath
    """The dotted path in the run state to read."""
    target_path: DottedPath
    """The dotted path in the run state to write."""
    operation: Literal["copy"] = "copy"
    """Always `copy`."""


MappingOperation = ConstantMappingOperation | CopyMappingOperation


@attrs.frozen(kw_only=True, field_transformer=checked)
class SubgraphCall:
    """What a ``subgraph`` node starts: a child run of ``deployment_ref`` (ADR 0046).

    ``input`` builds the child's input from the parent's state with mapping operations (a copy
    reads the parent's state, every operation writes into the child's input); left out, the
    child starts with a copy of the parent's whole state. ``capability_refs`` and
    ``requires_approval`` let the policy guard and approval gating act on the node as on an
    action node, before the child starts.
    """

    deployment_ref: Annotated[str, Text(1, 512)]
    """The deployment the child run starts on."""
    input: tuple[MappingOperation, ...] | None = None
    """Mapping operations that build the child's input from the parent's state; left out, the child
    gets a copy of the whole state."""
    capability_refs: tuple[Capability, ...] = ()
    """What the child run may do; a deployment policy can deny any of them before it starts."""
    requires_approval: bool = False
    """Whether a person must approve before the child run starts."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class NodeDefinition:
    """One node. Which optional fields apply depends on ``kind`` (checked by validation)."""

    id: Identifier
    """The node's id, unique within the graph."""
    kind: NodeKind
    """What the node does; it decides which of the other fields apply."""
    action: ActionDescriptorV1 | None = None
    """What an action or task node runs."""
    summary: Annotated[str, Text(1, 1000)] | None = None
    """What the approver is asked, in a line (approval nodes)."""
    rationale: Annotated[str, Text(1, 4000)] | None = None
    """Why a person decides here (approval nodes)."""
    allowed_actions: tuple[ApprovalDecision, ...] | None = None
    """The decisions the approver may take; all of them when left out."""
    resolution_schema_ref: str | None = None
    """A contract the edited payload of an `edit_and_approve` decision must satisfy."""
    sla_seconds: Annotated[int, Range(1, 31_536_000)] | None = None
    """How long the approval may stay pending before it is escalated."""
    min_approvals: Annotated[int, Range(1, MAX_MIN_APPROVALS)] | None = None
    """How many distinct people must approve before the run moves on (1 to 10; 1 when left
    out); one rejection rejects."""
    forbid_self_approval: bool | None = None
    """Whether the person who started the run is refused as its approver (four eyes; false when
    left out)."""
    approver_roles: tuple[ServiceRole, ...] | None = None
    """Roles whose holders may resolve the approval; with `approver_subjects`, either admits.
    Both left out: anyone allowed to resolve approvals may."""
    approver_subjects: tuple[Subject, ...] | None = None
    """Subjects who may resolve the approval; with `approver_roles`, either admits."""
    operations: tuple[MappingOperation, ...] = ()
    """The constant and copy operations a mapping node applies, in order."""
    target_path: DottedPath | None = None
    """Where in the run state the value an interrupt is resumed with (or a child run's output) is
    written."""
    prompt: Annotated[str, Text(1, 4000)] | None = None
    """What the person resuming an interrupt is asked."""
    lock_seconds: Annotated[int, Range(1, 3600)] | None = None
    """How long a worker holds a claimed task before another may claim it (task nodes)."""
    max_attempts: Annotated[int, Range(1, 100)] | None = None
    """How many times a task is handed out before the run fails (task nodes)."""
    subgraph: SubgraphCall | None = None
    """The child run a subgraph node starts."""
    seconds: Annotated[int, Range(1, MAX_WAIT_SECONDS)] | None = None
    """How long a wait node waits, in seconds (1 to 31,536,000, a year)."""
    until_path: DottedPath | None = None
    """Where in the run state a wait node finds the RFC 3339 time (with an offset) it waits until;
    instead of `seconds`."""

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        """Capabilities the node would exercise (those its action or its subgraph call declares)."""
        if self.subgraph is not None:
            return self.subgraph.capability_refs
        return self.action.capability_refs if self.action is not None else ()

    @property
    def asks_approval(self) -> bool:
        """Whether the node opens an approval: an approval node, or a gated one."""
        return self.kind is NodeKind.APPROVAL or self.gated

    @property
    def gated(self) -> bool:
        """Whether an approval must grant the node's action or child run before it starts."""
        if self.subgraph is not None:
            return self.subgraph.requires_approval
        return self.action is not None and self.action.requires_approval


@attrs.frozen(kw_only=True, field_transformer=checked)
class EdgeDefinition:
    """A directed edge, taken when its condition holds (no condition: always)."""

    source: Identifier
    """The id of the node the edge leaves."""
    target: Identifier
    """The id of the node the edge enters."""
    condition: Condition | None = None
    """When the edge is taken; always when left out."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphDefinition:
    """A workflow graph as registered: ``POST /v1/graphs`` body or the Python builder's result."""

    graph_id: Annotated[str, Text(1, 200, pattern=IDENTIFIER)]
    """The graph's id within the tenant; registering a changed definition under it makes a new
    version."""
    entry: Identifier
    """The id of the node a run starts at."""
    nodes: Annotated[tuple[NodeDefinition, ...], Items(1, 1000)]
    """The graph's nodes."""
    edges: Annotated[tuple[EdgeDefinition, ...], Items(0, 5000)] = ()
    """The directed edges between the nodes."""
    max_steps: Annotated[int, Range(1, MAX_STEPS_LIMIT)] = DEFAULT_MAX_STEPS
    """How many node attempts a run may make before it fails."""

    def node(self, node_id: str) -> NodeDefinition:
        """Return the node named ``node_id`` (KeyError when absent)."""
        for node in self.nodes:
            if node.id == node_id:
                return node
        raise KeyError(node_id)

    def outgoing(self, node_id: str) -> tuple[EdgeDefinition, ...]:
        """Edges leaving ``node_id``, in definition order."""
        return tuple(edge for edge in self.edges if edge.source == node_id)


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphVersion:
    """An immutable, numbered version of a tenant's graph with its content digest."""

    tenant_id: str
    graph_id: str
    version: Annotated[int, Range(1)]
    """The version number, from 1."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    definition: GraphDefinition
    """The definition as registered."""
    created_at: Annotated[datetime, AwareUtc()]
    """When the version was registered."""

    @property
    def ref(self) -> str:
        """``<graph_id>@<version>``, the graph_version_ref of runs and deployments."""
        return version_ref(self.graph_id, self.version)


def version_ref(graph_id: str, version: int) -> str:
    """Build a graph_version_ref."""
    return f"{graph_id}@{version}"


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphRegistration:
    """Answer to a graph registration: which version the definition is."""

    graph_id: str
    version: int
    """The version the definition is: a new one, or the existing one it repeats."""
    digest: str
    """SHA-256 of the definition's canonical JSON, as 64 hex digits."""
    created: bool
    """Whether this registration made a new version (false: the same definition was registered
    before)."""


LATER_NODE_FIELDS = (
    "lock_seconds",
    "max_attempts",
    "subgraph",
    "min_approvals",
    "forbid_self_approval",
    "approver_roles",
    "approver_subjects",
    "seconds",
    "until_path",
)
"""Node fields added after graphs were first stored; they count in the digest only when set."""


def graph_digest(definition: GraphDefinition) -> str:
    """The content digest of a definition: SHA-256 over its canonical JSON (defaults included).

    A node field of :data:`LATER_NODE_FIELDS` left unset is left out, so every definition stored
    before the field existed keeps its digest (and registering it again is still a repeat).
    """
    data = unstructure(definition)
    for node in data["nodes"]:
        for field in LATER_NODE_FIELDS:
            if node.get(field) is None:
                node.pop(field, None)
    return json_digest(data)
