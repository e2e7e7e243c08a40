"""Wait nodes over HTTP, against the e2e server on PostgreSQL (ADR 0078).

A run reaching a wait node answers ``waiting_timer`` with its ``wait_until`` (``Prefer: wait``
counts it settled); the server's timer thread wakes it once the time came, never before, and the
timeline holds the wait and the wake. A wait of 0 seconds or of two years, both or neither of
``seconds`` and ``until_path``, is 422 with its location, and nothing is stored.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from tests.support.e2e import check, deploy, poll_until, problem, start, steps

from ecp_core.wire import format_timestamp, parse_timestamp

pytestmark = pytest.mark.e2e

TIMER = "C14 timer"
BAD = "C14 timer-bad-input"


def napping(graph_id: str, **wait: Any) -> dict[str, Any]:
    """``nap`` (a wait node with ``wait``) → ``done``."""
    return {
        "graph_id": graph_id,
        "entry": "nap",
        "nodes": [{"id": "nap", "kind": "wait", **wait}, {"id": "done", "kind": "end"}],
        "edges": [{"source": "nap", "target": "done"}],
    }


def wake_record(caller: Any, run_id: str) -> dict[str, Any]:
    timeline = check(caller.get(f"/runs/{run_id}/timeline"), 200)
    return timeline["entries"][1]["execution_metadata"]


@pytest.mark.spec(TIMER)
def test_a_run_waits_its_seconds_and_the_server_wakes_it_after_them(ecp_server, tenant, admin):
    deploy(admin, napping("nap", seconds=1), "nap")
    run = start(admin, "nap")
    assert run["status"] == "waiting_timer"
    due = parse_timestamp(run["wait_until"])
    assert due - parse_timestamp(run["created_at"]) >= timedelta(seconds=1)

    done = poll_until(admin, run["run_id"], {"completed"}, seconds=30)
    assert done["wait_until"] is None
    assert steps(admin, run["run_id"]) == [
        ("nap", "waiting_timer"),
        ("nap", "succeeded"),
        ("done", "succeeded"),
    ]
    wake = wake_record(admin, run["run_id"])
    assert wake["wait_until"] == format_timestamp(due)
    assert parse_timestamp(wake["woke_at"]) >= due
    verified = check(admin.get(f"/runs/{run['run_id']}/audit/verify"), 200)
    assert verified["verified"] is True


@pytest.mark.spec(TIMER)
def test_a_run_waits_until_the_time_in_its_state(ecp_server, tenant, admin):
    deploy(admin, napping("until", until_path="wake_at"), "until")
    soon = datetime.now(UTC) + timedelta(seconds=1)
    run = start(admin, "until", {"input": {"wake_at": soon.isoformat()}})
    assert run["status"] == "waiting_timer"
    assert parse_timestamp(run["wait_until"]) == soon
    poll_until(admin, run["run_id"], {"completed"}, seconds=30)
    assert parse_timestamp(wake_record(admin, run["run_id"])["woke_at"]) >= soon

    failed = start(admin, "until", {"input": {"wake_at": "next tuesday"}})
    assert failed["status"] == "failed"
    assert failed["failure_state"]["reason"] == "wait_time_invalid"


@pytest.mark.spec(BAD)
def test_bad_waits_are_refused_with_their_location_and_nothing_is_stored(admin):
    two_years = 2 * 365 * 24 * 3600
    cases = [
        ({"seconds": 0}, ["nodes", 0, "seconds"]),
        ({"seconds": two_years}, ["nodes", 0, "seconds"]),
        ({"seconds": 1.5}, ["nodes", 0, "seconds"]),
        ({"seconds": "60"}, ["nodes", 0, "seconds"]),
        ({}, ["nodes", 0, "seconds"]),
        ({"seconds": 5, "until_path": "wake_at"}, ["nodes", 0, "until_path"]),
        ({"until_path": "not a path"}, ["nodes", 0, "until_path"]),
    ]
    for wait, loc in cases:
        refused = problem(admin.post("/v1/graphs", json=napping("bad", **wait)), 422)
        assert loc in [error["loc"] for error in refused["errors"]], (wait, refused)
    ended = napping("bad")
    ended["nodes"][1]["seconds"] = 5
    ended["nodes"][0]["seconds"] = 5
    refused = problem(admin.post("/v1/graphs", json=ended), 422, "validation_failed")
    assert [error["loc"] for error in refused["errors"]] == [["nodes", 1, "seconds"]]
    problem(admin.get("/v1/graphs/bad/versions"), 404, "not_found")
