"""Two server processes race for the same due schedule occurrences; each runs exactly once.

Two real processes (``schedule_worker.py``), each with its own PostgresStore and ``Ecp`` on one
database, wait for a line on standard input. Every round this test creates ten schedules, all
due at once, and releases both workers together; each reads the due schedules and calls
``ecp.decisions.run_due()``, which walks the same list in the same order. Per round, every
schedule must have been run by exactly one process and have exactly one decision artifact, and
its ``next_run_at`` must have moved on by exactly one interval. Across the rounds both processes
must have seen the same schedules due and each must have run some: they really competed.

How this fails without the conditional update: ``run_due`` claims an occurrence with ``UPDATE
ecp_decision_schedules SET next_run_at = following WHERE schedule_id = … AND next_run_at =
expected`` and runs it only when one row changed. Were the ``AND next_run_at = expected`` left
out (or ``claim`` read ``rowcount`` as success whatever it was), both processes, having read the
same due list, would update every schedule successfully and both would run it: each schedule
id would appear in both workers' ``ran`` lists, and since each process compares the trailing
window ending at its own clock reading, the two comparisons are different requests and two
artifacts would be retained for one occurrence. (Were the two requests identical, the second
process would return the first's artifact or hit the artifacts' unique key; either way the
"exactly one process ran it" assertion fails.) Replacing ``PostgresDecisions.claim`` in the
workers with that unconditional update makes this test fail in the first round.
"""

import json
import pathlib
import select
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.model import ComparisonPolicy, CreateScheduleRequest
from ecp_core.evidence.model import (
    ExecutionEvent,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.types import CostMeasurement
from ecp_postgres import PostgresStore

pytestmark = [pytest.mark.integration, pytest.mark.spec("§9.1 schedule-claims")]

WORKER = pathlib.Path(__file__).parents[1] / "support" / "schedule_worker.py"
ROUNDS, PER_ROUND = 10, 10
DAY = 86_400
RUNS = 40
ACTOR = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id="t")


def start_worker(url, log):
    return subprocess.Popen(
        [sys.executable, str(WORKER), url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        bufsize=1,
    )


def read_line(worker, seconds=120.0):
    ready, _, _ = select.select([worker.stdout], [], [], seconds)
    assert ready, "the worker said nothing"
    line = worker.stdout.readline()
    assert line, f"the worker ended with exit code {worker.wait(timeout=30)}"
    return line


def load_evidence(ecp, at):
    """Forty runs a version two days ago: v1 accepts half, v2 all, one outcome rule for both."""
    for version in ("v1", "v2"):
        ecp.evidence.define_outcome(
            ACTOR,
            OutcomeDefinitionRequest(
                workflow_id="w",
                workflow_version=version,
                outcome_type="done",
                predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            ),
        )
        ecp.evidence.ingest_executions(
            "t",
            [
                ExecutionEvent(
                    event_id=f"{version}-e{i}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=f"{version}-r{i}",
                    occurred_at=at + timedelta(minutes=i),
                    cost_usd=Decimal("1.00"),
                    cost_measurement=CostMeasurement.MEASURED,
                    charge_id=f"{version}-c{i}",
                )
                for i in range(RUNS)
            ],
        )
        ecp.evidence.ingest_outcomes(
            "t",
            [
                OutcomeEvent(
                    event_id=f"{version}-o{i}",
                    workflow_id="w",
                    workflow_version=version,
                    run_id=f"{version}-r{i}",
                    outcome_type="done",
                    asserted_at=at + timedelta(hours=1),
                    value=version == "v2" or i % 2 == 0,
                )
                for i in range(RUNS)
            ],
        )


def daily_schedules(ecp, names):
    """A daily v1-v2 schedule per name, each its own comparison (its window a number of seconds
    longer than 7 days), by id."""
    made = (
        ecp.decisions.create_schedule(
            ACTOR,
            CreateScheduleRequest(
                workflow_id="w",
                baseline_version="v1",
                candidate_version="v2",
                interval_seconds=DAY,
                policy=ComparisonPolicy(min_success_rate=0.5),
                window_seconds=7 * DAY + extra,
                name=name,
            ),
        )
        for name, extra in names.items()
    )
    return {schedule.schedule_id: schedule for schedule in made}


def test_two_processes_never_run_one_occurrence_twice(fresh_database, tmp_path):
    with PostgresStore(fresh_database, max_size=2) as store:
        ecp = Ecp.build(store.unit_of_work, signer=None)
        load_evidence(ecp, datetime.now(UTC) - timedelta(days=2))
        logs = [(tmp_path / f"worker-{n}.log").open("w") for n in range(2)]
        workers = [start_worker(fresh_database, log) for log in logs]
        try:
            for worker in workers:
                assert read_line(worker).strip() == "ready"
            contested, ran_by = 0, [0, 0]
            for round_ in range(ROUNDS):
                made = daily_schedules(
                    ecp,
                    {
                        f"round {round_} schedule {index}": round_ * PER_ROUND + index
                        for index in range(PER_ROUND)
                    },
                )
                for worker in workers:  # both are blocked reading: released together
                    worker.stdin.write("go\n")
                answers = [json.loads(read_line(worker)) for worker in workers]
                ran = [answer["ran"] for answer in answers]
                # Every due occurrence ran, each in exactly one process.
                assert sorted(ran[0] + ran[1]) == sorted(made), (round_, answers)
                assert not set(ran[0]) & set(ran[1]), (round_, answers)
                contested += len(set(answers[0]["saw"]) & set(answers[1]["saw"]) & set(made))
                ran_by = [count + len(ids) for count, ids in zip(ran_by, ran, strict=True)]

                artifacts, _ = ecp.decisions.history("t", limit=1000)
                schedules = {s.schedule_id: s for s in ecp.decisions.schedules("t")}
                for schedule_id, created in made.items():
                    (artifact,) = [a for a in artifacts if a.schedule_id == schedule_id]
                    after = schedules[schedule_id]
                    assert after.last_decision_id == artifact.decision_id
                    assert after.last_error is None
                    assert after.next_run_at == created.next_run_at + timedelta(seconds=DAY)
                    assert artifact.verdict.value == "pass"
                assert len(artifacts) == (round_ + 1) * PER_ROUND
            # The processes really competed: both saw the same occurrences due, both ran some.
            assert contested > 0
            assert min(ran_by) > 0, ran_by
        finally:
            for worker in workers:
                worker.stdin.close()
            for worker in workers:
                try:
                    worker.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    worker.kill()
                    worker.wait(timeout=30)
                worker.stdout.close()
            for log in logs:
                log.close()
        assert [worker.returncode for worker in workers] == [0, 0], [
            (tmp_path / f"worker-{n}.log").read_text() for n in range(2)
        ]
