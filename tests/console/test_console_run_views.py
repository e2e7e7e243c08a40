"""What the run pages say of a run, and how the list's form becomes a filter (pure functions)."""

from datetime import UTC, datetime

import attrs
import pytest

from ecp_core.errors import ValidationFailed
from ecp_core.runs.run.model import PauseSource
from ecp_core.testing.samples import run
from ecp_core.types import RunPublicStatus, RunStatus
from ecp_http.server.console.run_views import run_filter, waits_for
from ecp_http.wire.models import ConsoleRunsQuery

pytestmark = pytest.mark.unit

RUN = "C15 console-run"
RUNS = "C15 console-runs"
WAKE = datetime(2026, 12, 6, 11, 0, tzinfo=UTC)


@pytest.mark.spec(RUN, RUNS)
@pytest.mark.parametrize(
    ("status", "changes", "said"),
    [
        (RunStatus.PENDING, {}, "its turn (a slot)"),
        (RunStatus.RUNNING, {}, ""),
        (RunStatus.WAITING_APPROVAL, {"pending_approval_ids": ("a",)}, "approval"),
        (RunStatus.WAITING_APPROVAL, {"pending_approval_ids": ("a", "b")}, "approval (2)"),
        (RunStatus.WAITING_TIMER, {"wait_until": WAKE}, "timer until 2026-12-06 11:00:00 UTC"),
        (RunStatus.WAITING_TASK, {}, "a worker's task"),
        (RunStatus.WAITING_CHILD, {}, "a child run"),
        (RunStatus.PENDING, {"paused_by": (PauseSource.RUN,)}, "paused by its run"),
        (
            RunStatus.WAITING_TASK,
            {"paused_by": (PauseSource.RUN, PauseSource.DEPLOYMENT)},
            "a worker's task, paused by its run and deployment",
        ),
        (RunStatus.CANCELED, {"paused_by": (PauseSource.RUN,)}, ""),
        (RunStatus.COMPLETED, {}, ""),
    ],
)
def test_what_a_run_waits_for(status, changes, said):
    assert waits_for(attrs.evolve(run(status=status), **changes)) == said


@pytest.mark.spec(RUNS)
def test_the_forms_dates_are_utc_and_the_end_is_inclusive():
    where = run_filter(
        ConsoleRunsQuery(
            started_from="2026-12-01",
            started_to="2026-12-06T10:30",
            status="paused",
            deployment=" pay ",
            find="",
        )
    )
    assert where.created_from == datetime(2026, 12, 1, tzinfo=UTC)
    assert where.created_to == datetime(2026, 12, 6, 10, 31, tzinfo=UTC)
    assert (where.status, where.deployment_ref, where.run_or_key) == (
        RunPublicStatus.PAUSED,
        "pay",
        None,
    )
    day = run_filter(ConsoleRunsQuery(started_to="2026-12-06"))
    assert day.created_to == datetime(2026, 12, 7, tzinfo=UTC)


@pytest.mark.spec(RUNS)
@pytest.mark.parametrize(
    "fields",
    [
        {"status": "WAITING_APPROVAL"},
        {"started_from": "0001-01-01"},
        {"started_to": "2026-12-06T10:30Z"},
        {"find": "a\x00"},
    ],
)
def test_a_form_the_list_cannot_read_is_refused(fields):
    with pytest.raises(ValidationFailed):
        run_filter(ConsoleRunsQuery(**fields))
