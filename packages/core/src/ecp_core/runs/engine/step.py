"""The run lifecycle as a pure step: a run, its graph and its policy in; the next run and effects out.

Nothing here reads or writes storage. A :class:`~ecp_core.runs.run.effects.Step` says what one move
of a run produced: the run after it, and the effects to apply in order inside the move's unit of
work (write an audit record, open an approval, note an approval action, emit a lifecycle event).
:mod:`ecp_core.runs.engine.lifecycle` applies them. Action handlers are the one thing a step calls out
to: running the node's action is what the step decides to do. Steps that start from an approval
(resolution, escalation) are in :mod:`ecp_core.runs.approvals.steps`.
"""

from typing import Any

from ecp_core.canonical import thaw
from ecp_core.evolve import evolve
from ecp_core.graphs.conditions import ConditionError
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.policies.guard import evaluate_policy
from ecp_core.policies.model import DeploymentPolicy
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.runs.approvals.model import ApprovalRecord
from ecp_core.runs.approvals.request import approval_step
from ecp_core.runs.children.start import (
    ChildRefusal,
    ChildTarget,
    child_input,
    start_child,
    subgraph_metadata,
)
from ecp_core.runs.children.start import subgraph_call as call_of
from ecp_core.runs.run import model as m
from ecp_core.runs.run.actions import ActionContext, ActionRegistry, checked_result
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.effects import InAttempt, StartChild, Step, WriteAudit
from ecp_core.runs.run.events import ended, started
from ecp_core.runs.run.model import FailureState, Run
from ecp_core.runs.run.operations import MissingSource, apply_operations
from ecp_core.runs.run.state_machine import transition
from ecp_core.runs.run.walk import NoMatchingEdge, action_metadata, error_of, next_node, node_input
from ecp_core.runs.tasks.effects import OfferTask
from ecp_core.runs.tasks.model import DEFAULT_LOCK_SECONDS, DEFAULT_MAX_ATTEMPTS, Task
from ecp_core.runs.timers.steps import TimerSteps
from ecp_core.types import AttemptStatus, NodeKind, RunStatus, SideEffectClass


