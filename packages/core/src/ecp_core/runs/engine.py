"""One node attempt at a time: the graph walk, the policy guard and the pause points.

Every method works inside a caller's unit of work, so a node attempt's state change, its audit
record and the chain head commit together.
"""

from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import attrs

from ecp_core.approvals.model import ALL_DECISIONS, ApprovalActionRecord, ApprovalRecord
from ecp_core.canonical import canonical_json, thaw
from ecp_core.errors import EcpError
from ecp_core.graphs.conditions import ConditionError, condition_holds
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.graphs.paths import get_path, has_path, set_path
from ecp_core.policies.guard import evaluate_policy
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.runs import model as m
from ecp_core.runs.actions import ActionContext, ActionRegistry, ActionResult
from ecp_core.runs.audit_writer import AttemptRecord, AuditWriter
from ecp_core.runs.model import ApprovalPausedState, FailureState, Run
from ecp_core.runs.state_machine import transition
from ecp_core.types import AttemptStatus, NodeKind, RunStatus

if TYPE_CHECKING:
    from ecp_core.runs.events import LifecycleEvents


class NoMatchingEdge(EcpError):
    """A node has exits but none of their conditions holds."""

    code = m.NO_MATCHING_EDGE


def next_node(graph: GraphDefinition, node_id: str, state: Mapping[str, Any]) -> str | None:
    """The target of the first exit whose condition holds; None when the node has no exits."""
    exits = graph.outgoing(node_id)
    if not exits:
        return None
    for edge in exits:
        if condition_holds(edge.condition, state):
            return edge.target
    raise NoMatchingEdge(f"no exit of node {node_id!r} has a condition that holds")


def _checked_result(name: str, returned: object) -> ActionResult:
    """A handler's answer as detached, canonical JSON; TypeError or NotCanonicalizable if not."""
    result = returned if isinstance(returned, ActionResult) else ActionResult(output=returned)  # type: ignore[arg-type]
    if not isinstance(result.output, Mapping):
        msg = f"action {name!r} returned {type(result.output).__name__}, not an object"
        raise TypeError(msg)
    for text in (result.stdout, result.stderr):
        if text is not None and not isinstance(text, str):
            msg = f"action {name!r} returned stdout or stderr that is not text"
            raise TypeError(msg)
    detached = ActionResult(
        output=thaw(result.output),
        stdout=result.stdout,
        stderr=result.stderr,
        tool_calls=thaw(result.tool_calls),
        memory_interactions=thaw(result.memory_interactions),
        validation_results=thaw(result.validation_results),
    )
    canonical_json(
        [
            detached.output,
            detached.stdout,
            detached.stderr,
            detached.tool_calls,
            detached.memory_interactions,
            detached.validation_results,
        ]
    )
    return detached


def _error(exc: BaseException) -> dict[str, str]:
    return {"type": type(exc).__name__, "message": str(exc)}


