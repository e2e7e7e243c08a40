"""Approval resolutions that arrive together share one commit (ADR 0107), on PostgreSQL.

With ``resolution_transactions``, ``ApprovalService.resolve`` hands its work to a commit group:
concurrent resolutions run one after another, each in its own savepoint of one transaction, and
commit once. The tests hold the group with a first work until every resolution is queued behind
it, so the resolutions form exactly one group whatever the timing.
"""

import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.runs import REVIEWER, approve_to_end, deploy_set_then_approve_once, queued
from tests.support.statements import sent_to, statements

from ecp_core import (
    ApprovalResolutionRequest,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    StartRunRequest,
)
from ecp_core.errors import (
    ApprovalAlreadyResolved,
    DatabaseUnavailable,
    NotFound,
    ValidationFailed,
)
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.runs.run.actions import ActionRegistry
from ecp_core.runs.run.model import Run
from ecp_core.types import ApprovalDecision, RunStatus

pytestmark = pytest.mark.integration

RULE = "C20 resolution-groups"
KINDS = ("approve", "reject", "resolved before", "invalid", "unknown", "twice")


def service(store, actions: ActionRegistry | None = None, *, grouped: bool = True) -> Ecp:
    """An Ecp on ``store`` whose resolutions share transactions (unless not ``grouped``)."""
    ecp = Ecp.build(
        store.unit_of_work,
        signer=Ed25519Signer(bytes(range(32)), key_id="k"),
        actions=actions,
        resolution_transactions=store.shared_transaction if grouped else None,
    )
    deploy_set_then_approve_once(ecp, store)
    return ecp


def group_of(ecp: Ecp) -> CommitGroup:
    """The resolutions' commit group."""
    group = ecp.approvals.group
    assert isinstance(group, CommitGroup)
    return group


def waiting_run(ecp: Ecp, key: str) -> Run:
    """A new run of ``d``, waiting for its approval."""
    run, _ = ecp.runs.start_and_drive("t", StartRunRequest(deployment_ref="d", idempotency_key=key))
    assert run.status is RunStatus.WAITING_APPROVAL, run
    return run


def in_one_group(ecp: Ecp, calls: list[Callable[[], Any]]) -> list[tuple[str, Any]]:
    """Each call on a thread of its own, queued in order behind a first work that holds the group
    until all are, so they make one group; each call's answer ("ok", result) or ("error", exc)."""
    group = group_of(ecp)
    answers: list[tuple[str, Any]] = [("none", None)] * len(calls)
    leading = threading.Event()

    def hold(unit: object) -> None:  # commits nothing
        leading.set()
        queued(group, len(calls))

    def call(index: int) -> None:
        try:
            answers[index] = ("ok", calls[index]())
        except Exception as exc:  # noqa: BLE001 - the answer under test
            answers[index] = ("error", exc)

    holder = threading.Thread(target=group.run, args=(hold,))
    holder.start()
    assert leading.wait(30)
    threads = [threading.Thread(target=call, args=(i,)) for i in range(len(calls))]
    for index, thread in enumerate(threads):  # queued in the calls' order
        thread.start()
        if index + 1 < len(threads):  # the holder lets the group go once the last is queued
            queued(group, index + 1)
    for thread in [holder, *threads]:
        thread.join(60)
    return answers


def resolution(ecp: Ecp, approval_id: str, decision: ApprovalDecision) -> Callable[[], Any]:
    """A call resolving ``approval_id`` as :data:`REVIEWER` with ``decision``."""
    request = ApprovalResolutionRequest(decision=decision)
    return lambda: ecp.resolve(REVIEWER, "d", approval_id, request)


@pytest.mark.spec(RULE)
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.sampled_from(KINDS), min_size=2, max_size=8))
def test_a_failing_resolution_undoes_only_its_own_savepoint(postgres_store, kinds):
    """Every other resolution of the group commits, with one commit for the group; each caller
    is answered once; a run whose resolution failed is left as it was, and can still be
    approved; every run's chain verifies."""
    ecp = service(postgres_store)
    prefix = f"r{time.monotonic_ns()}-"
    runs = [waiting_run(ecp, f"{prefix}{index}") for index in range(len(kinds))]
    calls, expected = [], []
    for kind, run in zip(kinds, runs, strict=True):
        approval_id = run.pending_approval_ids[0]
        if kind == "resolved before":
            approve_to_end(ecp, run)
        if kind == "invalid":  # an edit without the edited payload: refused under the run's lock
            calls.append(resolution(ecp, approval_id, ApprovalDecision.EDIT_AND_APPROVE))
        elif kind == "unknown":
            calls.append(resolution(ecp, f"{approval_id}-none", ApprovalDecision.APPROVE))
        elif kind == "reject":
            calls.append(resolution(ecp, approval_id, ApprovalDecision.REJECT))
        else:
            calls.append(resolution(ecp, approval_id, ApprovalDecision.APPROVE))
        if kind == "twice":  # the same approval twice in one group: one of the two wins
            calls.append(resolution(ecp, approval_id, ApprovalDecision.APPROVE))
        expected.extend([kind, "twice (second)"] if kind == "twice" else [kind])
    group = group_of(ecp)
    before = (group.groups, group.works)
    with sent_to(postgres_store.url) as seen:  # every thread's
        answers = in_one_group(ecp, calls)
    assert (group.groups - before[0], group.works - before[1]) == (2, len(calls) + 1)
    assert seen.count("COMMIT") == 1, seen  # the holder commits nothing; the group once
    assert sum(sql.startswith("SAVEPOINT") for sql in seen) == len(calls), seen
    answered = dict(zip(range(len(calls)), answers, strict=True))
    index = 0
    for kind, run in zip(kinds, runs, strict=True):
        mine = [answered[index]] + ([answered[index + 1]] if kind == "twice" else [])
        index += len(mine)
        check_answers(kind, mine)
        if kind in ("invalid", "unknown"):  # nothing stayed: the run waits, can be approved
            assert ecp.runs.get("t", run.run_id).status is RunStatus.WAITING_APPROVAL
            approve_to_end(ecp, run)
        final = ecp.runs.get("t", run.run_id)
        ended = RunStatus.FAILED if kind == "reject" else RunStatus.COMPLETED
        assert final.status is ended, (kind, final)
        verified = ecp.audit.verify_run("t", run.run_id)
        assert verified.verified, (kind, verified)
        assert verified.record_count == 4 or kind == "reject", (kind, verified)


