"""Structural rules a graph must satisfy before it can be registered."""

from collections.abc import Collection, Iterator

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.graphs.conditions import ConditionError, compile_expression
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.types import NodeKind


def _node_errors(index: int, node: NodeDefinition) -> Iterator[FieldError]:
    here: tuple[str | int, ...] = ("nodes", index)

    def need(field: str, present: bool) -> Iterator[FieldError]:  # noqa: FBT001
        if not present:
            yield FieldError(loc=(*here, field), msg=f"required for a {node.kind} node")

    def forbid(field: str, present: bool) -> Iterator[FieldError]:  # noqa: FBT001
        if present:
            yield FieldError(loc=(*here, field), msg=f"not allowed on a {node.kind} node")

    kind = node.kind
    yield from (need if kind is NodeKind.ACTION else forbid)("action", node.action is not None)
    yield from (need if kind is NodeKind.MAPPING else forbid)("operations", bool(node.operations))
    approval = kind is NodeKind.APPROVAL
    yield from (need if approval else forbid)("summary", node.summary is not None)
    yield from (need if approval else forbid)("rationale", node.rationale is not None)
    for field in ("allowed_actions", "resolution_schema_ref", "sla_seconds"):
        if not approval and not (kind is NodeKind.ACTION and node.action and node.action.requires_approval):
            yield from forbid(field, getattr(node, field) is not None)
    if node.allowed_actions is not None and not node.allowed_actions:
        yield FieldError(loc=(*here, "allowed_actions"), msg="must name at least one decision")
    interrupt = kind is NodeKind.INTERRUPT
    yield from ([] if interrupt else forbid("target_path", node.target_path is not None))
    yield from ([] if interrupt else forbid("prompt", node.prompt is not None))


def _cycle_errors(graph: GraphDefinition) -> Iterator[FieldError]:
    """A cycle is allowed only when one of its edges sets ``allow_cycle_traversal``."""
    successors: dict[str, list[str]] = {node.id: [] for node in graph.nodes}
    for edge in graph.edges:
        guarded = edge.condition is not None and edge.condition.allow_cycle_traversal
        if not guarded and edge.source in successors and edge.target in successors:
            successors[edge.source].append(edge.target)
    white, grey, black = 0, 1, 2
    colour = dict.fromkeys(successors, white)
    for start in successors:
        if colour[start] != white:
            continue
        stack = [(start, iter(successors[start]))]
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


def graph_errors(
    graph: GraphDefinition, known_actions: Collection[str] | None = None
) -> list[FieldError]:
    """Every rule the graph breaks, each located in the definition."""
    errors: list[FieldError] = []
    ids = [node.id for node in graph.nodes]
    seen: set[str] = set()
    for index, node_id in enumerate(ids):
        if node_id in seen:
            errors.append(FieldError(loc=("nodes", index, "id"), msg=f"duplicate node id {node_id!r}"))
        seen.add(node_id)
    if graph.entry not in seen:
        errors.append(FieldError(loc=("entry",), msg=f"no node {graph.entry!r}"))
    for index, node in enumerate(graph.nodes):
        errors.extend(_node_errors(index, node))
        if known_actions is not None and node.action and node.action.name not in known_actions:
            errors.append(
                FieldError(loc=("nodes", index, "action", "name"), msg="no such registered action")
            )
    for index, edge in enumerate(graph.edges):
        for end in ("source", "target"):
            if getattr(edge, end) not in seen:
                errors.append(FieldError(loc=("edges", index, end), msg="no such node"))
        if edge.source in seen and graph.node(edge.source).kind is NodeKind.END:
            errors.append(FieldError(loc=("edges", index, "source"), msg="an end node has no exits"))
        if edge.condition is not None:
            try:
                compile_expression(edge.condition.expression)
            except ConditionError as exc:
                errors.append(FieldError(loc=("edges", index, "condition", "expression"), msg=exc.detail))
    if errors:
        return errors
    errors.extend(_cycle_errors(graph))
    unreachable = [node_id for node_id in ids if node_id not in _reachable(graph)]
    errors.extend(
        FieldError(loc=("nodes", ids.index(node_id), "id"), msg="not reachable from the entry")
        for node_id in unreachable
    )
    return errors


def validate_graph(graph: GraphDefinition, known_actions: Collection[str] | None = None) -> None:
    """Raise ValidationFailed listing every rule ``graph`` breaks."""
    errors = graph_errors(graph, known_actions)
    if errors:
        raise ValidationFailed(f"graph {graph.graph_id!r} is invalid", errors=errors)
