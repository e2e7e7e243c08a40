"""Run control: cancel a run and the runs it started (ADR 0074), pause runs and deployments.

Pausing (ADR 0076) marks who paused a run's dispatch; the claim and the engine pass it by.

One cancel is one unit of work. It takes its locks in the order every other writer does, so two
writers never wait for each other: a task's row before its run's (a worker's completion, the
lock sweep), a child before its parent (a child's end tells its parent). So the open tasks of
the whole tree are withdrawn first, then the runs are locked and canceled leaves first. A
completion that committed first has moved its run on, and the cancel then cancels it where it
stands; a completion that comes after finds its task withdrawn (409 ``run_canceled``). Either
way exactly one of the two is applied, and the run's chain records which.

A run still being dispatched is canceled at its next step boundary: the dispatcher holds the
run's lock for a whole attempt, and the cancel's lock waits for it.
"""

import logging
from collections.abc import Callable

import attrs

from ecp_core.deployments.model import Deployment
from ecp_core.errors import Conflict, NotFound, RunFinished
from ecp_core.identity import ActorIdentity
from ecp_core.pages import MAX_PAGE
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock
from ecp_core.registry.service import require_graph
from ecp_core.runs.engine.cancel import Cancellation, canceled
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.run.model import (
    CancelRunRequest,
    PauseRequest,
    PauseSource,
    Run,
    with_pause,
)
from ecp_core.runs.run.state_machine import TERMINAL
from ecp_core.types import ApprovalStatus, RunStatus

log = logging.getLogger("ecp_core.runs")

TRIES = 5
"""How often a cancel starts again when its run started another child while it was read."""


class _TreeChanged(Exception):
    """A run of the tree started a child between the read of the tree and the run's lock."""


def _live_children(uow: RunsUnit, run: Run) -> list[Run]:
    """The children of ``run`` that have not ended, by run id."""
    found: list[Run] = []
    after: str | None = None
    while True:
        page = uow.runs.children(run.tenant_id, run.run_id, limit=MAX_PAGE, after=after)
        found.extend(child for child in page if child.status not in TERMINAL)
        if len(page) < MAX_PAGE:
            return found
        after = page[-1].run_id


def _tree(uow: RunsUnit, root: Run) -> list[Run]:
    """``root`` and every run below it that has not ended, each parent before its children."""
    tree = [root]
    for run in tree:
        tree.extend(_live_children(uow, run))
    return tree


class RunControl:
    """Cancels runs; each cancel and everything it ends commit together."""

    def __init__(self, uow: Callable[[], RunsUnit], clock: Clock, lifecycle: RunLifecycle) -> None:
        """Work in units of ``uow``; apply each run's cancel step through ``lifecycle``."""
        self._uow = uow
        self._clock = clock
        self._lifecycle = lifecycle

    def cancel(self, actor: ActorIdentity, run_id: str, request: CancelRunRequest) -> Run:
        """Cancel the run and every run it started that has not ended; the run after it.

        A canceled run is answered as it is (the first cancel's reason stands); a run that
        ended otherwise is RunFinished; an unknown run is NotFound.
        """
        for _ in range(TRIES):
            try:
                return self._cancel_once(actor, run_id, request)
            except _TreeChanged:
                continue
        raise Conflict(f"run {run_id} kept starting child runs; try again")

    def _cancel_once(self, actor: ActorIdentity, run_id: str, request: CancelRunRequest) -> Run:
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            root = uow.runs.get(tenant_id, run_id)
            if root is None:
                raise NotFound(f"run {run_id} not found")
            if root.status in TERMINAL:
                return _as_ended(root)
            tree = _tree(uow, root)
            known = {run.run_id for run in tree}
            cancellation = Cancellation(actor=actor, reason=request.reason, now=self._clock.now())
            withdrawn = {
                run.run_id: uow.tasks.withdraw(tenant_id, run.run_id, cancellation.now)
                for run in tree
            }
            after = root
            for run in reversed(tree):
                locked = uow.runs.lock(tenant_id, run.run_id)
                if locked is None or locked.status in TERMINAL:
                    if run is root:
                        return _as_ended(locked or root)  # ended meanwhile: nothing commits
                    continue
                if any(child.run_id not in known for child in _live_children(uow, locked)):
                    raise _TreeChanged
                graph = require_graph(uow, tenant_id, locked.graph_version_ref)
                pending = uow.approvals.for_run(tenant_id, locked.run_id, ApprovalStatus.PENDING)
                step = canceled(
                    locked,
                    graph,
                    cancellation,
                    pending=pending,
                    withdrawn_tasks=withdrawn[locked.run_id],
                    with_parent=run is not root,
                )
                after = self._lifecycle.apply(uow, step)
                uow.runs.save(after)
            uow.commit()
        log.info(
            "run canceled",
            extra={"run_id": run_id, "tenant_id": tenant_id, "runs": len(tree)},
        )
        return after

    def pause(
        self, actor: ActorIdentity, run_id: str, request: PauseRequest | None, *, paused: bool
    ) -> Run:
        """Pause (or unpause) the run's dispatch; the run after it.

        A paused run that waits for a person or a worker keeps waiting: an approval can still be
        resolved and a task completed, and the run then shows ``paused`` until it is unpaused.
        Unpausing lifts the run's own pause only; a paused deployment keeps its runs paused.
        A run that ended is RunFinished; pausing twice changes nothing.
        """
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            run = uow.runs.lock(tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            if run.status in TERMINAL:
                raise RunFinished(f"run {run_id} has already ended ({run.public_status.value})")
            after = attrs.evolve(
                run, paused_by=with_pause(run.paused_by, PauseSource.RUN, paused=paused)
            )
            if after == run:
                return run
            uow.runs.save(after)
            uow.commit()
        event = "run paused" if paused else "run unpaused"
        log.info(event, extra={"run_id": run_id, "tenant_id": tenant_id, **_facts(actor, request)})
        return after

    def pause_deployment(
        self,
        actor: ActorIdentity,
        deployment_ref: str,
        request: PauseRequest | None,
        *,
        paused: bool,
    ) -> Deployment:
        """Pause (or unpause) a deployment and each of its runs that has not ended.

        While paused it accepts new runs, which start paused, and dispatches none; unpaused,
        its runs are dispatched again, oldest first (those paused on their own stay paused).
        """
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            deployment = uow.deployments.set_paused(tenant_id, deployment_ref, paused=paused)
            if deployment is None:
                raise NotFound(f"deployment {deployment_ref} not found")
            changed = uow.runs.pause_deployment_runs(tenant_id, deployment_ref, paused=paused)
            uow.commit()
        event = "deployment paused" if paused else "deployment unpaused"
        log.info(
            event,
            extra={
                "deployment_ref": deployment_ref,
                "tenant_id": tenant_id,
                "runs": changed,
                **_facts(actor, request),
            },
        )
        return deployment


def _facts(actor: ActorIdentity, request: PauseRequest | None) -> dict[str, object]:
    """What a pause's log line says besides the ids."""
    return {"actor": actor.subject, "reason": None if request is None else request.reason}


def _as_ended(run: Run) -> Run:
    """A canceled run as it is; any other ended run refuses the cancel."""
    if run.status is RunStatus.CANCELED:
        return run
    raise RunFinished(f"run {run.run_id} has already ended ({run.public_status.value})")


__all__ = ["RunControl"]