class Stepper:
    """Decides each move of a run: attempts, approvals, resolutions, escalations, endings."""

    def __init__(self, clock: Clock, ids: IdFactory, actions: ActionRegistry) -> None:
        """``ids`` names new approvals; ``actions`` runs action nodes."""
        self._clock = clock
        self._ids = ids
        self._actions = actions
        self._timers = TimerSteps(self, clock)

    # -- ending or continuing after an attempt -----------------------------------------------

    def _running(self, run: Run) -> Run:
        """A waiting run moves back to RUNNING before its next attempt changes it further."""
        if run.status is RunStatus.RUNNING:
            return run
        return transition(run, RunStatus.RUNNING, self._clock.now())

    def fail(self, run: Run, attempt: AttemptRecord, reason: str, message: str) -> Step:
        """Write ``attempt`` and end the run FAILED with ``reason``."""
        failure = FailureState(reason=reason, node_id=attempt.node_id, message=message)
        failed = transition(
            self._running(run),
            RunStatus.FAILED,
            self._clock.now(),
            failure_state=failure,
            paused=None,
            pending_approval_ids=(),
            approved_action=None,
        )
        return Step(failed, (WriteAudit(attempt), *ended(failed)))

    def stay(self, run: Run, attempt: AttemptRecord, **changes: Any) -> Step:  # noqa: ANN401
        """Write ``attempt`` and keep the run RUNNING at the same node (a granted gate)."""
        metadata = {**(attempt.execution_metadata or {}), "next_node_id": attempt.node_id}
        stayed = evolve(
            self._running(run),
            paused=None,
            pending_approval_ids=(),
            updated_at=self._clock.now(),
            **changes,
        )
        return Step(stayed, (WriteAudit(evolve(attempt, execution_metadata=metadata)),))

    def move_on(
        self, run: Run, graph: GraphDefinition, attempt: AttemptRecord, state: dict[str, Any]
    ) -> Step:
        """Follow the exits with the new ``state``, write ``attempt``, then advance or finish."""
        try:
            target = next_node(graph, attempt.node_id, state)
        except (ConditionError, NoMatchingEdge) as exc:
            failed = evolve(attempt, status=AttemptStatus.FAILED, error=error_of(exc))
            return self.fail(run, failed, exc.code, exc.detail)
        metadata = {**(attempt.execution_metadata or {}), "next_node_id": target}
        written = WriteAudit(evolve(attempt, execution_metadata=metadata))
        run = self._running(run)
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
            return Step(done, (written, *ended(done)))
        return Step(evolve(run, next_node_id=target, updated_at=now, **common), (written,))

    # -- one attempt -----------------------------------------------------------------------------

    def keeps_to_the_run(self, node: NodeDefinition) -> bool:
        """Whether attempting ``node`` changes nothing outside the run (ADR 0059).

        True for structural nodes and for actions registered without side effects: the next
        attempt may then share the transaction. An action with effects (or unknown ones) ends
        it, so that a failure in a later attempt never makes it run again.
        """
        if node.kind in (
            NodeKind.END,
            NodeKind.MAPPING,
            NodeKind.APPROVAL,
            NodeKind.INTERRUPT,
            NodeKind.WAIT,
        ):
            return True
        if node.kind is not NodeKind.ACTION or node.action is None:
            return False
        registered = self._actions.described(node.action.name)
        return registered is not None and registered.side_effect is SideEffectClass.NONE

    def start(self, run: Run) -> Step:
        """A PENDING run becomes RUNNING (and says so); any other run stays as it is."""
        if run.status is not RunStatus.PENDING:
            return Step(run)
        running = transition(run, RunStatus.RUNNING, self._clock.now())
        return Step(running, (started(running),))

    def attempt(
        self,
        run: Run,
        graph: GraphDefinition,
        policy: DeploymentPolicy | None,
        child: ChildTarget | None = None,
    ) -> Step:
        """Attempt ``run``'s next node under the deployment's ``policy`` (the run is RUNNING).

        ``child`` is what a subgraph node's deployment resolved to (None: missing).
        """
        node = graph.node(run.next_node_id or graph.entry)
        run = evolve(run, steps=run.steps + 1)
        base = {"node_kind": str(node.kind), "step": run.steps}
        if run.steps > graph.max_steps:
            record = AttemptRecord(
                node_id=node.id, status=AttemptStatus.FAILED, execution_metadata=base
            )
            return self.fail(
                run, record, m.STEP_LIMIT_EXCEEDED, f"more than {graph.max_steps} steps"
            )
        enforcement = evaluate_policy(policy, node)
        if enforcement is not None:
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.REJECTED,
                input_snapshot=node_input(node),
                execution_metadata={**base, "enforcement": enforcement.as_metadata()},
            )
            return self.fail(run, record, m.POLICY_VIOLATION, enforcement.reason)
        if node.kind is NodeKind.ACTION:
            return self._action(run, graph, node, base)
        if node.kind is NodeKind.TASK:
            return self._offer(run, node, base)
        if node.kind is NodeKind.SUBGRAPH:
            return self._call(run, node, base, child)
        if node.kind is NodeKind.APPROVAL:
            return self.request_approval(run, node, dict(run.state), base)
        if node.kind is NodeKind.INTERRUPT:
            record = AttemptRecord(
                node_id=node.id,
                status=AttemptStatus.WAITING_INTERRUPT,
                execution_metadata={**base, "prompt": node.prompt},
            )
            waiting = transition(
                run, RunStatus.WAITING_INTERRUPT, self._clock.now(), next_node_id=node.id
            )
            return Step(waiting, (WriteAudit(record),))
        if node.kind is NodeKind.MAPPING:
            return self._mapping(run, graph, node, base)
        if node.kind is NodeKind.WAIT:
            return self._timers.wait(run, graph, node, base)
        record = AttemptRecord(
            node_id=node.id, status=AttemptStatus.SUCCEEDED, execution_metadata=base
        )
        return self.move_on(run, graph, record, dict(run.state))

    def _action(
        self, run: Run, graph: GraphDefinition, node: NodeDefinition, base: dict[str, Any]
    ) -> Step:
        action = node.action
        assert action is not None  # noqa: S101 - graph validation guarantees it
        metadata = {**base, **action_metadata(action)}
        arguments = self._approved_arguments(run, node, metadata, thaw(action.arguments))
        if arguments is None:
            return self.request_approval(run, node, thaw(action.arguments), metadata)
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
            failed = evolve(
                draft,
                status=AttemptStatus.FAILED,
                error={"type": "UnknownAction", "message": f"no handler for {action.name!r}"},
            )
            return self.fail(run, failed, m.ACTION_ERROR, f"no handler for action {action.name!r}")
        context = ActionContext(
            run_id=run.run_id,
            tenant_id=run.tenant_id,
            node_id=node.id,
            descriptor=action,
            arguments=thaw(arguments),
            state=thaw(run.state),
        )
        try:
            result = checked_result(action.name, handler(context))
        except Exception as exc:  # noqa: BLE001 - any handler failure ends the run, recorded
            failed = evolve(draft, status=AttemptStatus.FAILED, error=error_of(exc))
            return self.fail(run, failed, m.ACTION_ERROR, f"action {action.name!r} failed: {exc}")
        done = evolve(
            draft,
            output_snapshot=result.output,
            stdout=result.stdout,
            stderr=result.stderr,
            tool_calls=result.tool_calls if result.tool_calls is not None else tool_calls,
            memory_interactions=result.memory_interactions,
            validation_results=result.validation_results,
        )
        step = self.move_on(run, graph, done, {**run.state, **thaw(result.output)})
        writes = tuple(InAttempt(write) for write in result.in_attempt)
        return evolve(step, effects=(*step.effects, *writes))  # with the attempt (ADR 0098)

    @staticmethod
    def _approved_arguments(
        run: Run, node: NodeDefinition, metadata: dict[str, Any], proposed: dict[str, Any]
    ) -> dict[str, Any] | None:
        """What ``node`` runs with (``proposed`` unless gated); None while it needs an approval.

        A gated node runs with the arguments (or child input) the approval granted, noted in
        ``metadata``.
        """
        if not node.gated:
            return dict(proposed)
        approved = run.approved_action
        if approved is None or approved.node_id != node.id:
            return None
        metadata["approval_id"] = approved.approval_id
        return dict(thaw(approved.arguments))

    def _offer(self, run: Run, node: NodeDefinition, base: dict[str, Any]) -> Step:
        """Offer a task node's work to its topic's workers; the run waits for the task."""
        action = node.action
        assert action is not None  # noqa: S101 - graph validation guarantees it
        metadata = {**base, **action_metadata(action)}
        arguments = self._approved_arguments(run, node, metadata, thaw(action.arguments))
        if arguments is None:
            return self.request_approval(run, node, thaw(action.arguments), metadata)
        now = self._clock.now()
        task = Task(
            task_id=self._ids.new_id(),
            tenant_id=run.tenant_id,
            run_id=run.run_id,
            node_id=node.id,
            topic=action.name,
            arguments=arguments,
            state=thaw(run.state),
            max_attempts=node.max_attempts or DEFAULT_MAX_ATTEMPTS,
            lock_seconds=node.lock_seconds or DEFAULT_LOCK_SECONDS,
            created_at=now,
            updated_at=now,
        )
        waiting = transition(run, RunStatus.WAITING_TASK, now, next_node_id=node.id)
        return Step(waiting, (OfferTask(task),))

    def _call(
        self, run: Run, node: NodeDefinition, base: dict[str, Any], target: ChildTarget | None
    ) -> Step:
        """Start a subgraph node's child run (once granted); the run waits for the child."""
        metadata = {**base, **subgraph_metadata(call_of(node))}
        try:
            proposed = child_input(call_of(node), run.state)
        except MissingSource as exc:
            return self._missing_source(run, node, metadata, exc)
        child_in = self._approved_arguments(run, node, metadata, proposed)
        if child_in is None:
            return self.request_approval(run, node, proposed, metadata)
        now = self._clock.now()
        child = start_child(
            run, node, child_in, target, metadata, run_id=self._ids.new_id(), now=now
        )
        if isinstance(child, ChildRefusal):
            return self.fail(run, child.attempt, child.reason, child.message)
        waiting = transition(run, RunStatus.WAITING_CHILD, now, next_node_id=node.id)
        return Step(waiting, (StartChild(child),))

    def _missing_source(
        self, run: Run, node: NodeDefinition, metadata: dict[str, Any], exc: MissingSource
    ) -> Step:
        """A copy found no value: the node's attempt fails, and the run with ``mapping_error``."""
        error = {"type": "MissingSource", "message": str(exc)}
        record = AttemptRecord(
            node_id=node.id, status=AttemptStatus.FAILED, execution_metadata=metadata, error=error
        )
        return self.fail(run, record, m.MAPPING_ERROR, str(exc))

    def _mapping(
        self, run: Run, graph: GraphDefinition, node: NodeDefinition, base: dict[str, Any]
    ) -> Step:
        try:
            state, written = apply_operations(node.operations, run.state)
        except MissingSource as exc:
            return self._missing_source(run, node, base, exc)
        record = AttemptRecord(
            node_id=node.id,
            status=AttemptStatus.SUCCEEDED,
            input_snapshot=[
                {"operation": op.operation, "target_path": op.target_path} for op in node.operations
            ],
            output_snapshot=written,
            execution_metadata=base,
        )
        return self.move_on(run, graph, record, state)

    # -- approvals: requested, resolved, escalated -------------------------------------------

    def request_approval(
        self,
        run: Run,
        node: NodeDefinition,
        payload: dict[str, Any],
        metadata: dict[str, Any],
        *,
        escalated_from: ApprovalRecord | None = None,
    ) -> Step:
        """Open a pending approval for ``node`` with ``payload`` and pause the run on it."""
        return approval_step(
            run,
            node,
            payload,
            metadata,
            approval_id=self._ids.new_id(),
            now=self._clock.now(),
            escalated_from=escalated_from,
        )


__all__ = ["NoMatchingEdge", "Stepper", "action_metadata", "next_node"]
