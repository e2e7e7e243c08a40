"""Retention repository, and the run and audit queries the TTL sweeps select with."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.audit import crypto_erase
from ecp_core.errors import Conflict, NotFound
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.retention.model import MAX_TTL_SECONDS, SYSTEM_TENANT, ErasureStepStatus, LegalHold
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.retention.samples import entry, hold, other_chain, policy
from ecp_core.testing.samples import NOW, run
from ecp_core.testing.strategies.audit import START, build_chain
from ecp_core.types import RunStatus


class RetentionRepositoryConformance(StoreSuite):
    """Retention: policies, legal holds, the retention log, and what the TTL sweeps select."""

    @pytest.mark.spec("§2.8 retention-policy-rows", "§9 migrations")
    def test_the_system_row_is_seeded_with_keep_forever(self, uow: UnitOfWorkFactory) -> None:
        """The system row is seeded with keep forever."""
        with uow() as tx:
            system = tx.retention.policy(SYSTEM_TENANT)
            assert system is not None
            assert system.tenant_id == SYSTEM_TENANT
            assert (system.audit_ttl_seconds, system.run_ttl_seconds) == (None, None)
            assert system.enabled is True
            assert tx.retention.policy("t1") is None
            assert tx.retention.policy_tenants() == []

    @pytest.mark.spec("§2.8 retention-policy-rows")
    def test_put_policy_stores_and_replaces(self, uow: UnitOfWorkFactory) -> None:
        """A retention policy is stored and replaced whole."""
        with uow() as tx:
            tx.retention.put_policy(policy("t2", audit=None))
            tx.retention.put_policy(policy("t1"))
            tx.commit()
        with uow() as tx:
            assert tx.retention.policy("t1") == policy("t1")
            assert tx.retention.policy("t2") == policy("t2", audit=None)
            assert tx.retention.policy_tenants() == ["t1", "t2"]
            replaced = policy("t1", audit=MAX_TTL_SECONDS, run_ttl=None, enabled=False, offset=5)
            tx.retention.put_policy(replaced)
            tx.commit()
        with uow() as tx:
            assert tx.retention.policy("t1") == replaced
            assert tx.retention.policy_tenants() == ["t1", "t2"]

    @pytest.mark.spec("§2.8 retention-policy-rows")
    def test_replacing_the_system_row_keeps_it_out_of_policy_tenants(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Replacing the system row keeps it out of policy tenants."""
        system = policy(SYSTEM_TENANT, audit=60, run_ttl=120)
        with uow() as tx:
            tx.retention.put_policy(system)
            tx.commit()
        with uow() as tx:
            assert tx.retention.policy(SYSTEM_TENANT) == system
            assert tx.retention.policy_tenants() == []

    def test_an_uncommitted_policy_is_rolled_back(self, uow: UnitOfWorkFactory) -> None:
        """An uncommitted policy is rolled back."""
        with uow() as tx:
            tx.retention.put_policy(policy("t1"))
            assert tx.retention.policy("t1") == policy("t1")
        with uow() as tx:
            assert tx.retention.policy("t1") is None
            assert tx.retention.policy_tenants() == []

    def test_lock_tenant_in_both_modes_leaves_the_transaction_usable(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Lock tenant in both modes leaves the transaction usable."""
        with uow() as tx:
            tx.retention.lock_tenant("t1", exclusive=False)
            tx.retention.lock_tenant("t1", exclusive=False)
            tx.retention.lock_tenant("t1", exclusive=True)
            tx.retention.lock_tenant("t2", exclusive=True)
            tx.retention.add_hold(hold("h1"))
            tx.commit()
        with uow() as tx:
            tx.retention.lock_tenant("t1", exclusive=True)
            assert tx.retention.holds("t1") == [hold("h1")]

    @pytest.mark.spec("§2.8 legal-hold")
    def test_holds_are_stored_listed_oldest_first_and_scoped(self, uow: UnitOfWorkFactory) -> None:
        """Holds are stored listed oldest first and scoped."""
        tenant_wide = hold("h2", offset=1)
        run_scoped = hold("h1", run_id="run-1")
        same_moment = hold("h0", run_id="run-2", offset=1)
        other = hold("h3", tenant="t2")
        with uow() as tx:
            for value in (tenant_wide, run_scoped, same_moment, other):
                tx.retention.add_hold(value)
            tx.commit()
        with uow() as tx:
            assert tx.retention.hold("t1", "h1") == run_scoped
            assert tx.retention.hold("t1", "h2") == tenant_wide
            assert tx.retention.hold("t2", "h1") is None
            assert tx.retention.hold("t1", "h3") is None
            assert tx.retention.hold("t1", "nope") is None
            assert tx.retention.holds("t1") == [run_scoped, same_moment, tenant_wide]
            assert tx.retention.holds("t1", active_only=True) == [
                run_scoped,
                same_moment,
                tenant_wide,
            ]
            assert tx.retention.holds("t2") == [other]
            assert tx.retention.holds("t3") == []

    @pytest.mark.spec("§3.3 legal-hold-blocks-erasure")
    def test_a_released_hold_is_no_longer_active(self, uow: UnitOfWorkFactory) -> None:
        """A released hold is no longer active."""
        with uow() as tx:
            tx.retention.add_hold(hold("h1", run_id="run-1"))
            tx.retention.add_hold(hold("h2", offset=1))
            tx.commit()
        released = attrs.evolve(
            hold("h1", run_id="run-1"), released_at=NOW + timedelta(hours=1), released_by="key-2"
        )
        with uow() as tx:
            tx.retention.save_hold(released)
            tx.commit()
        with uow() as tx:
            assert not tx.retention.hold("t1", "h1").active
            assert tx.retention.hold("t1", "h1") == released
            assert tx.retention.holds("t1") == [released, hold("h2", offset=1)]
            assert tx.retention.holds("t1", active_only=True) == [hold("h2", offset=1)]

    def test_save_hold_needs_a_stored_hold_of_the_same_tenant(self, uow: UnitOfWorkFactory) -> None:
        """Save hold needs a stored hold of the same tenant."""
        with uow() as tx:
            tx.retention.add_hold(hold("h1"))
            tx.commit()
        with uow() as tx:
            with pytest.raises(NotFound):
                tx.retention.save_hold(hold("nope"))
            with pytest.raises(NotFound):
                tx.retention.save_hold(attrs.evolve(hold("h1", tenant="t2"), released_by="x"))
            assert tx.retention.hold("t1", "h1") == hold("h1")
            assert tx.retention.holds("t2") == []

    def test_a_duplicate_hold_id_is_a_conflict_in_any_tenant(self, uow: UnitOfWorkFactory) -> None:
        """A duplicate hold id is a conflict in any tenant."""
        with uow() as tx:
            tx.retention.add_hold(hold("h1"))
            with pytest.raises(Conflict):
                tx.retention.add_hold(hold("h1", offset=3))
            with pytest.raises(Conflict):
                tx.retention.add_hold(hold("h1", tenant="t2"))
            tx.retention.add_hold(hold("h2"))  # the transaction is still usable
            tx.commit()
        with uow() as tx:
            assert tx.retention.holds("t1") == [hold("h1"), hold("h2")]
            assert tx.retention.holds("t2") == []

    @pytest.mark.spec("§2.8 retention-audit-log")
    def test_the_log_pages_newest_first(self, uow: UnitOfWorkFactory) -> None:
        """The log pages newest first."""
        detail = {"keys": ["a", "b"], "counts": {"events": 2}, "note": "é", "none": None}
        with uow() as tx:
            for entry_id in ("e-03", "e-01", "e-05", "e-02", "e-04"):
                tx.retention.append_log(entry(entry_id, detail=detail))
            tx.retention.append_log(entry("e-06", tenant="t2", run_id=None))
            tx.commit()
        with uow() as tx:
            newest = tx.retention.log("t1", limit=3)
            assert [e.entry_id for e in newest] == ["e-05", "e-04", "e-03"]
            assert newest[0] == entry("e-05", detail=detail)
            older = tx.retention.log("t1", limit=3, before="e-03")
            assert [e.entry_id for e in older] == ["e-02", "e-01"]
            assert tx.retention.log("t1", limit=3, before="e-01") == []
            assert [e.entry_id for e in tx.retention.log("t1", limit=10, before="e-99")] == [
                "e-05",
                "e-04",
                "e-03",
                "e-02",
                "e-01",
            ]
            assert tx.retention.log("t2", limit=10) == [entry("e-06", tenant="t2", run_id=None)]
            assert tx.retention.log("t3", limit=10) == []

    @pytest.mark.spec("§2.8 retention-audit-log")
    def test_log_entries_keep_every_field(self, uow: UnitOfWorkFactory) -> None:
        """Log entries keep every field."""
        failed = attrs.evolve(
            entry("e-1", run_id=None),
            status=ErasureStepStatus.FAILED,
            newly_erased=0,
            detail={"error": "x"},
        )
        with uow() as tx:
            tx.retention.append_log(failed)
            tx.commit()
        with uow() as tx:
            assert tx.retention.log("t1", limit=1) == [failed]

    @pytest.mark.spec("§3.3 ttl-terminal-runs-only", "§9.1 ttl-clocks")
    def test_expired_selects_terminal_runs_updated_strictly_before(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Expired selects terminal runs updated strictly before."""
        with uow() as tx:
            for offset, status in enumerate(RunStatus):
                tx.runs.add(run(f"run-{status.value.lower()}", status=status, offset=offset))
            tx.runs.add(run("run-late", status=RunStatus.COMPLETED, offset=100))
            tx.runs.add(run("run-other", tenant="t2", status=RunStatus.FAILED))
            tx.commit()
        with uow() as tx:
            found = tx.runs.expired("t1", NOW + timedelta(seconds=100), 10)
            assert [r.run_id for r in found] == ["run-completed", "run-failed", "run-canceled"]
            completed_at = list(RunStatus).index(RunStatus.COMPLETED)
            assert found[0] == run("run-completed", status=RunStatus.COMPLETED, offset=completed_at)
            assert [r.run_id for r in tx.runs.expired("t1", NOW + timedelta(seconds=101), 10)] == [
                "run-completed",
                "run-failed",
                "run-canceled",
                "run-late",
            ]
            assert tx.runs.expired("t1", NOW + timedelta(seconds=4), 10) == []
            assert [r.run_id for r in tx.runs.expired("t2", NOW + timedelta(seconds=1), 10)] == [
                "run-other"
            ]
            assert tx.runs.expired("t2", NOW, 10) == []
            assert tx.runs.expired("t3", NOW + timedelta(days=1), 10) == []

    @pytest.mark.spec("§9.1 purge-worker")
    def test_expired_skips_erased_runs(self, uow: UnitOfWorkFactory) -> None:
        """Expired skips erased runs."""
        done = run("run-1", status=RunStatus.COMPLETED)
        with uow() as tx:
            tx.runs.add(done)
            tx.runs.add(run("run-2", status=RunStatus.FAILED, offset=1))
            tx.runs.save(attrs.evolve(done, output=None, erased_at=NOW + timedelta(hours=1)))
            tx.commit()
        with uow() as tx:
            assert tx.runs.get("t1", "run-1").erased_at == NOW + timedelta(hours=1)
            found = tx.runs.expired("t1", NOW + timedelta(days=1), 10)
            assert [r.run_id for r in found] == ["run-2"]
            assert tx.runs.ids_of("t1") == ["run-1", "run-2"]

    @pytest.mark.spec("§9.1 purge-worker")
    def test_expired_is_oldest_first_by_update_then_id_and_limited(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Expired is oldest first by update then id and limited."""
        with uow() as tx:
            tx.runs.add(run("run-a", status=RunStatus.FAILED, offset=3))
            tx.runs.add(run("run-b", status=RunStatus.COMPLETED, offset=1))
            tx.runs.add(run("run-d", status=RunStatus.COMPLETED, offset=2))
            tx.runs.add(run("run-c", status=RunStatus.COMPLETED, offset=2))
            tx.commit()
        later = NOW + timedelta(minutes=1)
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", later, 10)] == [
                "run-b",
                "run-c",
                "run-d",
                "run-a",
            ]
            assert [r.run_id for r in tx.runs.expired("t1", later, 2)] == ["run-b", "run-c"]
            # updated_at, not created_at, decides.
            moved = attrs.evolve(
                run("run-b", status=RunStatus.COMPLETED, offset=1),
                updated_at=NOW + timedelta(hours=1),
            )
            tx.runs.save(moved)
            assert [r.run_id for r in tx.runs.expired("t1", later, 10)] == [
                "run-c",
                "run-d",
                "run-a",
            ]

    def test_ids_of_and_tenants(self, uow: UnitOfWorkFactory) -> None:
        """Run ids of a tenant and the tenants with runs are listed in order."""
        with uow() as tx:
            assert tx.runs.tenants() == []
            assert tx.runs.ids_of("t1") == []
            for run_id in ("run-2", "run-0", "run-1"):
                tx.runs.add(run(run_id, status=RunStatus.COMPLETED))
            tx.runs.add(run("run-3", tenant="t3"))
            tx.runs.add(run("run-4", tenant="t2", status=RunStatus.WAITING_APPROVAL))
            tx.commit()
        with uow() as tx:
            assert tx.runs.ids_of("t1") == ["run-0", "run-1", "run-2"]
            assert tx.runs.ids_of("t2") == ["run-4"]
            assert tx.runs.ids_of("t9") == []
            assert tx.runs.tenants() == ["t1", "t2", "t3"]

    @pytest.mark.spec("§9.1 ttl-clocks")
    def test_aged_selects_unerased_version_2_records_created_strictly_before(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Aged selects unerased version 2 records created strictly before."""
        records, _ = build_chain([{"stdout": "a"}, {"input_snapshot": {"email": "a@b.c"}}, {}, {}])
        legacy = other_chain("run-v1", "v1-", digest_version=1)
        foreign = other_chain("run-t2", "t2-", tenant="t2")
        with uow() as tx:
            for record in [*records, *legacy, *foreign]:
                tx.audit.append(record)
            tx.audit.store_erasure(crypto_erase(records[1], "request", START))
            tx.commit()
        forever = START + timedelta(days=1)
        with uow() as tx:
            found = tx.audit.aged("t1", forever, 10)
            assert [r.audit_id for r in found] == ["audit-1", "audit-3", "audit-4"]
            assert found[0] == records[0]
            assert [r.audit_id for r in tx.audit.aged("t1", records[2].created_at, 10)] == [
                "audit-1"
            ]
            assert tx.audit.aged("t1", records[0].created_at, 10) == []
            assert [r.audit_id for r in tx.audit.aged("t2", forever, 10)] == [
                "t2-audit-1",
                "t2-audit-2",
            ]
            assert tx.audit.aged("t3", forever, 10) == []

    @pytest.mark.spec("§9.1 purge-worker")
    def test_aged_is_oldest_first_by_creation_then_id_and_limited(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Aged is oldest first by creation then id and limited."""
        first, _ = build_chain([{}, {}, {}])
        second = other_chain("run-2", "r2-", shift=timedelta(milliseconds=500), count=2)
        tied = other_chain("run-3", "a-", count=1)  # created with audit-1, sorts before it by id
        with uow() as tx:
            for record in [*second, *first, *tied]:
                tx.audit.append(record)
            tx.commit()
        forever = START + timedelta(days=1)
        with uow() as tx:
            assert [r.audit_id for r in tx.audit.aged("t1", forever, 10)] == [
                "a-audit-1",
                "audit-1",
                "r2-audit-1",
                "audit-2",
                "r2-audit-2",
                "audit-3",
            ]
            assert [r.audit_id for r in tx.audit.aged("t1", forever, 2)] == ["a-audit-1", "audit-1"]

    @pytest.mark.spec("§3.3 legal-hold-blocks-erasure", "§9.1 purge-worker")
    def test_selection_skips_held_runs_so_they_cannot_starve_the_purge(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Selection skips held runs so they cannot starve the purge."""
        with uow() as tx:
            for name in ("held-1", "held-2", "free"):
                tx.runs.add(
                    run(
                        name,
                        status=RunStatus.COMPLETED,
                        offset={"held-1": 0, "held-2": 1, "free": 2}[name],
                    )
                )
            for record in [
                *build_chain([{}], run_id="held-1")[0],
                *build_chain([{}], run_id="free")[0],
            ]:
                tx.audit.append(attrs.evolve(record, audit_id=f"{record.run_id}-{record.attempt}"))
            for index, held_run in enumerate(("held-1", "held-2")):
                tx.retention.add_hold(
                    LegalHold(
                        hold_id=f"h{index}",
                        tenant_id="t1",
                        run_id=held_run,
                        reason="r",
                        created_at=NOW,
                        created_by="a",
                    )
                )
            tx.commit()
        later = NOW + timedelta(days=1)
        with uow() as tx:
            assert [r.run_id for r in tx.runs.expired("t1", later, 1)] == ["free"]
            assert [r.run_id for r in tx.audit.aged("t1", later, 1)] == ["free"]
