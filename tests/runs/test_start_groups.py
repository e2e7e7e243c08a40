"""Group commit of run starts on PostgreSQL (ADR 0102): savepoints in one shared transaction.

The :class:`CommitGroup` tests hold the first work until every other is queued, so the rest
form exactly one group whatever the timing; then each caller's answer and what is stored are
checked against which works failed.
"""

import threading
import time

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.runs import approve_to_end, queued, set_then_approve
from tests.support.statements import statements

from ecp_core import (
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    StartRunRequest,
)
from ecp_core.errors import DatabaseUnavailable
from ecp_core.runs.engine.commit_groups import CommitGroup
from ecp_core.testing.samples import deployment, graph_version, run
from ecp_core.types import RunStatus

pytestmark = pytest.mark.integration

RULE = "C20 start-groups"


class Refused(Exception):
    """A work's own failure."""


def run_together(group: CommitGroup, works: list, leading: threading.Event) -> list:
    """Each work on a thread of its own; the rest start once the first leads (``leading``) and
    it holds until they are queued behind it."""
    answers: list = [None] * len(works)

    def call(index: int) -> None:
        try:
            answers[index] = ("ok", group.run(works[index]))
        except Exception as exc:  # noqa: BLE001 - the answer under test
            answers[index] = ("error", exc)

    first = threading.Thread(target=call, args=(0,))
    first.start()
    assert leading.wait(30)
    others = [threading.Thread(target=call, args=(i,)) for i in range(1, len(works))]
    for thread in others:
        thread.start()
    for thread in [first, *others]:
        thread.join(60)
    return answers


def seeded(postgres_store) -> None:
    """The graph and deployment the sample runs belong to (once per database)."""
    with postgres_store.unit_of_work() as tx:
        if tx.deployments.get("t1", "dep") is None:
            tx.graphs.add(graph_version())
            tx.deployments.add(deployment())
            tx.commit()


@pytest.mark.spec(RULE)
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(st.booleans(), min_size=2, max_size=8))
def test_a_failing_work_undoes_only_its_own_savepoint(postgres_store, fails):
    """Every other work of the group commits, and each caller is answered once."""
    seeded(postgres_store)
    group = CommitGroup(postgres_store.shared_transaction)
    prefix = f"g{time.monotonic_ns()}-"
    leading = threading.Event()

    def work(index: int, fail: bool):
        def body(unit):
            if index == 0:
                leading.set()
                queued(group, len(fails) - 1)
            unit.runs.add(run(f"{prefix}{index}", tenant="t1"))
            if fail:
                unit.runs.get("t1", f"{prefix}{index}")  # sends the insert first
                raise Refused(index)
            unit.commit()
            return index

        return body

    answers = run_together(group, [work(i, fail) for i, fail in enumerate(fails)], leading)
    for index, (fail, answer) in enumerate(zip(fails, answers, strict=True)):
        if fail:
            assert answer[0] == "error" and isinstance(answer[1], Refused), answer
        else:
            assert answer == ("ok", index)
    assert (group.groups, group.works) == (2, len(fails))  # the first alone, then all the rest
    with postgres_store.unit_of_work() as tx:
        stored = {i for i in range(len(fails)) if tx.runs.get("t1", f"{prefix}{i}") is not None}
    assert stored == {i for i, fail in enumerate(fails) if not fail}


@pytest.mark.spec(RULE)
def test_a_group_of_one_runs_in_a_plain_unit_without_a_savepoint(postgres_store):
    """Alone, a start costs what it cost before group commit: no SAVEPOINT, one COMMIT; its
    failure rolls back its own transaction."""
    seeded(postgres_store)
    group = CommitGroup(postgres_store.shared_transaction, alone=postgres_store.unit_of_work)

    def body(unit):
        unit.runs.add(run("alone-1", tenant="t1"))
        unit.commit()
        return 1

    def failing(unit):
        unit.runs.add(run("alone-2", tenant="t1"))
        unit.runs.get("t1", "alone-2")  # sends the insert first
        raise Refused(2)

    with statements() as seen:
        assert group.run(body) == 1
    assert not [sql for sql in seen if "SAVEPOINT" in sql], seen
    assert seen.count("COMMIT") == 1, seen
    with pytest.raises(Refused):
        group.run(failing)
    assert (group.groups, group.works) == (2, 2)
    with postgres_store.unit_of_work() as tx:
        assert tx.runs.get("t1", "alone-1") is not None
        assert tx.runs.get("t1", "alone-2") is None


@attrs.define
class CommitFails:
    """A real shared transaction whose commit is refused as a lost database would refuse it."""

    inner: object

    def __enter__(self):
        self.inner = self.inner.__enter__()
        return self

    def __exit__(self, *exc):
        self.inner.__exit__(*exc)

    def unit(self):
        return self.inner.unit()

    def commit(self):
        raise DatabaseUnavailable("the database went away at commit")


@pytest.mark.spec(RULE)
def test_when_the_shared_commit_fails_no_caller_is_told_it_succeeded(postgres_store):
    seeded(postgres_store)
    group = CommitGroup(lambda: CommitFails(postgres_store.shared_transaction()))
    leading = threading.Event()

    def work(index: int):
        def body(unit):
            if index == 0:
                leading.set()
                queued(group, 3)
            unit.runs.add(run(f"lost-{index}", tenant="t1"))
            unit.commit()
            return index

        return body

    answers = run_together(group, [work(i) for i in range(4)], leading)
    assert all(kind == "error" and isinstance(exc, DatabaseUnavailable) for kind, exc in answers)
    with postgres_store.unit_of_work() as tx:
        assert all(tx.runs.get("t1", f"lost-{i}") is None for i in range(4))


@pytest.mark.spec(RULE)
def test_concurrent_starts_share_commits_and_every_run_is_whole(postgres_store):
    """Sixteen starters at once: every run reaches its approval with its records, is approved
    and completes, its chain verifies; idempotent repeats in the same groups answer the first."""
    ecp = Ecp.build(
        postgres_store.unit_of_work,
        signer=Ed25519Signer(bytes(range(32)), key_id="k"),
        shared_transactions=postgres_store.shared_transaction,
    )
    ecp.graphs.register("t", set_then_approve())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="pay"))
    start = threading.Barrier(16)
    started: list = [None] * 32

    def starter(index: int) -> None:
        start.wait(30)
        for repeat in range(2):  # the second start repeats the key: the same run
            request = StartRunRequest(deployment_ref="d", idempotency_key=f"k{index}")
            started[index * 2 + repeat] = ecp.runs.start_and_drive("t", request)

    threads = [threading.Thread(target=starter, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    group = ecp.runs.start_group
    assert group is not None
    assert group.works == 32 and group.groups <= 32
    for index in range(16):
        (first, created), (again, repeated) = started[index * 2], started[index * 2 + 1]
        assert (created, repeated, again.run_id) == (True, False, first.run_id)
        assert first.status is RunStatus.WAITING_APPROVAL
        approve_to_end(ecp, first)
        verified = ecp.audit.verify_run("t", first.run_id)
        assert (verified.verified, verified.record_count) == (True, 4)
