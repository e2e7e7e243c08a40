"""Child runs in the run and retention ports: listing by parent, and what a parent's hold covers.

A child run keeps its ancestors (``Run.ancestor_run_ids``, parent first). The run repository
lists a parent's children in id order, only in its tenant; purge selection (``expired`` runs and
``aged`` audit records) leaves out every run a hold on an ancestor covers, and every child run
with an ancestor that has not ended (ADR 0046).
"""

import attrs
import pytest

from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.retention.model import LegalHold
from ecp_core.runs.run.model import Run
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW, run
from ecp_core.testing.strategies.audit import build_chain
from ecp_core.types import RunStatus

LATER = NOW.replace(year=NOW.year + 1)


def child(run_id: str, *ancestors: str, status: RunStatus = RunStatus.COMPLETED) -> Run:
    """A run of tenant ``t1`` below ``ancestors`` (parent first), ``status``, long ago updated."""
    base = run(run_id, "t1", status, offset=len(ancestors))
    return attrs.evolve(
        base, parent_run_id=ancestors[0] if ancestors else None, ancestor_run_ids=ancestors
    )


def hold_on(run_id: str | None, hold_id: str = "h1") -> LegalHold:
    """An active hold of tenant ``t1`` on ``run_id`` (None: the whole tenant)."""
    return LegalHold(
        hold_id=hold_id, tenant_id="t1", reason="r", created_at=NOW, created_by="a", run_id=run_id
    )


class ChildRunsConformance(StoreSuite):
    """Children listed by parent; holds and live ancestors keep descendants from the purge."""

    @pytest.mark.spec("§2.1 child-run-listing")
    def test_children_list_by_parent_in_id_order_and_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A parent's children page by run id; another parent's and another tenant's are left out."""
        with uow() as tx:
            tx.runs.add(child("p"))
            for name in ("c3", "c1", "c2"):
                tx.runs.add(child(name, "p"))
            tx.runs.add(child("g1", "c1", "p"))
            tx.runs.add(attrs.evolve(child("x1", "p"), tenant_id="t2"))
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "g1") == child("g1", "c1", "p")
            listed = [r.run_id for r in tx.runs.children("t1", "p", limit=2)]
            assert listed == ["c1", "c2"]
            assert [r.run_id for r in tx.runs.children("t1", "p", limit=5, after="c2")] == ["c3"]
            assert [r.run_id for r in tx.runs.children("t1", "c1", limit=5)] == ["g1"]
            assert tx.runs.children("t2", "c1", limit=5) == []
            assert tx.runs.children("t1", "nope", limit=5) == []

    @pytest.mark.spec("§3.3 hold-covers-descendants")
    def test_a_hold_on_a_parent_covers_its_descendants_in_selection(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Held parent: it, its child and grandchild leave purge selection; a sibling tree stays."""
        with uow() as tx:
            for name, ancestors in (
                ("p", ()),
                ("c", ("p",)),
                ("g", ("c", "p")),
                ("q", ()),
                ("d", ("q",)),
            ):
                tx.runs.add(child(name, *ancestors))
                for record in build_chain([{}], run_id=name)[0]:
                    tx.audit.append(attrs.evolve(record, tenant_id="t1", audit_id=f"{name}-a"))
            tx.retention.add_hold(hold_on("c"))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", LATER, 10)] == ["p", "q", "d"]
            assert sorted(r.run_id for r in tx.audit.aged("t1", LATER, 10)) == ["d", "p", "q"]
            tx.retention.add_hold(hold_on("p", "h2"))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", LATER, 10)] == ["q", "d"]
            assert sorted(r.run_id for r in tx.audit.aged("t1", LATER, 10)) == ["d", "q"]

    @pytest.mark.spec("§3.3 hold-covers-descendants")
    def test_a_child_of_a_live_parent_is_never_selected_for_ttl_erasure(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """An ended child whose parent (or grandparent) has not ended is not TTL-expired."""
        with uow() as tx:
            tx.runs.add(child("p", status=RunStatus.WAITING_INTERRUPT))
            tx.runs.add(child("c", "p"))
            tx.runs.add(child("g", "c", "p"))
            tx.runs.add(child("q"))
            tx.runs.add(child("d", "q", status=RunStatus.FAILED))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", LATER, 10)] == ["q", "d"]
            tx.runs.save(attrs.evolve(child("p"), updated_at=LATER))
            tx.commit()
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", LATER, 10)] == ["q", "c", "d", "g"]


__all__ = ["ChildRunsConformance"]
