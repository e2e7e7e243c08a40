"""Starts made together by a run worker share one commit (ADR 0106), on PostgreSQL.

``RunStarts.start_together`` is what a run worker calls with the starts handed to it: each start
in its own savepoint of one transaction, one commit for all. A start that fails (its deployment
unknown, its idempotency key reused for another request) gets its own error and undoes only its
savepoint; every other start of the batch is stored whole and answered once, in order.
"""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.runs import approve_to_end, deploy_set_then_approve_once
from tests.support.statements import statements

from ecp_core import (
    Ecp,
    Ed25519Signer,
    StartRunRequest,
)
from ecp_core.errors import Conflict, NotFound
from ecp_core.types import RunStatus

pytestmark = pytest.mark.integration

RULE = "C20 start-batches"
KINDS = ("good", "unknown deployment", "key reused")


def service(store) -> Ecp:
    """An Ecp on ``store`` whose starts share transactions, with the approval graph deployed."""
    ecp = Ecp.build(
        store.unit_of_work,
        signer=Ed25519Signer(bytes(range(32)), key_id="k"),
        shared_transactions=store.shared_transaction,
    )
    deploy_set_then_approve_once(ecp, store)
    return ecp


def request(kind: str, key: str) -> StartRunRequest:
    """A start of ``kind``: a ``key reused`` start repeats the key of one made before the batch
    with another input."""
    if kind == "unknown deployment":
        return StartRunRequest(deployment_ref="nowhere", input={"n": 1})
    if kind == "key reused":
        return StartRunRequest(deployment_ref="d", idempotency_key=key, input={"n": 2})
    return StartRunRequest(deployment_ref="d", idempotency_key=key, input={"n": 1})


@pytest.mark.spec(RULE)
@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(KINDS), min_size=2, max_size=10))
def test_a_failing_start_undoes_only_its_own_savepoint(postgres_store, kinds):
    """Every other start of the batch commits with the others in one commit, each start is
    answered once in order, and each run stored is whole: approved, it completes and verifies."""
    ecp = service(postgres_store)
    prefix = f"b{time.monotonic_ns()}-"
    keys = [f"{prefix}{index}" for index in range(len(kinds))]
    for kind, key in zip(kinds, keys, strict=True):
        if kind == "key reused":  # made before the batch, with the input the batch's start lacks
            ecp.runs.start("t", request("good", key))
    prepared = [
        ecp.runs.starts.prepare("t", request(kind, key), started_by="s")
        for kind, key in zip(kinds, keys, strict=True)
    ]
    with statements() as seen:
        outcomes = ecp.runs.starts.start_together(prepared)
    assert len(outcomes) == len(kinds)
    assert seen.count("COMMIT") == 1, seen  # the first attempts of every start, in one commit
    assert sum(sql.startswith("SAVEPOINT") for sql in seen) == len(kinds), seen
    for kind, key, outcome in zip(kinds, keys, outcomes, strict=True):
        if kind == "unknown deployment":
            assert isinstance(outcome, NotFound), outcome
        elif kind == "key reused":
            assert isinstance(outcome, Conflict), outcome
        else:
            assert not isinstance(outcome, BaseException), outcome
            run, created = outcome
            assert (created, run.idempotency_key) == (True, key)
            assert run.status is RunStatus.WAITING_APPROVAL
            approve_to_end(ecp, run)
            verified = ecp.audit.verify_run("t", run.run_id)
            assert (verified.verified, verified.record_count) == (True, 4)
    with postgres_store.unit_of_work() as tx:
        stored = {key for key in keys if tx.runs.by_idempotency_key("t", "d", key) is not None}
    assert stored == {key for kind, key in zip(kinds, keys, strict=True) if kind == "good"} | {
        key for kind, key in zip(kinds, keys, strict=True) if kind == "key reused"
    }


@pytest.mark.spec(RULE)
def test_a_start_made_alone_costs_what_a_start_costs(postgres_store):
    """One start: a plain transaction with one commit and no savepoint."""
    ecp = service(postgres_store)
    prepared = ecp.runs.starts.prepare("t", request("good", "alone"))
    with statements() as seen:
        ((run, created),) = ecp.runs.starts.start_together([prepared])  # type: ignore[misc]
    assert created and run.status is RunStatus.WAITING_APPROVAL
    assert seen.count("COMMIT") == 1, seen
    assert not [sql for sql in seen if "SAVEPOINT" in sql], seen


@pytest.mark.spec(RULE)
def test_a_repeat_in_the_same_batch_answers_the_first_run(postgres_store):
    """Two starts of one idempotency key in one batch: one run, the first created, the repeat
    answered with it."""
    ecp = service(postgres_store)
    prepared = [ecp.runs.starts.prepare("t", request("good", "twice")) for _ in range(2)]
    outcomes = ecp.runs.starts.start_together(prepared)
    (first, created), (again, repeated) = outcomes  # type: ignore[misc]
    assert (created, repeated, again.run_id) == (True, False, first.run_id)
