"""Approval repository: approvals of a run, overdue ones across tenants, the action trail."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW, approval, approval_action
from ecp_core.types import ApprovalStatus


class ApprovalRepositoryConformance(StoreSuite):
    """Approvals and their action trail."""

    @pytest.mark.spec("§2.2 approval-action-record", "§5 tenant-isolation")
    def test_approvals(self, uow: UnitOfWorkFactory) -> None:
        """Approvals are tenant-scoped, listed per run and status, overdue across tenants, with a trail."""
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
            assert [a.action for a in tx.approvals.actions("t1", "ap-1")] == [
                "requested",
                "approved",
            ]
            assert tx.approvals.actions("t2", "ap-1") == []
            with pytest.raises(Conflict):
                tx.approvals.add(approval("ap-1"))
