"""A Python builder that produces the same GraphDefinition as the declarative JSON."""

import itertools
from typing import Any, Self

import attrs

from ecp_core.graphs.definition import (
    DEFAULT_MAX_STEPS,
    ActionDescriptorV1,
    Condition,
    EdgeDefinition,
    GraphDefinition,
    MappingOperation,
    NodeDefinition,
    SubgraphCall,
)
from ecp_core.graphs.validation import validate_graph
from ecp_core.types import ApprovalDecision, Capability, NodeKind, ServiceRole


@attrs.frozen(kw_only=True)
class ApprovalRules:
    """The approval rules of a node that asks for approval (ADR 0075), as the builder takes them.

    ``min_approvals`` distinct people must approve (1 when None); ``forbid_self_approval``
    refuses the run's starter; ``approver_roles`` and ``approver_subjects`` name who may resolve
    (anyone allowed to resolve approvals when both are None).
    """

    min_approvals: int | None = None
    forbid_self_approval: bool | None = None
    approver_roles: tuple[ServiceRole, ...] | None = None
    approver_subjects: tuple[str, ...] | None = None


def _rule_fields(rules: ApprovalRules | None) -> dict[str, Any]:
    """The node fields of ``rules`` (none: the defaults)."""
    return {} if rules is None else attrs.asdict(rules, recurse=False)


