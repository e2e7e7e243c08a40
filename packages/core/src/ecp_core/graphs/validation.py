"""Structural rules a graph must satisfy before it can be registered."""

from collections.abc import Collection, Iterator

from ecp_core.errors import FieldError, UnknownAction, ValidationFailed
from ecp_core.graphs.conditions import ConditionError, compile_expression
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.permissions import Permission, permissions_of
from ecp_core.types import NodeKind

APPROVAL_RULES = ("min_approvals", "forbid_self_approval", "approver_roles", "approver_subjects")
"""The approval rules of a node (ADR 0075): only a node that opens an approval may set them."""

WAIT_FIELDS = ("seconds", "until_path")
"""How long a wait node waits (ADR 0078): only a wait node sets them, and exactly one."""


def _rule_errors(here: tuple[str | int, ...], node: NodeDefinition) -> Iterator[FieldError]:
    """Who may approve, and how many must: each list names someone, each role may resolve."""
    if not node.asks_approval:
        for field in APPROVAL_RULES:
            if getattr(node, field) is not None:
                msg = f"only a node that asks for approval may set it, not a {node.kind} node"
                yield FieldError(loc=(*here, field), msg=msg)
        return
    for field in ("approver_roles", "approver_subjects"):
        if getattr(node, field) == ():
            yield FieldError(loc=(*here, field), msg="must name at least one, or be left out")
    for index, role in enumerate(node.approver_roles or ()):
        if Permission.APPROVAL_RESOLVE not in permissions_of((role,)):
            msg = f"role {role.value!r} may not resolve approvals"
            yield FieldError(loc=(*here, "approver_roles", index), msg=msg)
    subjects = node.approver_subjects
    needed = node.min_approvals or 1
    if subjects and node.approver_roles is None and len(set(subjects)) < needed:
        msg = f"names {len(set(subjects))} approvers, fewer than min_approvals"
        yield FieldError(loc=(*here, "min_approvals"), msg=msg)


def _node_errors(index: int, node: NodeDefinition) -> Iterator[FieldError]:
    here: tuple[str | int, ...] = ("nodes", index)

    def need(field: str, present: bool) -> Iterator[FieldError]:  # noqa: FBT001
        if not present:
            yield FieldError(loc=(*here, field), msg=f"required for a {node.kind} node")

    def forbid(field: str, present: bool) -> Iterator[FieldError]:  # noqa: FBT001
        if present:
            yield FieldError(loc=(*here, field), msg=f"not allowed on a {node.kind} node")

    kind = node.kind
    runs_action = kind in (NodeKind.ACTION, NodeKind.TASK)
    yield from (need if runs_action else forbid)("action", node.action is not None)
    task = kind is NodeKind.TASK
    yield from ([] if task else forbid("lock_seconds", node.lock_seconds is not None))
    yield from ([] if task else forbid("max_attempts", node.max_attempts is not None))
    yield from (need if kind is NodeKind.MAPPING else forbid)("operations", bool(node.operations))
    approval = kind is NodeKind.APPROVAL
    yield from (need if approval else forbid)("summary", node.summary is not None)
    yield from (need if approval else forbid)("rationale", node.rationale is not None)
    subgraph = kind is NodeKind.SUBGRAPH
    yield from (need if subgraph else forbid)("subgraph", node.subgraph is not None)
    for field in ("allowed_actions", "resolution_schema_ref", "sla_seconds"):
        if not approval and not ((runs_action or subgraph) and node.gated):
            yield from forbid(field, getattr(node, field) is not None)
    if node.allowed_actions is not None and not node.allowed_actions:
        yield FieldError(loc=(*here, "allowed_actions"), msg="must name at least one decision")
    interrupt = kind is NodeKind.INTERRUPT
    writes_at_path = interrupt or subgraph
    yield from ([] if writes_at_path else forbid("target_path", node.target_path is not None))
    yield from ([] if interrupt else forbid("prompt", node.prompt is not None))
    yield from _wait_errors(here, node)
    yield from _rule_errors(here, node)


def _wait_errors(here: tuple[str | int, ...], node: NodeDefinition) -> Iterator[FieldError]:
    """A wait node waits either ``seconds`` or until the time at ``until_path``: one of them."""
    given = [field for field in WAIT_FIELDS if getattr(node, field) is not None]
    if node.kind is not NodeKind.WAIT:
        for field in given:
            yield FieldError(loc=(*here, field), msg=f"not allowed on a {node.kind} node")
    elif len(given) != 1:
        msg = "a wait node takes exactly one of seconds and until_path"
        yield FieldError(loc=(*here, given[-1] if given else "seconds"), msg=msg)


