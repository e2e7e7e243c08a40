"""A failing dispatch backs off on a doubling, capped schedule, then ends the run (in memory)."""

from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import (
    ActorIdentity,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.memory import MemoryStore
from ecp_core.runs.engine.dispatch import DISPATCH_RETRY, dispatch_backoff
from ecp_core.system import FixedClock
from ecp_core.testing.signers import FailingSigner
from ecp_core.types import RunStatus
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule
from ecp_core.webhooks.model import WebhookEventType

pytestmark = [pytest.mark.unit, pytest.mark.spec("C8 poison-runs")]

GOOD = Ed25519Signer(bytes(range(7, 39)), key_id="good")
START = datetime(2026, 5, 1, 12, 0, tzinfo=UTC)
POLICY = RetrySchedule(max_attempts=3, base_seconds=10.0, max_seconds=60.0)


@given(
    base=st.floats(0.001, 1000.0),
    cap=st.floats(0.001, 100_000.0),
    failures=st.integers(1, 2_000),
)
def test_the_backoff_grows_by_doubling_up_to_its_cap(base, cap, failures):
    policy = RetrySchedule(max_attempts=3, base_seconds=base, max_seconds=cap)
    wait, longer = dispatch_backoff(policy, failures), dispatch_backoff(policy, failures + 1)
    assert timedelta(0) < wait <= longer <= timedelta(seconds=cap)
    assert dispatch_backoff(policy, 1) == timedelta(seconds=min(base, cap))
    if longer < timedelta(seconds=cap):
        assert longer.total_seconds() == pytest.approx(2 * wait.total_seconds(), abs=2e-6)


def test_the_default_schedule():
    assert DISPATCH_RETRY.max_attempts == 3
    waits = [dispatch_backoff(DISPATCH_RETRY, n).total_seconds() for n in range(1, 12)]
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 300, 300]


def world(signer=GOOD, actions=None):
    store, clock = MemoryStore(), FixedClock(START)
    ecp = Ecp.build(store.unit_of_work, signer=GOOD, clock=clock, dispatch_retry=POLICY)
    for name, handler in (actions or {}).items():
        ecp.actions.register(name, handler)
    graph = GraphBuilder("g").action("a", (actions and next(iter(actions))) or "echo").end("b")
    for tenant in ("t1", "t2"):
        ecp.graphs.register(tenant, graph.chain("a", "b").build())
        ecp.graphs.deploy(tenant, CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
        admin = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id=tenant)
        ecp.webhooks.subscribe(
            admin,
            CreateSubscriptionRequest(
                deployment_ref="d",
                target_url="http://127.0.0.1:9/hook",
                event_types=(WebhookEventType.RUN_FAILED,),
            ),
        )
    if signer is not GOOD:
        ecp = Ecp.build(store.unit_of_work, signer=signer, clock=clock, dispatch_retry=POLICY)
    return store, clock, ecp


def poisoned(store, ecp, tenant="t1"):
    """A run an older release left pointing at a node its graph does not have."""
    run, _ = ecp.runs.start(tenant, StartRunRequest(deployment_ref="d", input={"k": "v"}))
    with store.unit_of_work() as uow:
        uow.runs.save(attrs.evolve(run, next_node_id="gone"))
        uow.commit()
    return run


def failures(store, clock):
    with store.unit_of_work() as uow:
        claim = uow.runs.claim_runnable(None)
        return None if claim is None else claim.dispatch_failures


def test_a_poison_run_backs_off_then_fails_with_a_record_and_an_event():
    store, clock, ecp = world()
    run = poisoned(store, ecp)
    first = ecp.runs.advance_next()
    assert (first.run_id, first.status, first.state) == (run.run_id, RunStatus.PENDING, {})
    assert ecp.runs.advance_next() is None  # backing off for 10 s
    other, _ = ecp.runs.start("t2", StartRunRequest(deployment_ref="d"))
    assert ecp.runs.advance_next().run_id == other.run_id  # others are not held back
    ecp.runs.drive("t2", other.run_id)
    clock.advance(9.999)
    assert ecp.runs.advance_next() is None
    clock.advance(0.001)
    assert ecp.runs.advance_next().status is RunStatus.PENDING  # the second failure
    clock.advance(19.999)
    assert ecp.runs.advance_next() is None
    clock.advance(0.001)
    ended = ecp.runs.advance_next()  # the third
    assert ended.status is RunStatus.FAILED
    assert ended.failure_state.reason == "dispatch_error"
    assert ended.failure_state.message == "dispatch raised KeyError on 3 attempts in a row"
    clock.advance(10_000)
    assert ecp.runs.advance_next() is None
    stored = ecp.runs.get("t1", run.run_id)
    assert stored.state == {"k": "v"} and stored.status is RunStatus.FAILED
    (record,) = ecp.audit.timeline("t1", run.run_id).entries
    assert (record.node_id, record.status.value) == ("gone", "failed")
    assert record.error == {"type": "KeyError", "message": ended.failure_state.message}
    assert ecp.audit.verify_run("t1", run.run_id).verified
    with store.unit_of_work() as uow:
        (event,) = uow.webhooks.claim_due(clock.now(), 10)
    assert event.event_type is WebhookEventType.RUN_FAILED
    assert event.payload.data["run_id"] == run.run_id
    assert event.payload.data["failure_state"]["reason"] == "dispatch_error"


def test_an_interrupt_is_not_counted():
    def interrupted(context):
        raise KeyboardInterrupt

    store, clock, ecp = world(actions={"interrupted": interrupted})
    run, _ = ecp.runs.start("t1", StartRunRequest(deployment_ref="d"))
    with pytest.raises(KeyboardInterrupt):
        ecp.runs.advance_next()
    assert failures(store, clock) == 0
    assert ecp.runs.get("t1", run.run_id) == run


def test_a_run_that_cannot_even_be_ended_stays_backed_off():
    store, clock, broken = world(signer=FailingSigner(GOOD))
    run, _ = broken.runs.start("t1", StartRunRequest(deployment_ref="d"))
    for wait in (10, 20, 40):
        assert broken.runs.advance_next().status is RunStatus.PENDING
        assert broken.runs.advance_next() is None
        clock.advance(wait)
    assert failures(store, clock) == 3  # the third failure could not end the run
    # Repaired (the key store is back): the next dispatch goes through and clears the count.
    healthy = Ecp.build(store.unit_of_work, signer=GOOD, clock=clock, dispatch_retry=POLICY)
    # One claim runs the steps without side effects to the end (ADR 0059): nothing is left to
    # claim, and the run ended without a failure.
    assert healthy.runs.advance_next().status is RunStatus.COMPLETED
    assert failures(store, clock) is None
    assert healthy.runs.get("t1", run.run_id).failure_state is None
