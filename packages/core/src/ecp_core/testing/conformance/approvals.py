"""Approval repository: approvals of a run, the inbox across runs, overdue ones, the action trail.

The inbox rule: ``page`` returns the tenant's approvals that match every filter given, in
approval id order (code point, :mod:`ecp_core.pages`), after the id ``after``; paging on from the
last id of each page returns every match exactly once, in order.
"""

import itertools
from datetime import timedelta

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.errors import Conflict
from ecp_core.identity import ActorIdentity
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.runs.approvals.model import ApprovalRecord, ApprovalResolution
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener, StoreSuite
from ecp_core.testing.samples import NOW, approval, approval_action
from ecp_core.types import ApprovalDecision, ApprovalStatus, AuthMethod, ServiceRole

CODE_POINT_IDS = ("ap-b", "ap-\u00e9", "ap-B", "ap-a", "ap-Z", "ap-\u0100", "ap-_")
"""Ids whose code point order differs from any locale's."""


def inbox_approval(
    approval_id: str,
    tenant: str = "t1",
    status: ApprovalStatus = ApprovalStatus.PENDING,
    deployment_ref: str = "dep",
    run_id: str = "run-1",
) -> ApprovalRecord:
    """A sample approval with the fields the inbox filters on."""
    return attrs.evolve(
        approval(approval_id, run_id=run_id, tenant=tenant),
        status=status,
        deployment_ref=deployment_ref,
    )


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
        # A store may report the taken id by the next statement or the commit (ADR 0059).
        with uow() as tx, pytest.raises(Conflict):
            tx.approvals.add(approval("ap-1"))
            tx.commit()

    @pytest.mark.spec("C10 approver-inbox", "§5 tenant-isolation")
    def test_inbox_filters_by_status_deployment_and_run(self, uow: UnitOfWorkFactory) -> None:
        """The inbox holds the tenant's approvals matching every filter given, by id."""
        resolved, escalated = ApprovalStatus.RESOLVED, ApprovalStatus.ESCALATED
        stored = [
            inbox_approval("ap-1"),
            inbox_approval("ap-2", status=resolved),
            inbox_approval("ap-3", deployment_ref="other"),
            inbox_approval("ap-4", run_id="run-2", status=escalated),
            inbox_approval("ap-5", tenant="t2"),
        ]
        with uow() as tx:
            for a in stored:
                tx.approvals.add(a)
            tx.commit()
        with uow() as tx:
            page = tx.approvals.page

            def ids(found: list[ApprovalRecord]) -> list[str]:
                return [a.approval_id for a in found]

            assert page("t1", limit=10) == stored[:4]
            assert ids(page("t1", limit=10, status=ApprovalStatus.PENDING)) == ["ap-1", "ap-3"]
            assert ids(page("t1", limit=10, deployment_ref="dep")) == ["ap-1", "ap-2", "ap-4"]
            assert ids(page("t1", limit=10, run_id="run-2")) == ["ap-4"]
            both = page("t1", limit=10, status=ApprovalStatus.PENDING, deployment_ref="dep")
            assert ids(both) == ["ap-1"]
            assert ids(page("t2", limit=10)) == ["ap-5"]
            assert page("t3", limit=10) == []
            assert page("t1", limit=10, run_id="run-9") == []

    @pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
    def test_inbox_pages_by_id_in_code_point_order(self, uow: UnitOfWorkFactory) -> None:
        """Inbox pages follow approval ids in code point order, after a given id."""
        by_code_point = sorted(CODE_POINT_IDS)
        with uow() as tx:
            for approval_id in CODE_POINT_IDS:
                tx.approvals.add(inbox_approval(approval_id))
            tx.commit()
        with uow() as tx:
            assert [a.approval_id for a in tx.approvals.page("t1", limit=10)] == by_code_point
            assert [a.approval_id for a in tx.approvals.page("t1", limit=3)] == by_code_point[:3]
            after = [a.approval_id for a in tx.approvals.page("t1", limit=10, after="ap-a")]
            assert after == [i for i in by_code_point if i > "ap-a"]

    @pytest.mark.spec("C15 console-inbox", "C1 list-paging")
    def test_pending_by_deadline_pages_soonest_first_and_none_last(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Pending approvals by deadline (none last), ties by id, each once across pages."""
        soon, later = NOW + timedelta(minutes=5), NOW + timedelta(hours=2)
        stored = [
            attrs.evolve(inbox_approval("ap-5"), sla_deadline=later),
            attrs.evolve(inbox_approval("ap-1")),  # no deadline: last
            attrs.evolve(inbox_approval("ap-4"), sla_deadline=soon),
            attrs.evolve(inbox_approval("ap-2"), sla_deadline=soon),
            attrs.evolve(inbox_approval("ap-0")),
            attrs.evolve(inbox_approval("ap-3"), sla_deadline=later, deployment_ref="other"),
            attrs.evolve(inbox_approval("ap-6", status=ApprovalStatus.RESOLVED), sla_deadline=soon),
            attrs.evolve(inbox_approval("ap-7", tenant="t2"), sla_deadline=soon),
            attrs.evolve(
                inbox_approval("ap-8"), sla_deadline=soon, approver_subjects=("someone-else",)
            ),
        ]
        with uow() as tx:
            for a in stored:
                tx.approvals.add(a)
            tx.commit()
        bob = ActorIdentity(
            subject="bob",
            auth_method=AuthMethod.BEARER,
            roles=(ServiceRole.APPROVER,),
            tenant_id="t1",
        )
        order = ["ap-2", "ap-4", "ap-3", "ap-5", "ap-0", "ap-1"]
        with uow() as tx:
            by_deadline = tx.approvals.pending_by_deadline
            found = by_deadline("t1", limit=10, approver=bob)
            assert [a.approval_id for a in found] == order
            every = [a.approval_id for a in by_deadline("t1", limit=10)]
            assert every == ["ap-2", "ap-4", "ap-8", "ap-3", "ap-5", "ap-0", "ap-1"]
            other = by_deadline("t1", limit=10, deployment_ref="other")
            assert [a.approval_id for a in other] == ["ap-3"]
            for size in (1, 2, 4):
                seen: list[str] = []
                after = None
                while True:
                    page = by_deadline("t1", limit=size, after=after, approver=bob)
                    seen += [a.approval_id for a in page]
                    if len(page) < size:
                        break
                    after = (page[-1].sla_deadline, page[-1].approval_id)
                assert seen == order, size

    @pytest.mark.spec("C14 four-eyes", "C14 approvers")
    def test_rules_and_approvals_so_far_read_back(self, uow: UnitOfWorkFactory) -> None:
        """An approval's rules, its run's starter and its approvals so far are stored whole."""
        ruled = attrs.evolve(
            approval("ap-r"),
            min_approvals=3,
            forbid_self_approval=True,
            approver_roles=(ServiceRole.APPROVER,),
            approver_subjects=("bob", "carol \u00e9"),
            run_started_by="alice",
        )
        voted = attrs.evolve(ruled, approvals=(resolution("bob"), resolution("carol \u00e9")))
        with uow() as tx:
            tx.approvals.add(ruled)
            tx.approvals.add(approval("ap-plain"))
            tx.commit()
        with uow() as tx:
            assert tx.approvals.get("t1", "ap-r") == ruled
            assert tx.approvals.get("t1", "ap-plain") == approval("ap-plain")
            tx.approvals.save(voted)
            tx.commit()
        with uow() as tx:
            assert tx.approvals.get("t1", "ap-r") == voted
            assert tx.runs.lock_for_approval("t1", "ap-r") == (voted, None)

    @pytest.mark.spec("C14 approvers", "C10 approver-inbox")
    def test_inbox_shows_an_approver_what_they_may_resolve(self, uow: UnitOfWorkFactory) -> None:
        """With ``approver``, the inbox holds the approvals whose rules admit that person."""
        base = inbox_approval("ap-0")
        stored = [
            attrs.evolve(base, approval_id="ap-1"),
            attrs.evolve(base, approval_id="ap-2", approver_roles=(ServiceRole.ADMIN,)),
            attrs.evolve(base, approval_id="ap-3", approver_subjects=("bob",)),
            attrs.evolve(
                base,
                approval_id="ap-4",
                approver_roles=(ServiceRole.ADMIN,),
                approver_subjects=("bob",),
            ),
            attrs.evolve(base, approval_id="ap-5", forbid_self_approval=True, run_started_by="bob"),
            attrs.evolve(base, approval_id="ap-6", forbid_self_approval=True),
            attrs.evolve(base, approval_id="ap-7", run_started_by="bob"),
        ]
        with uow() as tx:
            for a in stored:
                tx.approvals.add(a)
            tx.commit()

        def ids(subject: str, *roles: ServiceRole) -> list[str]:
            actor = ActorIdentity(
                subject=subject, auth_method=AuthMethod.BEARER, roles=roles, tenant_id="t1"
            )
            with uow() as tx:
                found = tx.approvals.page("t1", limit=10, approver=actor)
            assert found == [a for a in stored if a.admits(actor)]
            return [a.approval_id for a in found]

        assert ids("bob", ServiceRole.APPROVER) == ["ap-1", "ap-3", "ap-4", "ap-6", "ap-7"]
        assert ids("root", ServiceRole.ADMIN) == ["ap-1", "ap-2", "ap-4", "ap-5", "ap-6", "ap-7"]
        assert ids("carol", ServiceRole.APPROVER) == ["ap-1", "ap-5", "ap-6", "ap-7"]
        assert ids("bob") == ["ap-1", "ap-3", "ap-4", "ap-6", "ap-7"]


def resolution(subject: str) -> ApprovalResolution:
    """An approval by ``subject``."""
    return ApprovalResolution(
        decision=ApprovalDecision.APPROVE,
        actor=ActorIdentity(subject=subject, auth_method=AuthMethod.BEARER, tenant_id="t1"),
        resolved_at=NOW,
        reason="fine by me",
    )


STATUSES = tuple(ApprovalStatus)
approval_sets = st.lists(
    st.tuples(
        st.text(alphabet="aBZ_\u00e9\u0100-0", min_size=1, max_size=3),
        st.sampled_from(["t", "t", "other"]),
        st.sampled_from(STATUSES),
        st.sampled_from(["d1", "d2"]),
        st.sampled_from(["r1", "r2"]),
    ),
    max_size=12,
    unique_by=lambda drawn: drawn[0],
)
"""Approvals to store: (id suffix, tenant, status, deployment, run) each."""
filters = st.tuples(
    st.none() | st.sampled_from(STATUSES),
    st.none() | st.sampled_from(["d1", "d2"]),
    st.none() | st.sampled_from(["r1", "r2"]),
)
"""Any combination of the inbox's filters: (status, deployment_ref, run_id)."""

_examples = itertools.count()


class ApprovalInboxProperties(ExampleStoreSuite):
    """Paging through the inbox on random approvals and filters."""

    @pytest.mark.spec("C10 approver-inbox", "C1 list-paging")
    @settings(
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(drawn=approval_sets, wanted=filters, limit=st.integers(1, 5))
    def test_paging_returns_each_match_once_in_order(
        self,
        open_store: StoreOpener,
        drawn: list[tuple[str, str, ApprovalStatus, str, str]],
        wanted: tuple[ApprovalStatus | None, str | None, str | None],
        limit: int,
    ) -> None:
        """Paging on from each page's last id returns exactly the matches, each once, in order."""
        # Ids and tenants are new in each example (approval ids are unique across tenants).
        prefix = f"x{next(_examples):05d}-"
        status, deployment_ref, run_id = wanted
        stored = [
            inbox_approval(prefix + suffix, prefix + tenant, state, ref, run)
            for suffix, tenant, state, ref, run in drawn
        ]
        expected = sorted(
            (
                a.approval_id
                for a in stored
                if a.tenant_id == prefix + "t"
                and status in (None, a.status)
                and deployment_ref in (None, a.deployment_ref)
                and run_id in (None, a.run_id)
            ),
        )
        with open_store() as uow:
            with uow() as tx:
                for a in stored:
                    tx.approvals.add(a)
                tx.commit()
            seen: list[str] = []
            after = None
            with uow() as tx:
                while True:
                    page = tx.approvals.page(
                        prefix + "t",
                        limit=limit,
                        after=after,
                        status=status,
                        deployment_ref=deployment_ref,
                        run_id=run_id,
                    )
                    assert len(page) <= limit
                    seen.extend(a.approval_id for a in page)
                    if len(page) < limit:
                        break
                    after = page[-1].approval_id
        assert seen == expected
