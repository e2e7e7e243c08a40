"""Reservations a dead process left behind are settled once, at their worst case (ADR 0050).

A test is taken through its first half only: it reserves and calls the real loopback stand-in
provider, which holds the call, so the reservation stays held as if its process had died. The
server's clock is a fixed one, moved past the bound by hand; nothing waits on real time.
"""

import concurrent.futures
import contextlib
import logging
import threading
import time
from decimal import Decimal

import pytest
from tests.support.connectors import settings, standin

from ecp_core.connectors.abandoned import abandoned_after
from ecp_core.connectors.model import ConnectorTestRequest, TrialState
from ecp_core.connectors.trials import TrialOutcome
from ecp_core.errors import Conflict
from ecp_core.identity import ActorIdentity
from ecp_core.memory import MemoryStore
from ecp_core.service import Ecp
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance.connector_reservations import held_test, hold
from ecp_core.testing.samples import NOW
from ecp_core.types import AuthMethod, CostMeasurement, ServiceRole
from ecp_http.background import abandoned_reservations_sweep, sweeps_of
from ecp_http.outbound.connector_backends import connector_setup
from ecp_http.outbound.model_calls.standin import Reply
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.task_offers import TaskOffers
from ecp_postgres import PostgresStore

pytestmark = pytest.mark.integration

ACTOR = ActorIdentity(
    subject="ops", auth_method=AuthMethod.BEARER, roles=(ServiceRole.OPERATOR,), tenant_id="acme"
)
TIMEOUT = "60"  # the held call must not time out on its own while the test looks at it
REQUEST = ConnectorTestRequest(
    campaign_id="c1", operation_id="op-1", max_cost_usd="0.4", run_cap_usd="1.00", run_id="r1"
)


@contextlib.contextmanager
def store_of(kind, request):
    if kind == "memory":
        yield MemoryStore()
        return
    with PostgresStore(request.getfixturevalue("fresh_database"), max_size=6) as store:
        yield store


def scope_of(ecp, run_id="r1"):
    report = ecp.connectors.costs("acme", "c1", run_id, limit=500)
    return report.committed_usd, report.reserved_usd, list(report.entries)


@pytest.mark.spec("§2.6 connector-abandoned-reservations", "§2.6 connector-test-idempotent")
@pytest.mark.parametrize("kind", ["memory", "postgres"])
def test_a_held_reservation_is_settled_after_the_bound_and_a_repeat_gets_that_answer(
    tmp_path, request, kind
):
    arrived, release = threading.Event(), threading.Event()

    def held(body):
        arrived.set()
        release.wait(30)
        return Reply("OK", input_tokens=10, output_tokens=5)

    clock = FixedClock(NOW)
    with standin() as models, store_of(kind, request) as store:
        models.respond("fast", held)
        setup = connector_setup(
            settings(tmp_path, models.url, ECP_CONNECTOR_TEST_TIMEOUT_SECONDS=TIMEOUT)
        )
        ecp = Ecp.build(
            store.unit_of_work, signer=None, clock=clock, ids=SequentialIds(), connectors=setup
        )
        bound = abandoned_after(float(TIMEOUT))
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            try:
                first_half = pool.submit(ecp.connector_tests.test, ACTOR, "env-model", REQUEST)
                assert arrived.wait(30)  # reserved and committed, the call is out
                # Before the bound nothing changes: the operation is still "being tested".
                clock.advance(bound.total_seconds())
                assert ecp.connector_reservations.settle() == []
                assert scope_of(ecp) == (Decimal(0), Decimal("0.4"), [])
                with pytest.raises(Conflict, match="still being tested"):
                    ecp.connector_tests.test(ACTOR, "env-model", REQUEST)
                # Past it, the sweep settles it once, at its worst case, as estimated.
                clock.advance(0.001)
                settled = ecp.connector_reservations.settle()
                assert ecp.connector_reservations.settle() == []
            finally:
                release.set()
            late = first_half.result(30)
        assert [one.test.operation_id for one in settled] == ["op-1"]
        committed, reserved, entries = scope_of(ecp)
        assert (committed, reserved) == (Decimal("0.4"), Decimal(0))
        assert [(e.amount_usd, e.cost_measurement) for e in entries] == [
            (Decimal("0.4"), CostMeasurement.ESTIMATED)
        ]
        answer = settled[0].test.response
        assert answer.ok is False
        assert answer.detail.startswith("abandoned: ")
        assert answer.cost_event_id == entries[0].cost_event_id
        assert (answer.estimated_cost_usd, answer.cost_measurement) == (
            Decimal("0.4"),
            CostMeasurement.ESTIMATED,
        )
        # A repeat gets the abandoned answer without a call; so does the call that came back
        # late, and its measured cost changes nothing that was settled.
        repeat = ecp.connector_tests.test(ACTOR, "env-model", REQUEST)
        assert (repeat.outcome, repeat.response) == (TrialOutcome.REPLAYED, answer)
        assert (late.outcome, late.response) == (TrialOutcome.FAILED, answer)
        assert scope_of(ecp) == (Decimal("0.4"), Decimal(0), entries)
        assert models.calls("fast") == 1


