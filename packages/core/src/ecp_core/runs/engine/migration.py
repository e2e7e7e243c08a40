"""Moving waiting runs to another version of their graph: one run, or a version's page (ADR 0090).

One move is one unit of work, and takes its locks in the order every other writer does: a
waiting task's row before its run's (a worker's completion holds the task, then the run). So the
run is read without a lock, its open tasks are pointed at the new node (which holds them), and
then the run is locked and checked again. A resolution, a completion, a resume or a wake that
committed first has moved the run on: the move starts again from the run as it now is, and
refuses it with the reason when it no longer waits. One that comes after waits for the move's
commit and finds the run on its new version. Either way the run is never half moved.
"""

import logging
from collections.abc import Callable

from ecp_core.errors import Conflict, MigrationNotPossible, NotFound
from ecp_core.identity import ActorIdentity
from ecp_core.pages import decode_cursor, next_page
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock
from ecp_core.registry.service import require_graph
from ecp_core.runs.engine.lifecycle import RunLifecycle
from ecp_core.runs.engine.migrate import Migration, migrated, refusal, target_node
from ecp_core.runs.run.migration import (
    MigrateRunRequest,
    MigrateVersionRequest,
    MigrateVersionResponse,
    MigrationOutcome,
    RunMigrationResult,
)
from ecp_core.runs.run.model import Run, RunStatusResponse
from ecp_core.runs.run.search import RunFilter
from ecp_core.types import ApprovalStatus, RunStatus

log = logging.getLogger("ecp_core.runs")

TRIES = 5
"""How often a move starts again when its run moved on between the read and the lock."""
MIGRATION_CURSOR = "run-migration"
"""The kind of the bulk move's cursor (the run id of the last run it looked at)."""


class _MovedOn(Exception):
    """The run changed between the unlocked read and its lock."""


class RunMigrations:
    """Moves waiting runs to another version of their graph; each move commits on its own."""

    def __init__(self, uow: Callable[[], RunsUnit], clock: Clock, lifecycle: RunLifecycle) -> None:
        """Work in units of ``uow``; apply each move's step through ``lifecycle``."""
        self._uow = uow
        self._clock = clock
        self._lifecycle = lifecycle

    def migrate(self, actor: ActorIdentity, run_id: str, request: MigrateRunRequest) -> Run:
        """Move the run to ``request.graph_version_ref``; the run after it.

        NotFound for an unknown run or version; MigrationNotPossible, saying why, when the run
        cannot move (nothing changes then).
        """
        migration = Migration(
            actor=actor,
            target_ref=request.graph_version_ref,
            node_map=request.node_map or {},
            now=self._clock.now(),
        )
        for _ in range(TRIES):
            try:
                return self._migrate_once(actor.tenant_id, run_id, migration)
            except _MovedOn:
                continue
        raise Conflict(f"run {run_id} kept moving on while it was being migrated; try again")

    def _migrate_once(self, tenant_id: str, run_id: str, migration: Migration) -> Run:
        with self._uow() as uow:
            run = uow.runs.get(tenant_id, run_id)
            if run is None:
                raise NotFound(f"run {run_id} not found")
            target = require_graph(uow, tenant_id, migration.target_ref)
            source = require_graph(uow, tenant_id, run.graph_version_ref)
            why = refusal(run, source, target, migration)
            if why is not None:
                raise MigrationNotPossible(why)
            node_id = target_node(run, migration)
            moved_tasks = (
                uow.tasks.repoint(tenant_id, run_id, node_id, migration.now)
                if run.status is RunStatus.WAITING_TASK
                else []
            )
            locked = uow.runs.lock(tenant_id, run_id)
            if locked != run:
                raise _MovedOn  # rolled back: the tasks keep their node
            pending = uow.approvals.for_run(tenant_id, run_id, ApprovalStatus.PENDING)
            step = migrated(run, target, migration, pending=pending, moved_tasks=moved_tasks)
            after = self._lifecycle.apply(uow, step)
            uow.runs.save(after)
            uow.commit()
        log.info(
            "run migrated",
            extra={
                "run_id": run_id,
                "tenant_id": tenant_id,
                "from_graph_version_ref": run.graph_version_ref,
                "to_graph_version_ref": migration.target_ref,
                "actor": migration.actor.subject,
            },
        )
        return after

    def migrate_version(
        self, actor: ActorIdentity, request: MigrateVersionRequest
    ) -> MigrateVersionResponse:
        """Try to move each waiting run of ``request.from_version`` in one page, newest first.

        Each run moves (or is refused) on its own, as :meth:`migrate` does; the answer says
        which, and why. Both versions must exist (NotFound) and be of one graph
        (MigrationNotPossible, and no run is looked at).
        """
        tenant_id = actor.tenant_id
        with self._uow() as uow:
            require_graph(uow, tenant_id, request.from_version)
            require_graph(uow, tenant_id, request.to_version)
        source_graph = request.from_version.rpartition("@")[0]
        if request.to_version.rpartition("@")[0] != source_graph:
            msg = f"{request.to_version} is not a version of graph {source_graph!r}"
            raise MigrationNotPossible(msg)
        if request.to_version == request.from_version:
            raise MigrationNotPossible(f"the runs are on {request.to_version} already")
        before = (
            None
            if request.cursor is None
            else decode_cursor(MIGRATION_CURSOR, request.cursor, 1)[0]
        )
        where = RunFilter(graph_version_ref=request.from_version, waiting=True)
        with self._uow() as uow:
            found = uow.runs.search(tenant_id, where, limit=request.limit + 1, before=before)
        page, cursor = next_page(found, request.limit, MIGRATION_CURSOR, lambda r: (r.run_id,))
        one = MigrateRunRequest(graph_version_ref=request.to_version, node_map=request.node_map)
        results = [self._try(actor, run.run_id, one) for run in page]
        refused = sum(result.outcome is MigrationOutcome.REFUSED for result in results)
        log.info(
            "runs migrated",
            extra={
                "tenant_id": tenant_id,
                "from_graph_version_ref": request.from_version,
                "to_graph_version_ref": request.to_version,
                "migrated": len(results) - refused,
                "refused": refused,
            },
        )
        return MigrateVersionResponse(results=tuple(results), next_cursor=cursor)

    def _try(
        self, actor: ActorIdentity, run_id: str, request: MigrateRunRequest
    ) -> RunMigrationResult:
        """Move one run of the bulk move; a refusal becomes its result."""
        try:
            run = self.migrate(actor, run_id, request)
        except (MigrationNotPossible, Conflict, NotFound) as refused:
            return RunMigrationResult(
                run_id=run_id, outcome=MigrationOutcome.REFUSED, reason=refused.detail
            )
        return RunMigrationResult(
            run_id=run_id, outcome=MigrationOutcome.MIGRATED, run=RunStatusResponse.of(run)
        )


__all__ = ["MIGRATION_CURSOR", "RunMigrations"]
