"""Audit repository: append-only chains under a head that cannot fork."""

import attrs
import pytest

from ecp_core.audit import crypto_erase
from ecp_core.errors import ChainConflict, Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.strategies.audit import START, build_chain


class AuditRepositoryConformance(StoreSuite):
    """Audit records: append-only chains under a head that cannot fork."""

    @pytest.mark.spec("C4 chain-per-run")
    def test_append_advances_the_head(self, uow: UnitOfWorkFactory) -> None:
        """Appending a record advances the run's head; records read back per run, id and deployment."""
        records, head = build_chain([{"stdout": "a"}, {"input_snapshot": {"k": [1, 2.5]}}, {}])
        with uow() as tx:
            assert tx.audit.head("run-1") is None
            for record in records:
                tx.audit.append(record)
            tx.commit()
        with uow() as tx:
            assert tx.audit.head("run-1") == head
            assert tx.audit.for_run("t1", "run-1") == records
            assert tx.audit.for_run("t2", "run-1") == []
            assert tx.audit.get("t1", "audit-2") == records[1]
            assert tx.audit.get("t2", "audit-2") is None
            assert tx.audit.for_deployment("t1", "dep") == records
            assert tx.audit.for_deployment("t1", "dep", "run-1") == records
            assert tx.audit.for_deployment("t1", "other") == []

    @pytest.mark.spec("C4 chain-per-run")
    def test_a_record_that_does_not_extend_the_head_is_refused(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """A record that does not extend the head is refused."""
        records, _ = build_chain([{}, {}, {}])
        with uow() as tx:
            tx.audit.append(records[0])
            with pytest.raises(ChainConflict):
                tx.audit.append(records[2])
            with pytest.raises(ChainConflict):
                tx.audit.append(records[0])
            tx.audit.append(records[1])
            tx.commit()
        with uow() as tx:
            assert len(tx.audit.for_run("t1", "run-1")) == 2

    @pytest.mark.spec("C4 chain-per-run")
    def test_chains_are_per_run(self, uow: UnitOfWorkFactory) -> None:
        """Each run has its own chain; a deployment lists every run's records."""
        first, _ = build_chain([{}, {}], run_id="run-1")
        second, _ = build_chain([{}], run_id="run-2")
        second = [attrs.evolve(r, audit_id="other-" + r.audit_id) for r in second]
        with uow() as tx:
            for record in [*first, *second]:
                tx.audit.append(record)
            tx.commit()
        with uow() as tx:
            assert tx.audit.for_run("t1", "run-2") == second
            assert [r.audit_id for r in tx.audit.for_deployment("t1", "dep")] == [
                "audit-1",
                "audit-2",
                "other-audit-1",
            ]

    @pytest.mark.spec("§3.2 crypto-erase-v2")
    def test_erasure_changes_only_personal_data(self, uow: UnitOfWorkFactory) -> None:
        """An erasure replaces only personal data, once, and keeps the head."""
        records, _ = build_chain([{"stdout": "secret", "input_snapshot": {"email": "a@b.c"}}])
        with uow() as tx:
            tx.audit.append(records[0])
            erased = crypto_erase(records[0], "request", START)
            tx.audit.store_erasure(erased)
            with pytest.raises(Conflict):
                tx.audit.store_erasure(attrs.evolve(erased, node_id="forged"))
            tx.commit()
        with uow() as tx:
            assert tx.audit.get("t1", "audit-1") == erased
            assert tx.audit.head("run-1").record_digest == records[0].record_digest

    @pytest.mark.spec("§4.1 deployment-audits")
    def test_deployment_records_page_by_run_and_attempt(self, uow: UnitOfWorkFactory) -> None:
        """Deployment records page by run and attempt."""
        first, _ = build_chain([{}, {}, {}], run_id="run-a")
        second, _ = build_chain([{}, {}], run_id="run-b")
        second = [attrs.evolve(r, audit_id="b-" + r.audit_id) for r in second]
        with uow() as tx:
            for record in [*second, *first]:
                tx.audit.append(record)
            tx.commit()
        with uow() as tx:
            page = tx.audit.for_deployment("t1", "dep", limit=2)
            assert [(r.run_id, r.attempt) for r in page] == [("run-a", 1), ("run-a", 2)]
            rest = tx.audit.for_deployment("t1", "dep", limit=10, after=("run-a", 2))
            assert [(r.run_id, r.attempt) for r in rest] == [
                ("run-a", 3),
                ("run-b", 1),
                ("run-b", 2),
            ]
            assert tx.audit.for_deployment("t1", "dep", "run-b", after=("run-b", 1)) == [second[1]]