@pytest.mark.spec("§2.6 connector-abandoned-reservations", "§2.6 connector-test-cost-caps")
def test_two_sweepers_on_postgresql_settle_each_reservation_exactly_once(fresh_database):
    """Twelve held reservations in three capped scopes, two threads sweeping two at a time."""
    cap = Decimal("1.00")
    tests = [
        held_test(f"op-{n}", run_id=f"r{n % 3}", amount=str(Decimal("0.25"))) for n in range(12)
    ]
    clock = FixedClock(NOW)
    with PostgresStore(fresh_database, max_size=6) as store:
        with store.unit_of_work() as tx:
            for test in tests:
                hold(tx, test)
            tx.commit()
        ecp = Ecp.build(store.unit_of_work, signer=None, clock=clock, ids=SequentialIds())
        clock.advance(abandoned_after(10.0).total_seconds() + 1)
        start = threading.Barrier(2)

        swept_so_far = []  # list.extend is atomic under the GIL
        deadline = time.monotonic() + 60

        def sweep(_):
            # A pass can come back empty while the other sweeper holds the rows that are left
            # (a skipped row's lock is kept until its transaction ends), so a sweeper goes on
            # until everything is settled, not until its first empty pass.
            start.wait(10)
            mine = []
            while len(swept_so_far) < len(tests) and time.monotonic() < deadline:
                batch = [
                    one.test.operation_id for one in ecp.connector_reservations.settle(limit=2)
                ]
                mine.extend(batch)
                swept_so_far.extend(batch)
            return mine

        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            swept = [op for ops in pool.map(sweep, range(2)) for op in ops]
        assert sorted(swept) == sorted(t.operation_id for t in tests)  # each once
        assert ecp.connector_reservations.settle() == []
        for run_id in ("r0", "r1", "r2"):
            committed, reserved, entries = scope_of(ecp, run_id)
            assert (committed, reserved) == (cap, Decimal(0))
            assert committed + reserved <= cap
            assert sum(e.amount_usd for e in entries) == committed
            assert len(entries) == 4
        with store.unit_of_work() as tx:
            for test in tests:
                stored = tx.connector_costs.find_test("acme", "c1", test.operation_id)
                assert stored.state is TrialState.FINISHED
                assert stored.response.detail.startswith("abandoned: ")


@pytest.mark.spec("§2.6 connector-abandoned-reservations")
def test_the_server_sweeps_every_batch_logs_each_and_counts_them(tmp_path, caplog):
    """The sweep the server runs every 30 seconds settles past one batch in one pass."""
    store, clock, metrics = MemoryStore(), FixedClock(NOW), Metrics()
    ecp = Ecp.build(store.unit_of_work, signer=None, clock=clock)
    with store.unit_of_work() as tx:
        for n in range(57):
            hold(tx, held_test(f"op-{n:02d}", tenant=f"t{n % 2}"))
        tx.commit()
    registered = {
        name: seconds
        for name, _, seconds in sweeps_of(
            ecp, settings(tmp_path, "http://127.0.0.1:9"), TaskOffers(), metrics
        )
    }
    assert registered["settle_abandoned_reservations"] == 30.0
    clock.advance(abandoned_after(10.0).total_seconds() + 1)
    with caplog.at_level(logging.INFO, logger="ecp_core.connectors"):
        abandoned_reservations_sweep(ecp, metrics)()
    lines = [r for r in caplog.records if r.getMessage() == "connector reservation abandoned"]
    assert len(lines) == 57
    assert {(r.tenant_id, r.connector_ref, r.campaign_id, r.committed_usd) for r in lines} == {
        ("t0", "fast-model", "c1", "0.25"),
        ("t1", "fast-model", "c1", "0.25"),
    }
    assert sorted(r.operation_id for r in lines) == [f"op-{n:02d}" for n in range(57)]
    rendered = metrics.render()[0].decode()
    assert "ecp_connector_reservations_abandoned_total 57.0" in rendered
