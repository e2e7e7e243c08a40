"""Starting a run: its checks, its idempotency, and its first attempts in the same commit.

:class:`RunStarts` creates a PENDING run once per idempotency key (a repeat with another request
is a Conflict, a concurrent repeat answers the run that won). With ``first_attempts`` the caller's
hook attempts the new run in the start's transaction (ADR 0067); should that raise
:class:`FirstAttemptsFailed`, the run is started alone.
"""

import functools
import logging
from collections.abc import Callable, Sequence
from typing import TypeVar

import attrs

from ecp_core.canonical import canonical_json, json_digest, thaw
from ecp_core.errors import Conflict, ValidationFailed
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.registry.service import require_deployment, require_graph
from ecp_core.rollouts.runs import assign_run
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.runs.run.model import DEFAULT_PRIORITY, PauseSource, Run, StartRunRequest
from ecp_core.types import RunStatus

log = logging.getLogger("ecp_core.runs")


class FirstAttemptsFailed(Exception):
    """The first attempts made in a start's transaction raised (the start is rolled back)."""


class RunStarts:
    """Creates runs; the first attempts of a new run are the ``first_attempts`` hook's."""

    def __init__(
        self,
        uow: Callable[[], RunsUnit],
        clock: Clock,
        ids: IdFactory,
        first_attempts: Callable[[RunsUnit, Run], Run],
        group: CommitGroup | None = None,
    ) -> None:
        """``first_attempts`` attempts a run just added, in its start's unit of work.

        With ``group``, concurrent starts share its transactions, each in a savepoint
        (ADR 0102); without, each start commits on its own.
        """
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._first_attempts = first_attempts
        self._group = group

    def start(
        self,
        tenant_id: str,
        request: StartRunRequest,
        *,
        first_attempts: bool,
        started_by: str | None = None,
    ) -> tuple[Run, bool]:
        """Create a PENDING run (attempted at once with ``first_attempts``); whether created."""
        start = self.prepare(tenant_id, request, started_by=started_by)
        try:
            return self._start_once(start, first_attempts=first_attempts)
        except (FirstAttemptsFailed, Conflict) as exc:
            return self._recover(start, exc)

    def prepare(
        self, tenant_id: str, request: StartRunRequest, *, started_by: str | None = None
    ) -> "PreparedStart":
        """Check a start's request before any unit of work: its input must be canonical JSON."""
        try:
            canonical_json(request.input)
        except ValidationFailed as exc:
            raise ValidationFailed(
                "run input is not canonical JSON",
                errors=[attrs.evolve(e, loc=("input", *e.loc)) for e in exc.errors],
            ) from exc
        asked: dict[str, object] = {"input": request.input, "thread_id": request.thread_id}
        if request.priority != DEFAULT_PRIORITY:  # left out at the default: older digests hold
            asked["priority"] = request.priority
        return PreparedStart(tenant_id, request, json_digest(asked), started_by)

    def start_together(
        self, starts: Sequence["PreparedStart"]
    ) -> list[tuple[Run, bool] | BaseException]:
        """Make prepared starts with their first attempts; each one's outcome, in order.

        With a commit group they share one transaction, each in its savepoint (ADR 0106). An
        outcome is the start's run and whether it was created, or its own error; none is known
        before the commit that keeps it.
        """
        works = [
            functools.partial(self._start_in, start=start, first_attempts=True) for start in starts
        ]
        if self._group is None:
            answers = [_answer(functools.partial(self._in_own_unit, work)) for work in works]
        else:
            answers = self._group.run_together(works)
        return [
            _answer(functools.partial(self._recover, start, answer))
            if isinstance(answer, (FirstAttemptsFailed, Conflict))
            else answer
            for start, answer in zip(starts, answers, strict=True)
        ]

    def _recover(self, start: "PreparedStart", exc: Exception) -> tuple[Run, bool]:
        """Start a run whose start failed with ``exc``, or raise ``exc``.

        After its first attempts failed, the run is started alone; after its idempotency key's
        insert lost to a concurrent start, that start's run is the answer.
        """
        if isinstance(exc, FirstAttemptsFailed):
            log.warning(
                "run started without its first attempts",
                exc_info=exc.__cause__,
                extra={
                    "tenant_id": start.tenant_id,
                    "deployment_ref": start.request.deployment_ref,
                },
            )
            try:
                return self._start_once(start, first_attempts=False)
            except Conflict as conflict:
                exc = conflict
        if start.request.idempotency_key is None:
            raise exc
        # A concurrent start with the same key won the insert; its run is visible now.
        return self._start_once(start, first_attempts=False)

    def _start_once(self, start: "PreparedStart", *, first_attempts: bool) -> tuple[Run, bool]:
        work = functools.partial(self._start_in, start=start, first_attempts=first_attempts)
        if self._group is not None:
            return self._group.run(work)
        return self._in_own_unit(work)

    def _in_own_unit(self, work: Callable[[RunsUnit], tuple[Run, bool]]) -> tuple[Run, bool]:
        with self._uow() as uow:
            return work(uow)

    def _start_in(
        self, uow: RunsUnit, *, start: "PreparedStart", first_attempts: bool
    ) -> tuple[Run, bool]:
        """Create the run in ``uow`` and commit it there (the caller's unit, or a savepoint)."""
        tenant_id, request, fingerprint = start.tenant_id, start.request, start.fingerprint
        started_by = start.started_by
        deployment = require_deployment(uow, tenant_id, request.deployment_ref)
        if request.idempotency_key is not None:
            existing = uow.runs.by_idempotency_key(
                tenant_id, deployment.deployment_ref, request.idempotency_key
            )
            if existing is not None:
                if existing.request_digest != fingerprint:
                    raise Conflict("idempotency_key was used with a different request")
                return existing, False
        now = self._clock.now()
        run_id = self._ids.new_id()
        thread_id = request.thread_id or run_id
        assigned = assign_run(uow, deployment, run_id, thread_id, now)
        version_ref = deployment.graph_version_ref if assigned is None else assigned[2]
        graph = require_graph(uow, tenant_id, version_ref)
        run = Run(
            run_id=run_id,
            tenant_id=tenant_id,
            deployment_ref=deployment.deployment_ref,
            graph_version_ref=version_ref,
            rollout_id=None if assigned is None else assigned[0],
            arm=None if assigned is None else assigned[1],
            thread_id=thread_id,
            status=RunStatus.PENDING,
            state=thaw(request.input),
            next_node_id=graph.entry,
            idempotency_key=request.idempotency_key,
            request_digest=fingerprint,
            started_by=started_by,
            created_at=now,
            updated_at=now,
            paused_by=(PauseSource.DEPLOYMENT,) if deployment.paused else (),
            priority=request.priority,
        )
        uow.runs.add(run)
        if first_attempts and run.dispatchable:
            run = self._first_attempts(uow, run)
        uow.commit()
        return run, True


@attrs.frozen
class PreparedStart:
    """A start whose request was checked (:meth:`RunStarts.prepare`), ready to be made."""

    tenant_id: str
    request: StartRunRequest
    fingerprint: str
    """The digest of what was asked, which a repeat of its idempotency key must match."""
    started_by: str | None


T = TypeVar("T")


def _answer(make: Callable[[], T]) -> T | BaseException:
    """What ``make`` returned, or the error it raised (to be raised to its own caller)."""
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 - handed to the start's caller, raised there
        return exc


__all__ = ["FirstAttemptsFailed", "PreparedStart", "RunStarts"]
