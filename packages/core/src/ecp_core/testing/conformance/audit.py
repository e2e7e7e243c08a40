"""Audit repository: append-only chains under a head that cannot fork."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.audit import crypto_erase
from ecp_core.audit.settings import AuditSettings
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

    @pytest.mark.spec("§2.3 audit-verification")
    def test_chains_read_records_and_heads_together(self, uow: UnitOfWorkFactory) -> None:
        """Verification's reads: each run's records with its head, in the order asked (ADR 0061)."""
        first, first_head = build_chain([{}, {"stdout": "x"}], run_id="run-b")
        second, second_head = build_chain([{}, {}, {}], run_id="run-a", digest_version=3)
        second = [attrs.evolve(r, audit_id="a-" + r.audit_id) for r in second]
        with uow() as tx:
            for record in [*first, *second]:
                tx.audit.append(record)
            tx.commit()
        with uow() as tx:
            assert tx.audit.chain_run_ids("t1", "dep") == ["run-a", "run-b"]
            assert tx.audit.chain_run_ids("t2", "dep") == []
            assert tx.audit.chain_run_ids("t1", "other") == []
            chains = tx.audit.chains("t1", ["run-b", "missing", "run-a", "run-b"])
            assert [(c.run_id, list(c.records), c.head) for c in chains] == [
                ("run-b", first, first_head),
                ("missing", [], None),
                ("run-a", second, second_head),
                ("run-b", first, first_head),
            ]
            (other_tenant,) = tx.audit.chains("t2", ["run-a"])
            assert other_tenant.records == ()
            assert tx.audit.chains("t1", []) == []

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

    @pytest.mark.spec("§9 salted-commitments")
    def test_a_version_3_record_reads_back_with_its_salt(self, uow: UnitOfWorkFactory) -> None:
        """A version 3 record's salt is stored (apart) and joined back on every read."""
        records, _ = build_chain([{"stdout": "yes"}, {"input_snapshot": True}], digest_version=3)
        with uow() as tx:
            tx.audit.append(records[0])  # rolled back: neither the record nor its salt stays
        with uow() as tx:
            assert tx.audit.get("t1", "audit-1") is None
            for record in records:
                tx.audit.append(record)
            tx.commit()
        with uow() as tx:
            assert tx.audit.for_run("t1", "run-1") == records
            assert tx.audit.get("t1", "audit-2") == records[1]
            assert tx.audit.for_deployment("t1", "dep") == records
            assert all(record.pii_salt is not None for record in tx.audit.for_run("t1", "run-1"))

    @pytest.mark.spec("§9 salt-erasure")
    def test_erasure_destroys_a_version_3_salt(self, uow: UnitOfWorkFactory) -> None:
        """Erasing a version 3 record removes its salt with its personal data, and only then."""
        records, _ = build_chain([{"input_snapshot": {"ok": True}}, {}], digest_version=3)
        erased = crypto_erase(records[0], "request", START)
        with uow() as tx:
            for record in records:
                tx.audit.append(record)
            with pytest.raises(Conflict):
                tx.audit.store_erasure(attrs.evolve(erased, pii_salt=records[0].pii_salt))
            tx.audit.store_erasure(erased)
            tx.commit()
        with uow() as tx:
            assert tx.audit.get("t1", "audit-1") == erased
            assert tx.audit.get("t1", "audit-1").pii_salt is None
            assert tx.audit.get("t1", "audit-2") == records[1]

    @pytest.mark.spec("§9.1 ttl-clocks", "§9 salt-erasure")
    def test_aged_lists_version_3_records_until_erased(self, uow: UnitOfWorkFactory) -> None:
        """The audit TTL sweep finds unerased version 3 records, with their salts."""
        records, _ = build_chain([{}, {}], digest_version=3)
        later = START + timedelta(days=1)
        with uow() as tx:
            for record in records:
                tx.audit.append(record)
            tx.audit.store_erasure(crypto_erase(records[1], "request", START))
            tx.commit()
        with uow() as tx:
            assert tx.audit.aged("t1", later, 10) == [records[0]]

    @pytest.mark.spec("§9 audit-settings")
    def test_settings_are_stored_per_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A tenant's audit settings are stored, replaced, and never seen by another tenant."""
        chosen = AuditSettings(tenant_id="t1", digest_version=3, updated_at=START, updated_by="a")
        with uow() as tx:
            assert tx.audit.settings("t1") is None
            tx.audit.save_settings(chosen)
            tx.commit()
        back = attrs.evolve(chosen, digest_version=2, updated_at=START + timedelta(seconds=1))
        with uow() as tx:
            assert tx.audit.settings("t1") == chosen
            assert tx.audit.settings("t2") is None
            tx.audit.save_settings(back)  # not committed: rolled back
        with uow() as tx:
            assert tx.audit.settings("t1") == chosen
            tx.audit.save_settings(back)
            tx.commit()
        with uow() as tx:
            assert tx.audit.settings("t1") == back
