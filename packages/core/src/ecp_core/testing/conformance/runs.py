"""Run repository: runs stored whole, scoped by tenant, paged newest first, dispatched oldest first."""

from datetime import timedelta
from typing import Any

import attrs
import pytest

from ecp_core.errors import Conflict, NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.run.model import POLICY_VIOLATION, FailureState, PauseSource
from ecp_core.runs.run.search import RunFilter
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW, approval, run
from ecp_core.types import RunPublicStatus, RunStatus


class RunRepositoryConformance(StoreSuite):
    """Runs: stored whole, scoped by tenant, paged newest first, dispatched oldest first."""

    @pytest.mark.spec("§5 tenant-isolation")
    def test_runs_round_trip_and_scope(self, uow: UnitOfWorkFactory) -> None:
        """A run reads back whole, by id or idempotency key, only in its tenant; ids are unique."""
        with uow() as tx:
            tx.runs.add(run(key="k1"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") == run(key="k1")
            assert tx.runs.lock("t1", "run-1") == run(key="k1")
            assert tx.runs.get("t2", "run-1") is None
            assert tx.runs.by_idempotency_key("t1", "dep", "k1").run_id == "run-1"
            assert tx.runs.by_idempotency_key("t2", "dep", "k1") is None
        # A store may report it by the next statement or the commit (ADR 0067).
        with uow() as tx, pytest.raises(Conflict):
            tx.runs.add(run())
            tx.commit()

    @pytest.mark.spec("C14 approvers")
    def test_who_started_a_run_reads_back(self, uow: UnitOfWorkFactory) -> None:
        """A run's starter is stored with it; a run started without one has None."""
        with uow() as tx:
            tx.runs.add(attrs.evolve(run(), started_by="alice \u00e9"))
            tx.runs.add(run("run-2"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") == attrs.evolve(run(), started_by="alice \u00e9")
            assert tx.runs.lock("t1", "run-1") == attrs.evolve(run(), started_by="alice \u00e9")
            assert tx.runs.get("t1", "run-2") == run("run-2")
            assert run("run-2").started_by is None

    def test_lock_for_approval_reads_the_approval_and_its_run(self, uow: UnitOfWorkFactory) -> None:
        """The approval with its run, in the approval's tenant only; None for an unknown one."""
        with uow() as tx:
            tx.runs.add(run())
            tx.approvals.add(approval())
            tx.approvals.add(approval("ap-2", run_id="gone"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.lock_for_approval("t1", "ap-1") == (approval(), run())
            assert tx.runs.lock_for_approval("t1", "ap-2") == (
                approval("ap-2", run_id="gone"),
                None,
            )
            assert tx.runs.lock_for_approval("t2", "ap-1") is None
            assert tx.runs.lock_for_approval("t1", "nope") is None

    def test_save_replaces(self, uow: UnitOfWorkFactory) -> None:
        """Saving replaces a stored run; saving an unknown run is NotFound."""
        with uow() as tx:
            tx.runs.add(run())
            changed = attrs.evolve(
                run(), status=RunStatus.RUNNING, state={"y": {"z": 1}}, attempts=2, steps=1
            )
            tx.runs.save(changed)
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "run-1") == changed
        # A store may report it by the next statement or the commit (ADR 0059).
        with uow() as tx, pytest.raises(NotFound):
            tx.runs.save(run("nope"))
            tx.commit()

    @pytest.mark.spec("C1 list-paging")
    def test_pages_newest_first(self, uow: UnitOfWorkFactory) -> None:
        """Runs page newest first, before a given run; the count is the tenant's."""
        with uow() as tx:
            for i in range(5):
                tx.runs.add(run(f"run-{i}", offset=i))
            tx.runs.add(run("run-x", tenant="t2"))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.page("t1", limit=3)] == ["run-4", "run-3", "run-2"]
            assert [r.run_id for r in tx.runs.page("t1", limit=3, before="run-2")] == [
                "run-1",
                "run-0",
            ]
            assert tx.runs.count("t1") == 5

    @pytest.mark.spec("C15 console-runs", "C1 list-paging")
    def test_search_filters_and_pages_newest_first(self, uow: UnitOfWorkFactory) -> None:
        """Each filter admits what it names (public statuses as clients see them); pages by id."""
        policy = FailureState(reason=POLICY_VIOLATION)
        stored = [
            attrs.evolve(run("run-0", key="order-7"), deployment_ref="other"),
            run("run-1", status=RunStatus.RUNNING, offset=60),
            attrs.evolve(run("run-2", offset=120), paused_by=(PauseSource.RUN,)),
            attrs.evolve(run("run-3", status=RunStatus.FAILED, offset=180), failure_state=policy),
            run("run-4", status=RunStatus.TERMINATED_BY_POLICY, offset=240),
            attrs.evolve(
                run("run-5", status=RunStatus.FAILED, offset=300),
                failure_state=FailureState(reason="action_error"),
            ),
            run("run-6", status=RunStatus.FAILED, offset=360),
            run("run-7", status=RunStatus.COMPLETED, offset=420),
            run("run-8", tenant="t2", status=RunStatus.COMPLETED),
        ]
        with uow() as tx:
            for found in stored:
                tx.runs.add(found)
            tx.commit()

        def ids(where: RunFilter, **kw: Any) -> list[str]:
            with uow() as tx:
                return [r.run_id for r in tx.runs.search("t1", where, limit=10, **kw)]

        assert ids(RunFilter()) == [f"run-{i}" for i in range(7, -1, -1)]
        assert ids(RunFilter(), before="run-3") == ["run-2", "run-1", "run-0"]
        assert ids(RunFilter(deployment_ref="other")) == ["run-0"]
        status = RunPublicStatus
        assert ids(RunFilter(status=status.PENDING)) == ["run-0"]
        assert ids(RunFilter(status=status.RUNNING)) == ["run-1"]
        assert ids(RunFilter(status=status.PAUSED)) == ["run-2"]
        assert ids(RunFilter(status=status.TERMINATED_BY_POLICY)) == ["run-4", "run-3"]
        assert ids(RunFilter(status=status.FAILED)) == ["run-6", "run-5"]
        assert ids(RunFilter(status=status.COMPLETED)) == ["run-7"]
        assert ids(RunFilter(status=status.CANCELED)) == []
        later = NOW + timedelta(seconds=120)
        assert ids(RunFilter(created_from=later, created_to=later + timedelta(seconds=121))) == [
            "run-4",
            "run-3",
            "run-2",
        ]
        assert ids(RunFilter(run_or_key="order-7")) == ["run-0"]
        assert ids(RunFilter(run_or_key="run-5")) == ["run-5"]
        assert ids(RunFilter(run_or_key="run-8")) == []  # another tenant's
        assert ids(RunFilter(waiting=True)) == []
        assert ids(RunFilter(graph_version_ref="g@1")) == [f"run-{i}" for i in range(7, -1, -1)]
        assert ids(RunFilter(graph_version_ref="g@2")) == []
        with uow() as tx:
            assert [r.run_id for r in tx.runs.search("t1", RunFilter(), limit=2)] == [
                "run-7",
                "run-6",
            ]

    @pytest.mark.spec("C1 list-paging")
    def test_ids_order_by_code_point(self, uow: UnitOfWorkFactory) -> None:
        """Ids order by code point, never by a locale: upper case before lower, accents last."""
        ids = ["run-b", "run-\u00e9", "run-B", "run-a", "run-Z", "run-\u0100", "run-_"]
        by_code_point = sorted(ids)
        with uow() as tx:
            for run_id in ids:
                tx.runs.add(run(run_id))
            tx.commit()
        with uow() as tx:
            assert tx.runs.ids_of("t1") == by_code_point
            newest_first = [r.run_id for r in tx.runs.page("t1", limit=10)]
            assert newest_first == by_code_point[::-1]
            assert [r.run_id for r in tx.runs.page("t1", limit=10, before="run-a")] == [
                i for i in by_code_point[::-1] if i < "run-a"
            ]

    def test_runnable_across_tenants_oldest_first(self, uow: UnitOfWorkFactory) -> None:
        """Runnable runs (pending or running) are listed across tenants, oldest first."""
        with uow() as tx:
            tx.runs.add(run("run-1"))
            tx.runs.add(run("run-2", tenant="t2", status=RunStatus.RUNNING))
            tx.runs.add(run("run-3", status=RunStatus.WAITING_APPROVAL))
            tx.runs.add(run("run-4", status=RunStatus.COMPLETED))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.runnable(10)] == ["run-1", "run-2"]
            assert [r.run_id for r in tx.runs.runnable(1)] == ["run-1"]

    def test_claim_runnable_takes_the_oldest(self, uow: UnitOfWorkFactory) -> None:
        """A claim takes the oldest runnable run; a finished run is not claimed again."""
        with uow() as tx:
            tx.runs.add(run("run-2", status=RunStatus.RUNNING))
            tx.runs.add(run("run-1", status=RunStatus.COMPLETED))
            tx.runs.add(run("run-3"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.claim_runnable().run_id == "run-2"
            claimed = tx.runs.get("t1", "run-2")
            assert claimed is not None
            tx.runs.save(attrs.evolve(claimed, status=RunStatus.COMPLETED))
            tx.commit()
        with uow() as tx:
            assert tx.runs.claim_runnable().run_id == "run-3"
