"""Starting a run: its checks, its idempotency, and its first attempts in the same commit.

:class:`RunStarts` creates a PENDING run once per idempotency key (a repeat with another request
is a Conflict, a concurrent repeat answers the run that won). With ``first_attempts`` the caller's
hook attempts the new run in the start's transaction (ADR 0067); should that raise
:class:`FirstAttemptsFailed`, the run is started alone.
"""

import functools
import logging
from collections.abc import Callable

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
        fingerprint = json_digest(asked)
        try:
            return self._start_once(
                tenant_id,
                request,
                fingerprint,
                first_attempts=first_attempts,
                started_by=started_by,
            )
        except FirstAttemptsFailed as failed:
            log.warning(
                "run started without its first attempts",
                exc_info=failed.__cause__,
                extra={"tenant_id": tenant_id, "deployment_ref": request.deployment_ref},
            )
            return self.start(tenant_id, request, first_attempts=False, started_by=started_by)
        except Conflict:
            if request.idempotency_key is None:
                raise
            # A concurrent start with the same key won the insert; its run is visible now.
            return self._start_once(
                tenant_id, request, fingerprint, first_attempts=False, started_by=started_by
            )

    def _start_once(
        self,
        tenant_id: str,
        request: StartRunRequest,
        fingerprint: str,
        *,
        first_attempts: bool,
        started_by: str | None = None,
    ) -> tuple[Run, bool]:
        start_in = functools.partial(
            self._start_in,
            tenant_id=tenant_id,
            request=request,
            fingerprint=fingerprint,
            first_attempts=first_attempts,
            started_by=started_by,
        )
        if self._group is not None:
            return self._group.run(start_in)
        with self._uow() as uow:
            return start_in(uow)

    def _start_in(
        self,
        uow: RunsUnit,
        tenant_id: str,
        request: StartRunRequest,
        fingerprint: str,
        *,
        first_attempts: bool,
        started_by: str | None,
    ) -> tuple[Run, bool]:
        """Create the run in ``uow`` and commit it there (the caller's unit, or a savepoint)."""
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


__all__ = ["FirstAttemptsFailed", "RunStarts"]