def check_answers(kind: str, answers: list[tuple[str, Any]]) -> None:
    """Each caller's answer is the one its own resolution earns."""
    if kind in ("approve", "reject"):
        ((what, answer),) = answers
        assert what == "ok", answer
        status = "failed" if kind == "reject" else "completed"
        assert answer.run.status.value == status, answer
    elif kind == "resolved before":
        assert [type(answer) for _, answer in answers] == [ApprovalAlreadyResolved], answers
    elif kind == "invalid":
        assert [type(answer) for _, answer in answers] == [ValidationFailed], answers
    elif kind == "unknown":
        assert [type(answer) for _, answer in answers] == [NotFound], answers
    else:  # twice: whichever ran first approved, the other found it resolved
        outcomes = sorted(what for what, _ in answers)
        assert outcomes == ["error", "ok"], answers
        assert {type(a) for w, a in answers if w == "error"} == {ApprovalAlreadyResolved}


@pytest.mark.spec(RULE)
def test_a_resolution_alone_costs_what_a_resolution_costs(postgres_store):
    """Nobody else resolving: a plain transaction, one commit, no savepoint."""
    ecp = service(postgres_store)
    run = waiting_run(ecp, "alone")
    with statements() as seen:
        approve_to_end(ecp, run)
    assert seen.count("COMMIT") == 1, seen
    assert not [sql for sql in seen if "SAVEPOINT" in sql], seen


def approve_then_notify() -> Any:
    """``review`` (an approval) → ``notify`` (an action with side effects) → ``done``."""
    return (
        GraphBuilder("notify")
        .approval("review", summary="Notify?", rationale="A person decides")
        .action("notify", "notify")
        .end("done")
        .chain("review", "notify", "done")
        .build()
    )


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("grouped", [True, False])
def test_a_grouped_resolution_makes_no_attempt_with_side_effects_before_its_commit(
    postgres_store, grouped
):
    """The next node has side effects: grouped, the resolution commits first and the run is
    driven on after it, so no other caller waits for the action; alone, the action joins the
    resolution's commit, as before. Either way it runs once and the run ends."""
    calls: list[str] = []
    actions = ActionRegistry()
    actions.register("notify", lambda context: calls.append(context.run_id) or {})
    ecp = service(postgres_store, actions, grouped=grouped)
    ecp.graphs.register("t", approve_then_notify())
    ref = f"n-{grouped}"
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref=ref, graph_id="notify"))
    run, _ = ecp.runs.start_and_drive("t", StartRunRequest(deployment_ref=ref))
    with statements() as seen:
        approve_to_end(ecp, run, deployment_ref=ref)
    assert calls == [run.run_id]
    # alone: the resolution with the action, then the end; grouped: one commit more, the action's
    assert seen.count("COMMIT") == (3 if grouped else 2), seen


def waiting_for_a_lock(url: str, count: int) -> None:
    """Wait (at most 30 s) until ``count`` sessions of the database wait for a lock."""
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as watcher:
        while True:
            (waiting,) = watcher.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND wait_event_type = 'Lock'"
            ).fetchone()
            if waiting >= count:
                return
            assert time.monotonic() < deadline, "nobody waited for the lock"
            time.sleep(0.01)


@pytest.mark.spec(RULE)
def test_a_resolution_undone_to_break_a_deadlock_is_told_to_try_again(postgres_store):
    """Another transaction holds run B and then wants run A, which the group resolved first: the
    database undoes B's resolution to break the deadlock. Only its savepoint goes; A's resolution
    commits; B's caller gets database_unavailable (a 503, try again), and B still waits and can
    be approved."""
    ecp = service(postgres_store)
    prefix = f"d{time.monotonic_ns()}-"
    first, second = waiting_run(ecp, f"{prefix}a"), waiting_run(ecp, f"{prefix}b")
    lock = "SELECT 1 FROM ecp_runs WHERE run_id = %s FOR UPDATE"
    with psycopg.connect(postgres_store.url) as other:
        other.execute("SET deadlock_timeout = '30s'")  # the group's session finds the deadlock
        other.execute(lock, (second.run_id,))

        def then_wants_the_first() -> None:
            waiting_for_a_lock(postgres_store.url, 1)  # the group waits for the second run
            other.execute(lock, (first.run_id,))  # until the group commits
            other.rollback()

        wanting = threading.Thread(target=then_wants_the_first)
        wanting.start()
        answers = in_one_group(
            ecp,
            [
                resolution(ecp, first.pending_approval_ids[0], ApprovalDecision.APPROVE),
                resolution(ecp, second.pending_approval_ids[0], ApprovalDecision.APPROVE),
            ],
        )
        wanting.join(60)
    (kind, answer), (undone, refused) = answers
    assert kind == "ok" and answer.run.status.value == "completed", answer
    assert undone == "error" and isinstance(refused, DatabaseUnavailable), refused
    assert "deadlock" in str(refused), refused
    assert ecp.runs.get("t", second.run_id).status is RunStatus.WAITING_APPROVAL
    approve_to_end(ecp, second)
