"""Run and approval repositories."""

from datetime import timedelta

import attrs
import pytest
from tests.contract.records import NOW, approval, approval_action, run

from ecp_core.errors import Conflict, NotFound
from ecp_core.types import ApprovalStatus, RunStatus


def test_runs_round_trip_and_scope(uow):
    with uow() as tx:
        tx.runs.add(run(key="k1"))
        tx.commit()
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") == run(key="k1")
        assert tx.runs.lock("t1", "run-1") == run(key="k1")
        assert tx.runs.get("t2", "run-1") is None
        assert tx.runs.by_idempotency_key("t1", "dep", "k1").run_id == "run-1"
        assert tx.runs.by_idempotency_key("t2", "dep", "k1") is None
        with pytest.raises(Conflict):
            tx.runs.add(run())


def test_save_replaces(uow):
    with uow() as tx:
        tx.runs.add(run())
        changed = attrs.evolve(
            run(), status=RunStatus.RUNNING, state={"y": {"z": 1}}, attempts=2, steps=1
        )
        tx.runs.save(changed)
        tx.commit()
    with uow() as tx:
        assert tx.runs.get("t1", "run-1") == changed
        with pytest.raises(NotFound):
            tx.runs.save(run("nope"))


def test_pages_newest_first(uow):
    with uow() as tx:
        for i in range(5):
            tx.runs.add(run(f"run-{i}", offset=i))
        tx.runs.add(run("run-x", tenant="t2"))
        tx.commit()
    with uow() as tx:
        assert [r.run_id for r in tx.runs.page("t1", limit=3)] == ["run-4", "run-3", "run-2"]
        assert [r.run_id for r in tx.runs.page("t1", limit=3, before="run-2")] == ["run-1", "run-0"]
        assert tx.runs.count("t1") == 5


def test_runnable_across_tenants_oldest_first(uow):
    with uow() as tx:
        tx.runs.add(run("run-1"))
        tx.runs.add(run("run-2", tenant="t2", status=RunStatus.RUNNING))
        tx.runs.add(run("run-3", status=RunStatus.WAITING_APPROVAL))
        tx.runs.add(run("run-4", status=RunStatus.COMPLETED))
        tx.commit()
    with uow() as tx:
        assert [r.run_id for r in tx.runs.runnable(10)] == ["run-1", "run-2"]
        assert [r.run_id for r in tx.runs.runnable(1)] == ["run-1"]


def test_approvals(uow):
    late = NOW - timedelta(seconds=1)
    with uow() as tx:
        tx.approvals.add(approval("ap-1", deadline=late))
        tx.approvals.add(approval("ap-2"))
        tx.approvals.add(approval("ap-3", tenant="t2", deadline=late))
        tx.approvals.save(attrs.evolve(approval("ap-2"), status=ApprovalStatus.RESOLVED))
        tx.approvals.add_action(approval_action("ap-1"))
        tx.approvals.add_action(approval_action("ap-1", "approved"))
        tx.commit()
    with uow() as tx:
        assert tx.approvals.get("t1", "ap-1") == approval("ap-1", deadline=late)
        assert tx.approvals.get("t2", "ap-1") is None
        assert [a.approval_id for a in tx.approvals.for_run("t1", "run-1")] == ["ap-1", "ap-2"]
        pending = tx.approvals.for_run("t1", "run-1", ApprovalStatus.PENDING)
        assert [a.approval_id for a in pending] == ["ap-1"]
        assert [a.approval_id for a in tx.approvals.overdue(NOW, 10)] == ["ap-1", "ap-3"]
        assert [a.action for a in tx.approvals.actions("t1", "ap-1")] == ["requested", "approved"]
        assert tx.approvals.actions("t2", "ap-1") == []
        with pytest.raises(Conflict):
            tx.approvals.add(approval("ap-1"))


def test_claim_runnable_takes_the_oldest(uow):
    with uow() as tx:
        tx.runs.add(run("run-2", status=RunStatus.RUNNING))
        tx.runs.add(run("run-1", status=RunStatus.COMPLETED))
        tx.runs.add(run("run-3"))
        tx.commit()
    with uow() as tx:
        assert tx.runs.claim_runnable().run_id == "run-2"
        tx.runs.save(attrs.evolve(tx.runs.get("t1", "run-2"), status=RunStatus.COMPLETED))
        tx.commit()
    with uow() as tx:
        assert tx.runs.claim_runnable().run_id == "run-3"