class RunEngine:
    """Performs node attempts and writes their audit records."""

    def __init__(
        self,
        clock: Clock,
        ids: IdFactory,
        writer: AuditWriter,
        actions: ActionRegistry,
        events: "LifecycleEvents | None" = None,
    ) -> None:
        """Wire the engine; ``events`` queues run-lifecycle webhooks in each attempt's transaction."""
        self._clock = clock
        self._ids = ids
        self._writer = writer
        self._actions = actions
        self.events = events

    @property
    def writer(self) -> AuditWriter:
        """The audit writer every attempt goes through."""
        return self._writer

    # -- finishing an attempt ------------------------------------------------------------------

    def _running(self, run: Run) -> Run:
        """A waiting run moves back to RUNNING before its next attempt changes it further."""
        if run.status is RunStatus.RUNNING:
            return run
        return transition(run, RunStatus.RUNNING, self._clock.now())

    def fail(
        self, uow: RunsUnit, run: Run, attempt: AttemptRecord, reason: str, message: str
    ) -> Run:
        """Write ``attempt`` and end the run FAILED with ``reason``."""
        run = self._writer.write(uow, self._running(run), attempt)
        failure = FailureState(reason=reason, node_id=attempt.node_id, message=message)
        failed = transition(
            run,
            RunStatus.FAILED,
            self._clock.now(),
            failure_state=failure,
            paused=None,
            pending_approval_ids=(),
            approved_action=None,
        )
        if self.events is not None:
            self.events.run_ended(uow, failed)
        return failed

    def stay(self, uow: RunsUnit, run: Run, attempt: AttemptRecord, **changes: Any) -> Run:  # noqa: ANN401
        """Write ``attempt`` and keep the run RUNNING at the same node (a granted gate)."""
        metadata = {**(attempt.execution_metadata or {}), "next_node_id": attempt.node_id}
        run = self._writer.write(
            uow, self._running(run), attrs.evolve(attempt, execution_metadata=metadata)
        )
        return attrs.evolve(
            run, paused=None, pending_approval_ids=(), updated_at=self._clock.now(), **changes
        )

    def move_on(
        self,
        uow: RunsUnit,
        run: Run,
        graph: GraphDefinition,
        attempt: AttemptRecord,
        state: dict[str, Any],
    ) -> Run:
        """Follow the exits with the new ``state``, write ``attempt``, then advance or finish."""
        try:
            target = next_node(graph, attempt.node_id, state)
        except (ConditionError, NoMatchingEdge) as exc:
            failed = attrs.evolve(attempt, status=AttemptStatus.FAILED, error=_error(exc))
            return self.fail(uow, run, failed, exc.code, exc.detail)
        metadata = {**(attempt.execution_metadata or {}), "next_node_id": target}
        run = self._writer.write(
            uow, self._running(run), attrs.evolve(attempt, execution_metadata=metadata)
        )
        now = self._clock.now()
        common: dict[str, Any] = {
            "state": state,
            "paused": None,
            "pending_approval_ids": (),
            "approved_action": None,
        }
        if target is None:
            done = transition(
                run, RunStatus.COMPLETED, now, next_node_id=None, output=state, **common
            )
            if self.events is not None:
                self.events.run_ended(uow, done)
            return done
        return attrs.evolve(run, next_node_id=target, updated_at=now, **common)

    # -- one attempt -----------------------------------------------------------------------------

    def attempt(self, uow: RunsUnit, run: Run, graph: GraphDefinition) -> Run:
        """Attempt ``run``'s next node (the run must be RUNNING)."""
        node = graph.node(run.next_node_id or graph.entry)
        run = attrs.evolve(run, steps=run.steps + 1)
        base = {"node_kind": str(node.kind), "step": run.steps}
        if run.steps > graph.max_steps:
            record = AttemptRecord(
                node_id=node.id, status=AttemptStatus.FAILED, execution_metadata=base
            )
            return self.fail(
                uow, run, record, m.STEP_LIMIT_EXCEEDED, f"more than {graph.max_steps} steps"
            )
        enforcement = evaluate_policy(uow.policies.get(run.tenant_id, run.deployment_ref), node)
        if enforcement is not None:
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.REJECTED,
                input_snapshot=self._node_input(node),
                execution_metadata={**base, "enforcement": enforcement.as_metadata()},
            )
            return self.fail(uow, run, record, m.POLICY_VIOLATION, enforcement.reason)
        if node.kind is NodeKind.ACTION:
            return self._action(uow, run, graph, node, base)
        if node.kind is NodeKind.APPROVAL:
            return self.request_approval(uow, run, node, dict(run.state), base)
        if node.kind is NodeKind.INTERRUPT:
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.WAITING_INTERRUPT,
                execution_metadata={**base, "prompt": node.prompt},
            )
            run = self._writer.write(uow, run, record)
            return transition(
                run, RunStatus.WAITING_INTERRUPT, self._clock.now(), next_node_id=node.id
            )
        if node.kind is NodeKind.MAPPING:
            return self._mapping(uow, run, graph, node, base)
        record = AttemptRecord(
            node_id=node.id, status=AttemptStatus.SUCCEEDED, execution_metadata=base
        )
        return self.move_on(uow, run, graph, record, dict(run.state))

    @staticmethod
    def _node_input(node: NodeDefinition) -> Any:  # noqa: ANN401
        return None if node.action is None else thaw(node.action.arguments)

    def _action(
        self,
        uow: RunsUnit,
        run: Run,
        graph: GraphDefinition,
        node: NodeDefinition,
        base: dict[str, Any],
    ) -> Run:
        action = node.action
        assert action is not None  # noqa: S101 - graph validation guarantees it
        metadata = {
            **base,
            "action": action.name,
            "fingerprint": action.fingerprint,
            "capabilities": [str(c) for c in action.capability_refs],
            "side_effect": str(action.side_effect),
        }
        arguments = thaw(action.arguments)
        approved = run.approved_action
        if action.requires_approval:
            if approved is None or approved.node_id != node.id:
                return self.request_approval(uow, run, node, arguments, metadata)
            arguments = thaw(approved.arguments)
            metadata["approval_id"] = approved.approval_id
        tool_calls = (
            None
            if action.tool_call_id is None
            else [
                {"tool_call_id": action.tool_call_id, "name": action.name, "arguments": arguments}
            ]
        )
        draft = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.SUCCEEDED,
            input_snapshot=arguments,
            execution_metadata=metadata,
            tool_calls=tool_calls,
        )
        handler = self._actions.get(action.name)
        if handler is None:
            failed = attrs.evolve(
                draft,
                status=AttemptStatus.FAILED,
                error={"type": "UnknownAction", "message": f"no handler for {action.name!r}"},
            )
            return self.fail(
                uow, run, failed, m.ACTION_ERROR, f"no handler for action {action.name!r}"
            )
        context = ActionContext(
            run_id=run.run_id,
            tenant_id=run.tenant_id,
            node_id=node.id,
            descriptor=action,
            arguments=thaw(arguments),
            state=thaw(run.state),
        )
        try:
            result = _checked_result(action.name, handler(context))
        except Exception as exc:  # noqa: BLE001 - any handler failure ends the run, recorded
            failed = attrs.evolve(draft, status=AttemptStatus.FAILED, error=_error(exc))
            return self.fail(
                uow, run, failed, m.ACTION_ERROR, f"action {action.name!r} failed: {exc}"
            )
        done = attrs.evolve(
            draft,
            output_snapshot=result.output,
            stdout=result.stdout,
            stderr=result.stderr,
            tool_calls=result.tool_calls if result.tool_calls is not None else tool_calls,
            memory_interactions=result.memory_interactions,
            validation_results=result.validation_results,
        )
        return self.move_on(uow, run, graph, done, {**run.state, **thaw(result.output)})

    def _mapping(
        self,
        uow: RunsUnit,
        run: Run,
        graph: GraphDefinition,
        node: NodeDefinition,
        base: dict[str, Any],
    ) -> Run:
        state = dict(run.state)
        written: dict[str, Any] = {}
        for operation in node.operations:
            if operation.operation == "constant":
                value = thaw(operation.value)
            elif has_path(state, operation.source_path):
                value = get_path(state, operation.source_path)
            else:
                record = AttemptRecord(
                    node_id=node.id,
                    status=AttemptStatus.FAILED,
                    execution_metadata=base,
                    error={
                        "type": "MissingSource",
                        "message": f"no value at {operation.source_path!r}",
                    },
                )
                return self.fail(
                    uow, run, record, m.MAPPING_ERROR, f"no value at {operation.source_path!r}"
                )
            state = set_path(state, operation.target_path, value)
            written[operation.target_path] = value
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.SUCCEEDED,
            input_snapshot=[
                {"operation": op.operation, "target_path": op.target_path} for op in node.operations
            ],
            output_snapshot=written,
            execution_metadata=base,
        )
        return self.move_on(uow, run, graph, record, state)

    # -- pause points ----------------------------------------------------------------------------

    def request_approval(
        self,
        uow: RunsUnit,
        run: Run,
        node: NodeDefinition,
        payload: dict[str, Any],
        metadata: dict[str, Any],
        *,
        escalated_from: ApprovalRecord | None = None,
    ) -> Run:
        """Create a pending approval for ``node`` with ``payload`` and pause the run on it."""
        now = self._clock.now()
        approval = ApprovalRecord(
            approval_id=self._ids.new_id(),
            run_id=run.run_id,
            node_id=node.id,
            graph_version_ref=run.graph_version_ref,
            deployment_ref=run.deployment_ref,
            summary=node.summary
            or f"Approve action {node.action.name if node.action else node.id}",
            rationale=node.rationale or "The action requires approval before it runs",
            proposed_payload=payload,
            allowed_actions=node.allowed_actions or ALL_DECISIONS,
            resolution_schema_ref=node.resolution_schema_ref,
            sla_deadline=None
            if node.sla_seconds is None
            else now + timedelta(seconds=node.sla_seconds),
            escalated_from_id=None if escalated_from is None else escalated_from.approval_id,
            thread_id=run.thread_id,
            tenant_id=run.tenant_id,
            created_at=now,
            updated_at=now,
        )
        uow.approvals.add(approval)
        uow.approvals.add_action(
            ApprovalActionRecord(
                approval_id=approval.approval_id,
                action="requested",
                occurred_at=now,
                tenant_id=run.tenant_id,
                metadata={}
                if escalated_from is None
                else {"escalated_from_id": escalated_from.approval_id},
            )
        )
        paused = ApprovalPausedState(
            node_id=node.id, approval_id=approval.approval_id, input_payload=payload
        )
        if escalated_from is not None:
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.ESCALATED,
                input_snapshot={"escalated_from_id": escalated_from.approval_id},
                output_snapshot={"approval_id": approval.approval_id},
                execution_metadata=metadata,
            )
            run = self._writer.write(uow, run, record)
            return attrs.evolve(
                run, paused=paused, pending_approval_ids=(approval.approval_id,), updated_at=now
            )
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.WAITING_APPROVAL,
            input_snapshot=payload,
            output_snapshot={"approval_id": approval.approval_id},
            execution_metadata=metadata,
        )
        run = self._writer.write(uow, run, record)
        waiting = transition(
            run,
            RunStatus.WAITING_APPROVAL,
            now,
            next_node_id=node.id,
            paused=paused,
            pending_approval_ids=(approval.approval_id,),
        )
        if self.events is not None:
            self.events.waiting_approval(uow, waiting, approval)
        return waiting