def _cycle_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    """A cycle is allowed only when one of its edges sets ``allow_cycle_traversal``."""
    successors: dict[str, list[str]] = {node.id: [] for node in graph.nodes}
    for edge in graph.edges:
        guarded = edge.condition is not None and edge.condition.allow_cycle_traversal
        if not guarded and edge.source in successors and edge.target in successors:
            successors[edge.source].append(edge.target)
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(successors, white)
    for start, children_of_start in successors.items():
        if colour[start] != white:
            continue
        stack = [(start, iter(children_of_start))]
        colour[start] = grey
        while stack:
            node_id, children = stack[-1]
            child = next(children, None)
            if child is None:
                colour[node_id] = black
                stack.pop()
            elif colour[child] == grey:
                yield FieldError(
                    loc=("edges",),
                    msg=f"cycle through {child!r} without an edge allowing cycle traversal",
                )
                return
            elif colour[child] == white:
                colour[child] = grey
                stack.append((child, iter(successors[child])))


def _reachable(graph: GraphDefinition) -> set[str]:
    seen = {graph.entry}
    frontier = [graph.entry]
    while frontier:
        current = frontier.pop()
        for edge in graph.outgoing(current):
            if edge.target not in seen:
                seen.add(edge.target)
                frontier.append(edge.target)
    return seen


def _id_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    seen: set[str] = set()
    for index, node in enumerate(graph.nodes):
        if node.id in seen:
            yield FieldError(loc=("nodes", index, "id"), msg=f"duplicate node id {node.id!r}")
        seen.add(node.id)
    if graph.entry not in seen:
        yield FieldError(loc=("entry",), msg=f"no node {graph.entry!r}")


def _nodes_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    for index, node in enumerate(graph.nodes):
        yield from _node_errors(index, node)


def _unknown_actions(
    graph: GraphDefinition, known_actions: Collection[str] | None
) -> list[tuple[int, str]]:
    """(index, name) of each action node naming an action outside ``known_actions``.

    Only ``action`` nodes run a registered handler; other kinds that carry an action (a ``task``
    node's action names a topic that workers serve) are not checked. None: every name is known.
    """
    if known_actions is None:
        return []
    return [
        (index, node.action.name)
        for index, node in enumerate(graph.nodes)
        if node.kind is NodeKind.ACTION
        and node.action is not None
        and node.action.name not in known_actions
    ]


def _unknown_action_errors(
    graph: GraphDefinition, known_actions: Collection[str] | None
) -> list[FieldError]:
    """One error at ``nodes.<i>.action.name`` for each action the service cannot run."""
    return [
        FieldError(loc=("nodes", index, "action", "name"), msg=f"no registered action {name!r}")
        for index, name in _unknown_actions(graph, known_actions)
    ]


def _edge_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    kinds = {node.id: node.kind for node in graph.nodes}
    for index, edge in enumerate(graph.edges):
        for end in ("source", "target"):
            if getattr(edge, end) not in kinds:
                yield FieldError(loc=("edges", index, end), msg="no such node")
        if kinds.get(edge.source) is NodeKind.END:
            yield FieldError(loc=("edges", index, "source"), msg="an end node has no exits")
        if edge.condition is not None:
            try:
                compile_expression(edge.condition.expression)
            except ConditionError as exc:
                loc = ("edges", index, "condition", "expression")
                yield FieldError(loc=loc, msg=exc.detail)


def _reachability_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    reachable = _reachable(graph)
    for index, node in enumerate(graph.nodes):
        if node.id not in reachable:
            yield FieldError(loc=("nodes", index, "id"), msg="not reachable from the entry")


def _structure_errors(graph: GraphDefinition) -> list[FieldError]:
    """Cycles and reachability are checked only once ids, nodes and edges are sound."""
    errors = [*_id_errors(graph), *_nodes_errors(graph), *_edge_errors(graph)]
    if errors:
        return errors
    return [*_cycle_errors(graph), *_reachability_errors(graph)]


def graph_errors(
    graph: GraphDefinition, known_actions: Collection[str] | None = None
) -> list[FieldError]:
    """Every rule the graph breaks, each located in the definition (unknown actions last)."""
    return [*_structure_errors(graph), *_unknown_action_errors(graph, known_actions)]


def validate_graph(graph: GraphDefinition, known_actions: Collection[str] | None = None) -> None:
    """Raise ValidationFailed listing every rule ``graph`` breaks.

    A graph whose only fault is naming actions outside ``known_actions`` raises UnknownAction
    (``unknown_action``); any other fault raises ValidationFailed, unknown actions listed too.
    """
    structure = _structure_errors(graph)
    unknown = _unknown_action_errors(graph, known_actions)
    if structure:
        raise ValidationFailed(
            f"graph {graph.graph_id!r} is invalid", errors=[*structure, *unknown]
        )
    if unknown:
        names = ", ".join(sorted({name for _, name in _unknown_actions(graph, known_actions)}))
        detail = f"graph {graph.graph_id!r} names actions this service cannot run: {names}"
        raise UnknownAction(detail, errors=unknown)
