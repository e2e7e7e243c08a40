"""The memory and PostgreSQL adapters mirror each other and state shared facts once, in the core.

Module for module the same names; the system retention row, which runs a legal hold covers, and
the conflict messages are the core's (``SYSTEM_POLICY``, ``LegalHold.covers``,
``errors.exists``/``errors.missing``), whichever adapter stores the data.
"""

import itertools
import pkgutil
from types import ModuleType

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ecp_core.memory
import ecp_postgres
from ecp_core.errors import Conflict, NotFound, exists, missing
from ecp_core.memory import MemoryStore
from ecp_core.retention.model import SYSTEM_POLICY, SYSTEM_TENANT, LegalHold
from ecp_core.testing.samples import NOW, run
from ecp_core.testing.strategies.audit import build_chain
from ecp_core.types import RunStatus
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.contract

MEMORY_PLUMBING = {"tables", "store", "artifacts"}
POSTGRES_PLUMBING = {
    "database",
    "rows",
    "errors",
    "embedded",
    "runtime",
    "operations",
    "migrations",
    "evidence_batches",  # the evidence store's batch writes (COPY, staging merge; ADR 0060)
    "session",  # the unit of work's connection: batched writes, remembered reads (ADR 0059)
    "notifications",  # the LISTEN/NOTIFY listener (ADR 0063)
    "run_search",  # the run list's filter as SQL, for runs.py's search (ADR 0082)
    "audit_chains",  # chains and heads read in one snapshot for verification (ADR 0061)
    "run_context",  # what a run's attempts read besides the run, joined to other reads (ADR 0067)
    "unit",  # the unit of work: one transaction on one pooled connection
    "shared",  # a transaction shared by savepoint units of work (ADR 0102)
}


def _modules(package: ModuleType) -> set[str]:
    return {module.name for module in pkgutil.iter_modules(package.__path__)}


def test_the_adapters_mirror_each_other_module_for_module():
    """One module per storage area in both adapters, by the same name; the rest is plumbing."""
    areas = _modules(ecp_core.memory) - MEMORY_PLUMBING
    assert areas == _modules(ecp_postgres) - POSTGRES_PLUMBING
    assert {"graphs", "runs", "evidence", "debugger", "reconciliation", "decisions"} <= areas


@pytest.fixture(params=["memory", "postgres"])
def uow(request):
    """A UnitOfWorkFactory over a fresh, empty store of each implementation."""
    if request.param == "memory":
        return MemoryStore().unit_of_work
    return request.getfixturevalue("postgres_store").unit_of_work


def test_the_system_row_is_the_core_s(uow):
    """Every store starts with the core's system retention row (keep forever)."""
    with uow() as tx:
        assert tx.retention.policy(SYSTEM_TENANT) == SYSTEM_POLICY


def _hold(hold_id, tenant, run_id=None, *, released=False):
    return LegalHold(
        hold_id=hold_id,
        tenant_id=tenant,
        reason="r",
        created_at=NOW,
        created_by="a",
        run_id=run_id,
        released_at=NOW if released else None,
        released_by="a" if released else None,
    )


def test_conflict_and_not_found_messages_are_the_core_s(uow):
    """A taken identity and a missing row read the same on every store."""
    with uow() as tx:
        tx.runs.add(run("r1"))
        tx.retention.add_hold(_hold("h1", "t1"))
        with pytest.raises(Conflict) as raised:
            tx.retention.add_hold(_hold("h1", "t2"))
        assert raised.value.detail == exists("hold", "h1").detail
        with pytest.raises(NotFound) as raised:
            tx.retention.save_hold(_hold("h2", "t1"))
        assert raised.value.detail == missing("hold", "h2").detail
    # A batching store reports a refused write by the next statement or the commit, and the
    # transaction ends with it (ADR 0059): checked last, in a unit of work of its own.
    with uow() as tx, pytest.raises(NotFound) as raised:
        tx.runs.save(run("r2"))
        tx.runs.count("t1")
    assert raised.value.detail == missing("run", "r2").detail
    with uow() as tx:
        tx.runs.add(run("r1"))
        tx.commit()
    with uow() as tx, pytest.raises(Conflict) as raised:
        tx.runs.add(run("r1"))
        tx.runs.count("t1")
    assert raised.value.detail == exists("run", "r1").detail


_examples = itertools.count()
_runs = ("r0", "r1", "r2")
holds = st.lists(
    st.tuples(st.sampled_from(["own", "other"]), st.sampled_from([None, *_runs]), st.booleans()),
    max_size=4,
)


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(drawn=holds)
def test_hold_coverage_is_the_core_s(fresh_database, drawn):
    """Purge selection leaves out exactly the runs an active hold covers (``LegalHold.covers``)."""
    example = next(_examples)
    tenant, other = f"t{example}", f"t{example}-other"
    ids = {name: f"{tenant}-{name}" for name in _runs}
    placed = [
        _hold(f"{tenant}-h{index}", tenant if whose == "own" else other, ids.get(name), released=r)
        for index, (whose, name, r) in enumerate(drawn)
    ]
    expected = [ids[name] for name in _runs if not any(h.covers(tenant, ids[name]) for h in placed)]
    later = NOW.replace(year=NOW.year + 1)
    with PostgresStore(fresh_database, min_size=1, max_size=1) as postgres:
        postgres.pool.wait()
        for unit_of_work in (MemoryStore().unit_of_work, postgres.unit_of_work):
            with unit_of_work() as tx:
                for offset, name in enumerate(_runs):
                    tx.runs.add(run(ids[name], tenant, RunStatus.COMPLETED, offset=offset))
                    for record in build_chain([{}], run_id=ids[name])[0]:
                        tx.audit.append(
                            attrs.evolve(record, tenant_id=tenant, audit_id=f"{ids[name]}-a")
                        )
                for hold in placed:
                    tx.retention.add_hold(hold)
                tx.commit()
            with unit_of_work() as tx:
                assert [r.run_id for r in tx.runs.expired(tenant, later, 10)] == expected
                assert [r.run_id for r in tx.audit.aged(tenant, later, 10)] == expected
