"""DecisionRepository on every store: artifacts, schedules, and the source inventories comparisons read.

Retained artifacts are found by request digest and evidence fingerprint, counted per compared
subject, paged newest first, kept per tenant and read back exactly (floats and exponent-notation
cost strings included). Schedules are listed, come due in order, are claimed by a conditional
update (a stale claim changes nothing) and record their runs.
"""

from datetime import timedelta
from typing import Any

import attrs
import pytest

from ecp_core.decisions.model import ComparisonPolicy
from ecp_core.decisions.selection import ids_digest
from ecp_core.errors import Conflict
from ecp_core.evidence.model import SourceInventory, SourceWindow
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.decisions.samples import (
    END,
    MICRO,
    START,
    artifact,
    compare_request,
    exact,
    schedule,
    stored,
)
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import digested


class DecisionRepositoryConformance(StoreSuite):
    """Decision artifacts and schedules, and the source inventories comparisons read."""

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_an_artifact_is_found_by_its_request_and_evidence_and_read_back_exactly(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An artifact is found by its request and evidence and read back exactly."""
        kept = artifact(schedule_id="s-1")
        with uow() as tx:
            tx.decisions.add(kept, "sha256:evidence-1")
            tx.commit()
        with uow() as tx:
            found = tx.decisions.find("t1", "sha256:request-1", "sha256:evidence-1")
            assert found == kept
            assert exact(found) == exact(kept)
            assert repr(found.constraints[1].estimate) == "-0.0"
            assert found.constraints[2].interval == (5e-324, 1e300)
            assert [row.cost_usd for row in found.calculation_inputs.baseline] == [
                "1E-8",
                "1.5E+3",
                "0.000",
                "123456789012345.123456789012345678",
            ]
            assert found.policy.confidence_level == 1 - 2**-53
            (read,) = tx.decisions.page("t1", limit=10)
            assert exact(read) == exact(kept)
            # The same request over other evidence, other evidence of another request, another tenant.
            assert tx.decisions.find("t1", "sha256:request-1", "sha256:evidence-2") is None
            assert tx.decisions.find("t1", "sha256:request-2", "sha256:evidence-1") is None
            assert tx.decisions.find("t2", "sha256:request-1", "sha256:evidence-1") is None

    @pytest.mark.spec("§2.9 decision-artifact")
    def test_an_artifact_id_is_retained_once(self, uow: UnitOfWorkFactory) -> None:
        """An artifact id is retained once."""
        with uow() as tx:
            tx.decisions.add(artifact("d1"), "sha256:evidence-1")
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add(artifact("d1", request_digest="sha256:other"), "sha256:evidence-2")
        with uow() as tx:
            assert tx.decisions.find("t1", "sha256:other", "sha256:evidence-2") is None
            assert len(tx.decisions.page("t1", limit=10)) == 1

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_one_request_over_one_evidence_is_retained_once(self, uow: UnitOfWorkFactory) -> None:
        """One request over one evidence is retained once."""
        # Without this a concurrent identical comparison would retain a second artifact, and find()
        # could return either.
        with uow() as tx:
            tx.decisions.add(artifact("d1"), "sha256:evidence-1")
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add(artifact("d2"), "sha256:evidence-1")
        with uow() as tx:
            # Another tenant, or other evidence, is another artifact.
            tx.decisions.add(artifact("d3", tenant="t2"), "sha256:evidence-1")
            tx.decisions.add(artifact("d4"), "sha256:evidence-2")
            tx.commit()
        with uow() as tx:
            assert [a.decision_id for a in tx.decisions.page("t1", limit=10)] == ["d4", "d1"]

    @pytest.mark.spec("§4.4 decision-revisions")
    def test_revisions_count_the_artifacts_of_one_compared_subject(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Revisions count the artifacts of one compared subject."""
        later = START + MICRO
        with uow() as tx:
            subjects: list[dict[str, Any]] = [
                {},
                {"request_digest": "sha256:request-2"},  # the subject: two artifacts
                {"start": later},
                {"end": END - MICRO},
                {"workflow_id": "wf2"},
                {"baseline": "v2", "candidate": "v1"},
                {"baseline": "v0"},
                {"candidate": "v3"},
                {"tenant": "t2"},
            ]
            for index, fields in enumerate(subjects):
                tx.decisions.add(artifact(f"d{index}", **fields), f"sha256:evidence-{index}")
            tx.commit()
        with uow() as tx:
            assert tx.decisions.revisions("t1", compare_request()) == 2
            # The policy is no part of the subject: a changed policy is the next revision.
            stricter = compare_request(policy=ComparisonPolicy(min_success_rate=0.9))
            assert tx.decisions.revisions("t1", stricter) == 2
            assert tx.decisions.revisions("t1", compare_request(start=later)) == 1
            assert (
                tx.decisions.revisions(
                    "t1", compare_request(baseline_version="v2", candidate_version="v1")
                )
                == 1
            )
            assert tx.decisions.revisions("t1", compare_request(candidate_version="v1")) == 0
            assert tx.decisions.revisions("t2", compare_request()) == 1
            assert tx.decisions.revisions("t3", compare_request()) == 0

    @pytest.mark.spec("§4.4 decision-history")
    def test_history_pages_newest_first_by_time_then_id(self, uow: UnitOfWorkFactory) -> None:
        """History pages newest first by time then id."""
        second = timedelta(seconds=1)
        # Four at one instant, ordered among themselves by id in code-point order ("1" < "B" < "a").
        made = [
            artifact("d-a"),
            artifact("d-B"),
            artifact("d-b"),
            artifact("d-1"),
            artifact("d-0", created_at=NOW + MICRO),
            artifact("d-z", created_at=NOW - second),
            artifact("d-w", created_at=NOW + second, workflow_id="wf2"),
            artifact("d-x", created_at=NOW + 2 * second, tenant="t2"),
        ]
        with uow() as tx:
            for index, item in enumerate(made):
                tx.decisions.add(attrs.evolve(item, request_digest=f"sha256:r{index}"), "sha256:e")
            tx.commit()
        with uow() as tx:
            newest = [a.decision_id for a in tx.decisions.page("t1", limit=100)]
            assert newest == ["d-w", "d-0", "d-b", "d-a", "d-B", "d-1", "d-z"]
            walked, before = [], None
            while True:
                page = tx.decisions.page("t1", limit=2, before=before)
                assert len(page) <= 2
                if not page:
                    break
                walked += [a.decision_id for a in page]
                before = (page[-1].created_at, page[-1].decision_id)
            assert walked == newest
            # The cursor is exclusive and works from the middle of one instant.
            assert [
                a.decision_id for a in tx.decisions.page("t1", limit=100, before=(NOW, "d-a"))
            ] == [
                "d-B",
                "d-1",
                "d-z",
            ]
            assert [
                a.decision_id for a in tx.decisions.page("t1", limit=100, workflow_id="wf")
            ] == [
                "d-0",
                "d-b",
                "d-a",
                "d-B",
                "d-1",
                "d-z",
            ]
            assert [
                a.decision_id
                for a in tx.decisions.page("t1", limit=2, workflow_id="wf", before=(NOW, "d-b"))
            ] == ["d-a", "d-B"]
            assert tx.decisions.page("t1", limit=10, workflow_id="other") == []
            assert [a.decision_id for a in tx.decisions.page("t2", limit=10)] == ["d-x"]
            assert tx.decisions.page("t3", limit=10) == []

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_schedules_are_stored_once_and_listed_per_tenant_oldest_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Schedules are stored once and listed per tenant oldest first."""
        made = [
            schedule("s-b"),
            schedule("s-B", name=None),
            schedule("s-a", created_at=NOW - MICRO),
            schedule("s-c", created_at=NOW + MICRO),
            schedule("s-x", tenant="t2"),
        ]
        with uow() as tx:
            for item in made:
                tx.decisions.add_schedule(item)
            tx.commit()
        with uow() as tx, pytest.raises(Conflict):
            tx.decisions.add_schedule(schedule("s-b", tenant="t2"))
        with uow() as tx:
            listed = tx.decisions.schedules("t1")
            assert [s.schedule_id for s in listed] == ["s-a", "s-B", "s-b", "s-c"]
            assert listed[1:3] == [made[1], made[0]]
            assert exact(listed[2]) == exact(made[0])
            assert tx.decisions.schedules("t2") == [made[4]]
            assert tx.decisions.schedules("t3") == []

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_due_schedules_of_every_tenant_oldest_occurrence_first(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Due schedules of every tenant oldest occurrence first."""
        with uow() as tx:
            for item in [
                schedule("s-late", next_run_at=NOW + MICRO),
                schedule("s-b", next_run_at=NOW),
                schedule("s-B", next_run_at=NOW, tenant="t2"),
                schedule("s-early", next_run_at=NOW - timedelta(days=3)),
                schedule("s-a", next_run_at=NOW - MICRO, tenant="t3"),
            ]:
                tx.decisions.add_schedule(item)
            tx.commit()
        with uow() as tx:
            assert [s.schedule_id for s in tx.decisions.due(NOW, limit=10)] == [
                "s-early",
                "s-a",
                "s-B",
                "s-b",
            ]  # due at next_run_at itself; ties by id
            assert [s.schedule_id for s in tx.decisions.due(NOW, limit=2)] == ["s-early", "s-a"]
            assert [s.schedule_id for s in tx.decisions.due(NOW + MICRO, limit=10)][-1] == "s-late"
            assert tx.decisions.due(NOW - timedelta(days=4), limit=10) == []
            (early,) = tx.decisions.due(NOW - timedelta(days=1), limit=10)
            assert early == schedule("s-early", next_run_at=NOW - timedelta(days=3))

    @pytest.mark.spec("§9.1 schedule-claims")
    def test_a_claim_moves_the_next_run_only_from_the_value_read(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A claim moves the next run only from the value read."""
        first, other = schedule("s1"), schedule("s2")
        with uow() as tx:
            tx.decisions.add_schedule(first)
            tx.decisions.add_schedule(other)
            tx.commit()
        following = NOW + timedelta(days=1)
        with uow() as tx:
            # A stale expectation (one microsecond off, or an older occurrence) claims nothing.
            assert tx.decisions.claim_occurrence("s1", NOW - MICRO, following) is False
            assert tx.decisions.claim_occurrence("s1", NOW - timedelta(days=1), following) is False
            assert tx.decisions.claim_occurrence("missing", NOW, following) is False
            tx.commit()
        assert stored(uow) == {"s1": first, "s2": other}
        with uow() as tx:  # a claim not committed is not kept
            assert tx.decisions.claim_occurrence("s1", NOW, following) is True
        assert stored(uow)["s1"] == first
        with uow() as tx:
            assert tx.decisions.claim_occurrence("s1", NOW, following) is True
            tx.commit()
        assert stored(uow) == {"s1": attrs.evolve(first, next_run_at=following), "s2": other}
        with uow() as tx:
            # The loser of a race held the old value: refused, and the winner's claim stands.
            assert tx.decisions.claim_occurrence("s1", NOW, NOW + timedelta(days=7)) is False
            tx.commit()
        assert stored(uow)["s1"].next_run_at == following

    @pytest.mark.spec("§4.4 decision-schedules")
    def test_a_run_is_recorded_on_its_schedule(self, uow: UnitOfWorkFactory) -> None:
        """A run is recorded on its schedule."""
        first, other = schedule("s1"), schedule("s2")
        with uow() as tx:
            tx.decisions.add_schedule(first)
            tx.decisions.add_schedule(other)
            tx.decisions.claim_occurrence("s1", NOW, NOW + timedelta(days=1))
            tx.commit()
        ran_at = NOW + timedelta(seconds=5, microseconds=7)
        with uow() as tx:
            tx.decisions.record_run("s1", ran_at, "d-9", None)
            tx.decisions.record_run("missing", ran_at, "d-9", None)
            tx.commit()
        claimed = attrs.evolve(first, next_run_at=NOW + timedelta(days=1))
        assert stored(uow) == {
            "s1": attrs.evolve(claimed, last_run_at=ran_at, last_decision_id="d-9"),
            "s2": other,
        }
        with uow() as tx:  # a failed occurrence replaces the last result
            tx.decisions.record_run("s1", ran_at + MICRO, None, "unknown source inventory é")
            tx.commit()
        assert stored(uow)["s1"] == attrs.evolve(
            claimed,
            last_run_at=ran_at + MICRO,
            last_decision_id=None,
            last_error="unknown source inventory é",
        )

    @pytest.mark.spec("§4.4 source-inventory")
    def test_a_source_inventory_is_read_back_with_its_digest(self, uow: UnitOfWorkFactory) -> None:
        """A source inventory is read back with its digest."""
        full = SourceInventory(
            event_id="inv-1",
            workflow_id="wf",
            workflow_version="v1",
            capture_start=NOW - timedelta(days=1),
            capture_end=NOW + MICRO,
            terminal_run_ids=("r2", "r10", "r1", "é"),
            windows=(
                SourceWindow(
                    source_window_id="w2", expected_events=0, event_ids_digest=ids_digest([])
                ),
                SourceWindow(
                    source_window_id="w1",
                    expected_events=10_000_000,
                    event_ids_digest="sha256:" + "0" * 64,
                ),
            ),
        )
        empty = attrs.evolve(full, event_id="inv-2", terminal_run_ids=(), windows=())
        with uow() as tx:
            tx.evidence.add_inventories("t1", [digested(full), digested(empty)])
            tx.evidence.add_inventories("t2", [digested(attrs.evolve(full, workflow_version="v9"))])
            tx.commit()
        with uow() as tx:
            assert tx.evidence.inventory("t1", "inv-1") == digested(full)
            assert tx.evidence.inventory("t1", "inv-2") == digested(empty)
            assert tx.evidence.inventory("t2", "inv-1").item.workflow_version == "v9"
            assert tx.evidence.inventory("t2", "inv-2") is None
            assert tx.evidence.inventory("t1", "inv-3") is None