class GraphBuilder:
    """Collects nodes and edges, then :meth:`build` validates and freezes them.

    The first node added is the entry unless :meth:`entry` names another.
    """

    def __init__(self, graph_id: str, *, max_steps: int = DEFAULT_MAX_STEPS) -> None:
        """Start an empty graph called ``graph_id``."""
        self._graph_id = graph_id
        self._max_steps = max_steps
        self._entry: str | None = None
        self._nodes: list[NodeDefinition] = []
        self._edges: list[EdgeDefinition] = []

    def entry(self, node_id: str) -> Self:
        """Make ``node_id`` the entry node."""
        self._entry = node_id
        return self

    def node(self, node: NodeDefinition) -> Self:
        """Add a ready-made node."""
        self._nodes.append(node)
        return self

    def action(
        self,
        node_id: str,
        name: str,
        *,
        fingerprint: str | None = None,
        arguments: dict[str, Any] | None = None,
        capabilities: tuple[Capability, ...] = (),
        requires_approval: bool = False,
        allowed_actions: tuple[ApprovalDecision, ...] | None = None,
        sla_seconds: int | None = None,
        resolution_schema_ref: str | None = None,
        rules: ApprovalRules | None = None,
        **descriptor: Any,  # noqa: ANN401 - further ActionDescriptorV1 fields
    ) -> Self:
        """Add an action node running the handler registered as ``name``.

        The approval options (and ``rules``) apply when ``requires_approval`` gates the action.
        """
        action = ActionDescriptorV1(
            name=name,
            fingerprint=fingerprint or f"{name}/1",
            arguments=arguments or {},
            capability_refs=capabilities,
            requires_approval=requires_approval,
            **descriptor,
        )
        node = NodeDefinition(
            id=node_id,
            kind=NodeKind.ACTION,
            action=action,
            allowed_actions=allowed_actions,
            sla_seconds=sla_seconds,
            resolution_schema_ref=resolution_schema_ref,
            **_rule_fields(rules),
        )
        return self.node(node)

    def task(
        self,
        node_id: str,
        topic: str,
        *,
        lock_seconds: int | None = None,
        max_attempts: int | None = None,
        **options: Any,  # noqa: ANN401 - the options of :meth:`action`
    ) -> Self:
        """Add a task node: its action, named ``topic``, is offered to external workers.

        ``lock_seconds`` and ``max_attempts`` default to 60 and 3 when the run offers the task.
        """
        self.action(node_id, topic, **options)
        action_node = self._nodes.pop()
        task = attrs.evolve(
            action_node, kind=NodeKind.TASK, lock_seconds=lock_seconds, max_attempts=max_attempts
        )
        return self.node(task)

    def approval(
        self,
        node_id: str,
        *,
        summary: str,
        rationale: str,
        allowed_actions: tuple[ApprovalDecision, ...] | None = None,
        sla_seconds: int | None = None,
        resolution_schema_ref: str | None = None,
        rules: ApprovalRules | None = None,
    ) -> Self:
        """Add a human-approval node; ``rules`` say who may approve and how many must."""
        return self.node(
            NodeDefinition(
                id=node_id,
                kind=NodeKind.APPROVAL,
                summary=summary,
                rationale=rationale,
                allowed_actions=allowed_actions,
                sla_seconds=sla_seconds,
                resolution_schema_ref=resolution_schema_ref,
                **_rule_fields(rules),
            )
        )

    def interrupt(
        self, node_id: str, *, target_path: str | None = None, prompt: str | None = None
    ) -> Self:
        """Add a node that pauses until the run is resumed with a value."""
        return self.node(
            NodeDefinition(
                id=node_id, kind=NodeKind.INTERRUPT, target_path=target_path, prompt=prompt
            )
        )

    def mapping(self, node_id: str, *operations: MappingOperation) -> Self:
        """Add a node that writes constants or copies values within the state."""
        return self.node(NodeDefinition(id=node_id, kind=NodeKind.MAPPING, operations=operations))

    def subgraph(
        self,
        node_id: str,
        deployment_ref: str,
        *,
        input: tuple[MappingOperation, ...] | None = None,  # noqa: A002 - the wire name
        target_path: str | None = None,
        capabilities: tuple[Capability, ...] = (),
        requires_approval: bool = False,
        rules: ApprovalRules | None = None,
    ) -> Self:
        """Add a node that starts a child run of ``deployment_ref`` and waits for it to end.

        ``input`` builds the child's input (None: the parent's whole state); the child's output
        is written at ``target_path`` (by default the node id). ``rules`` apply when
        ``requires_approval`` gates the child's start.
        """
        call = SubgraphCall(
            deployment_ref=deployment_ref,
            input=input,
            capability_refs=capabilities,
            requires_approval=requires_approval,
        )
        return self.node(
            NodeDefinition(
                id=node_id,
                kind=NodeKind.SUBGRAPH,
                subgraph=call,
                target_path=target_path,
                **_rule_fields(rules),
            )
        )

    def wait(
        self, node_id: str, *, seconds: int | None = None, until_path: str | None = None
    ) -> Self:
        """Add a node that waits ``seconds``, or until the RFC 3339 time at ``until_path``."""
        return self.node(
            NodeDefinition(id=node_id, kind=NodeKind.WAIT, seconds=seconds, until_path=until_path)
        )

    def end(self, node_id: str = "end") -> Self:
        """Add an end node: reaching it completes the run with the state as output."""
        return self.node(NodeDefinition(id=node_id, kind=NodeKind.END))

    def edge(self, source: str, target: str, *, when: str | Condition | None = None) -> Self:
        """Connect ``source`` to ``target``, optionally guarded by a CEL expression."""
        condition = Condition(expression=when) if isinstance(when, str) else when
        self._edges.append(EdgeDefinition(source=source, target=target, condition=condition))
        return self

    def chain(self, *node_ids: str) -> Self:
        """Connect each named node to the next, unconditionally."""
        for source, target in itertools.pairwise(node_ids):
            self.edge(source, target)
        return self

    def build(self) -> GraphDefinition:
        """Validate and return the immutable definition."""
        entry = self._entry or (self._nodes[0].id if self._nodes else "")
        graph = GraphDefinition(
            graph_id=self._graph_id,
            entry=entry,
            nodes=tuple(self._nodes),
            edges=tuple(self._edges),
            max_steps=self._max_steps,
        )
        validate_graph(graph)
        return graph
