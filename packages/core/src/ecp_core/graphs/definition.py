"""The declarative graph definition: nodes, edges, conditions and mapping operations."""

from datetime import datetime
from typing import Annotated, Any, Literal

import attrs

from ecp_core.canonical import json_digest
from ecp_core.constraints import AwareUtc, Items, Range, Text, allow_extras, checked
from ecp_core.types import ApprovalDecision, Capability, NodeKind, SideEffectClass
from ecp_core.wire import unstructure

IDENTIFIER = r"[A-Za-z0-9][A-Za-z0-9_.:-]*"
"""Graph and node ids: a letter or digit, then letters, digits and ``_ . : -``."""

DOTTED_PATH = r"[^.\s]+(\.[^.\s]+)*"
"""A dotted path into the run state, such as ``customer.address.city``."""

DEFAULT_MAX_STEPS = 1000
MAX_STEPS_LIMIT = 100_000

Identifier = Annotated[str, Text(1, 128, pattern=IDENTIFIER)]
DottedPath = Annotated[str, Text(1, 512, pattern=DOTTED_PATH)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ActionDescriptorV1:
    """What an action node runs: a registered handler by name, with its arguments."""

    name: Annotated[str, Text(1)]
    fingerprint: Annotated[str, Text(1)]
    arguments: dict[str, Any] = attrs.field(factory=dict)
    capability_refs: tuple[Capability, ...] = ()
    contract_ref: str | None = None
    identity_configuration: tuple[str, ...] = ()
    requires_approval: bool = False
    side_effect: SideEffectClass = SideEffectClass.UNKNOWN
    tool_call_id: Annotated[str, Text(1, 256, trimmed=True)] | None = None


@allow_extras
@attrs.frozen(kw_only=True, field_transformer=checked)
class Condition:
    """An edge rule in CEL over ``state`` (docs/decisions/0003-conditions-in-cel.md)."""

    expression: Annotated[str, Text(1, 4096)]
    branch_rule: Literal["all", "any", "expression"] = "expression"
    allow_cycle_traversal: bool = False
    operand_refs: tuple[DottedPath, ...] = ()
    metadata: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ConstantMappingOperation:
    """Set ``target_path`` to a fixed ``value``, ignoring the input."""

    target_path: DottedPath
    value: Any
    operation: Literal["constant"] = "constant"


@attrs.frozen(kw_only=True, field_transformer=checked)
class CopyMappingOperation:
    """Copy the value at ``source_path`` to ``target_path`` (a missing source is an error)."""

    source_path: DottedPath
    target_path: DottedPath
    operation: Literal["copy"] = "copy"


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
    input: tuple[MappingOperation, ...] | None = None
    capability_refs: tuple[Capability, ...] = ()
    requires_approval: bool = False


@attrs.frozen(kw_only=True, field_transformer=checked)
class NodeDefinition:
    """One node. Which optional fields apply depends on ``kind`` (checked by validation)."""

    id: Identifier
    kind: NodeKind
    action: ActionDescriptorV1 | None = None
    summary: Annotated[str, Text(1, 1000)] | None = None
    rationale: Annotated[str, Text(1, 4000)] | None = None
    allowed_actions: tuple[ApprovalDecision, ...] | None = None
    resolution_schema_ref: str | None = None
    sla_seconds: Annotated[int, Range(1, 31_536_000)] | None = None
    operations: tuple[MappingOperation, ...] = ()
    target_path: DottedPath | None = None
    prompt: Annotated[str, Text(1, 4000)] | None = None
    lock_seconds: Annotated[int, Range(1, 3600)] | None = None
    max_attempts: Annotated[int, Range(1, 100)] | None = None
    subgraph: SubgraphCall | None = None

    @property
    def capabilities(self) -> tuple[Capability, ...]:
        """Capabilities the node would exercise (those its action or its subgraph call declares)."""
        if self.subgraph is not None:
            return self.subgraph.capability_refs
        return self.action.capability_refs if self.action is not None else ()

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
    target: Identifier
    condition: Condition | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphDefinition:
    """A workflow graph as registered: ``POST /v1/graphs`` body or the Python builder's result."""

    graph_id: Annotated[str, Text(1, 200, pattern=IDENTIFIER)]
    entry: Identifier
    nodes: Annotated[tuple[NodeDefinition, ...], Items(1, 1000)]
    edges: Annotated[tuple[EdgeDefinition, ...], Items(0, 5000)] = ()
    max_steps: Annotated[int, Range(1, MAX_STEPS_LIMIT)] = DEFAULT_MAX_STEPS

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
    digest: str
    definition: GraphDefinition
    created_at: Annotated[datetime, AwareUtc()]

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
    digest: str
    created: bool


LATER_NODE_FIELDS = ("lock_seconds", "max_attempts", "subgraph")
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
