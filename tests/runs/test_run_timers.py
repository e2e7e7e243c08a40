"""Wait nodes on the memory store, through the ``Ecp`` facade (ADR 0078).

A run reaching a wait node waits ``seconds`` or until the time its state names: it shows
``waiting_timer`` with its ``wait_until``, its chain holds one ``waiting_timer`` record, and a
wake (never before the due time) writes one ``succeeded`` record and lets the run go on. A time
already past goes on at once; a time that cannot be read fails the run ``wait_time_invalid``.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.support.child_runs import ACTOR, EPOCH, TENANT, World

from ecp_core.errors import ValidationFailed
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import MAX_WAIT_SECONDS, GraphDefinition, NodeDefinition
from ecp_core.runs.run.model import CancelRunRequest, Run
from ecp_core.types import AttemptStatus, NodeKind, RunPublicStatus, RunStatus
from ecp_core.wire import format_timestamp

pytestmark = pytest.mark.unit

TIMER = "C14 timer"
CONTROL = "C14 timer-control"
BAD = "C14 timer-bad-input"


def napping(seconds: int = 60, graph_id: str = "nap") -> GraphDefinition:
    """``nap`` (a wait of ``seconds``) → ``done``."""
    return (
        GraphBuilder(graph_id).wait("nap", seconds=seconds).end("done").chain("nap", "done").build()
    )


def until(graph_id: str = "until") -> GraphDefinition:
    """``nap`` (a wait until the time at ``wake.at``) → ``done``."""
    return (
        GraphBuilder(graph_id)
        .wait("nap", until_path="wake.at")
        .end("done")
        .chain("nap", "done")
        .build()
    )


def statuses(world: World, run_id: str) -> list[str]:
    return [record.status for record in world.records(run_id)]


def metadata(world: World, run_id: str, index: int) -> dict[str, Any]:
    found = world.records(run_id)[index].execution_metadata
    assert isinstance(found, dict)
    return found


def current(world: World, run: Run) -> Run:
    return world.ecp.runs.get(TENANT, run.run_id)


@pytest.mark.spec(TIMER)
def test_a_run_waits_its_seconds_and_then_goes_on() -> None:
    world = World()
    world.deploy("nap", napping(60))
    run = world.run_to_rest("nap")

    assert run.public_status is RunPublicStatus.WAITING_TIMER
    assert run.wait_until == EPOCH + timedelta(seconds=60)
    assert statuses(world, run.run_id) == [AttemptStatus.WAITING_TIMER]
    assert metadata(world, run.run_id, 0)["wait_until"] == format_timestamp(run.wait_until)
    assert metadata(world, run.run_id, 0)["seconds"] == 60

    world.clock.advance(59.999)
    assert world.ecp.runs.wake_timers() == []
    world.settle()
    assert current(world, run).status is RunStatus.WAITING_TIMER

    world.clock.advance(0.001)
    (woken,) = world.ecp.runs.wake_timers()
    assert woken.run.run_id == run.run_id
    assert woken.late_seconds == 0
    assert woken.run.wait_until is None
    world.settle()
    done = current(world, run)
    assert done.status is RunStatus.COMPLETED
    assert statuses(world, run.run_id) == [
        AttemptStatus.WAITING_TIMER,
        AttemptStatus.SUCCEEDED,
        AttemptStatus.SUCCEEDED,
    ]
    wake = metadata(world, run.run_id, 1)
    assert wake["node_kind"] == "wait"
    assert wake["wait_until"] == format_timestamp(EPOCH + timedelta(seconds=60))
    assert wake["woke_at"] == format_timestamp(EPOCH + timedelta(seconds=60))
    assert wake["next_node_id"] == "done"
    assert world.verified(run.run_id)


@pytest.mark.spec(TIMER)
def test_a_run_waits_until_the_time_its_state_names_in_utc() -> None:
    world = World()
    world.deploy("until", until())
    run = world.run_to_rest("until", {"wake": {"at": "2026-01-01T03:30:00+02:00"}})

    assert run.status is RunStatus.WAITING_TIMER
    assert run.wait_until == datetime(2026, 1, 1, 1, 30, tzinfo=UTC)
    assert metadata(world, run.run_id, 0)["until_path"] == "wake.at"
    world.clock.advance(90 * 60)
    assert len(world.ecp.runs.wake_timers()) == 1
    world.settle()
    assert current(world, run).output == {"wake": {"at": "2026-01-01T03:30:00+02:00"}}


@pytest.mark.spec(TIMER)
def test_a_time_already_past_goes_on_at_once_with_one_record() -> None:
    world = World()
    world.deploy("until", until())
    run = world.run_to_rest("until", {"wake": {"at": "2025-12-31T23:59:59Z"}})

    assert run.status is RunStatus.COMPLETED
    assert statuses(world, run.run_id) == [AttemptStatus.SUCCEEDED, AttemptStatus.SUCCEEDED]
    assert metadata(world, run.run_id, 0)["wait_until"] == "2025-12-31T23:59:59.000000Z"
    assert world.verified(run.run_id)


UNREADABLE = st.one_of(
    st.none(),
    st.integers(-(2**53) + 1, 2**53 - 1),  # JSON's exact integers
    st.booleans(),
    st.lists(st.integers(0, 10), max_size=2),
    st.sampled_from(
        [
            "",
            "tomorrow",
            "2026-01-02",  # a date alone
            "2026-01-02T10:00:00",  # no offset
            "2026-01-02 10:00:00Z",  # a space for the T
            "20260102T100000Z",  # the basic form
            "2026-02-30T10:00:00Z",  # no such day
            "2026-01-02T25:00:00Z",  # no such hour
            "2027-01-02T00:00:01Z",  # more than a year ahead
        ]
    ),
    st.text(  # storable text (no NUL, no lone surrogate) that is no time
        st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=30
    ).filter(lambda text: not text[:1].isdigit()),
)


@pytest.mark.spec(TIMER)
@settings(max_examples=40, deadline=None)
@given(value=UNREADABLE)
def test_a_time_that_cannot_be_read_fails_the_run(value: object) -> None:
    world = World()
    world.deploy("until", until())
    run = world.run_to_rest("until", {"wake": {"at": value}})

    assert run.status is RunStatus.FAILED
    assert run.failure_state is not None
    assert run.failure_state.reason == "wait_time_invalid"
    (record,) = world.records(run.run_id)
    assert record.status == AttemptStatus.FAILED
    assert world.verified(run.run_id)


@pytest.mark.spec(TIMER)
def test_a_missing_time_fails_the_run() -> None:
    world = World()
    world.deploy("until", until())
    run = world.run_to_rest("until", {"wake": {}})
    assert run.failure_state is not None
    assert run.failure_state.reason == "wait_time_invalid"
    assert "no value at until_path 'wake.at'" in (run.failure_state.message or "")


@pytest.mark.spec(TIMER)
@settings(max_examples=30, deadline=None)
@given(
    seconds=st.lists(st.integers(1, MAX_WAIT_SECONDS), min_size=1, max_size=6),
    steps=st.lists(st.floats(0, 40_000_000, allow_nan=False), min_size=1, max_size=8),
)
def test_no_run_wakes_before_its_time_and_each_wakes_at_the_first_look_after_it(
    seconds: list[int], steps: list[float]
) -> None:
    world = World()
    for index, wait in enumerate(seconds):
        world.deploy(f"nap-{index}", napping(wait, f"nap-{index}"))
    runs = [world.run_to_rest(f"nap-{index}") for index in range(len(seconds))]
    due = {run.run_id: run.wait_until for run in runs}
    woken: set[str] = set()
    for step in steps:
        world.clock.advance(step)
        now = world.clock.now()
        for wake in world.ecp.runs.wake_timers():
            assert wake.due <= wake.woke_at == now
            assert wake.run.run_id not in woken  # once only
            woken.add(wake.run.run_id)
        assert woken == {run_id for run_id, at in due.items() if at is not None and at <= now}
    for run in runs:
        records = statuses(world, run.run_id)
        assert records.count(AttemptStatus.WAITING_TIMER) == 1
        assert records.count(AttemptStatus.SUCCEEDED) == (1 if run.run_id in woken else 0)


def test_due_runs_wake_earliest_first_and_a_batch_takes_at_most_its_limit() -> None:
    world = World()
    for wait in (30, 10, 20):
        world.deploy(f"nap-{wait}", napping(wait, f"nap-{wait}"))
    runs = {wait: world.run_to_rest(f"nap-{wait}") for wait in (30, 10, 20)}
    world.clock.advance(60)

    first = world.ecp.runs.wake_timers(limit=2)
    rest = world.ecp.runs.wake_timers(limit=2)
    assert [w.run.run_id for w in first] == [runs[10].run_id, runs[20].run_id]
    assert [w.run.run_id for w in rest] == [runs[30].run_id]
    assert [w.late_seconds for w in first] == [50, 40]


@pytest.mark.spec(CONTROL)
def test_a_canceled_waiting_run_never_wakes() -> None:
    world = World()
    world.deploy("nap", napping(60))
    run = world.run_to_rest("nap")

    canceled = world.ecp.runs.cancel(ACTOR, run.run_id, CancelRunRequest(reason="not needed"))
    assert canceled.public_status is RunPublicStatus.CANCELED
    assert canceled.wait_until is None
    world.clock.advance(3600)
    assert world.ecp.runs.wake_timers() == []
    assert statuses(world, run.run_id) == [AttemptStatus.WAITING_TIMER, AttemptStatus.CANCELED]
    assert world.verified(run.run_id)


@pytest.mark.spec(CONTROL)
def test_a_paused_waiting_run_wakes_when_due_and_then_waits_to_be_unpaused() -> None:
    world = World()
    world.deploy("nap", napping(60))
    run = world.run_to_rest("nap")
    paused = world.ecp.runs.pause(ACTOR, run.run_id)
    assert paused.public_status is RunPublicStatus.WAITING_TIMER  # it still waits on its timer

    world.clock.advance(60)
    (woken,) = world.ecp.runs.wake_timers()
    assert woken.run.public_status is RunPublicStatus.PAUSED
    world.settle()
    assert current(world, run).public_status is RunPublicStatus.PAUSED

    world.ecp.runs.unpause(ACTOR, run.run_id)
    world.settle()
    assert current(world, run).status is RunStatus.COMPLETED


def wait_node(**fields: Any) -> NodeDefinition:
    return NodeDefinition(id="nap", kind=NodeKind.WAIT, **fields)


@pytest.mark.spec(BAD)
@pytest.mark.parametrize("seconds", [0, -1, MAX_WAIT_SECONDS + 1, 2 * 365 * 24 * 3600])
def test_a_wait_outside_one_second_to_a_year_is_refused(seconds: int) -> None:
    with pytest.raises(ValueError, match="seconds must be"):
        wait_node(seconds=seconds)


@pytest.mark.spec(BAD)
@pytest.mark.parametrize(
    ("node", "field"),
    [
        (wait_node(), "seconds"),
        (wait_node(seconds=5, until_path="wake.at"), "until_path"),
        (NodeDefinition(id="nap", kind=NodeKind.END, seconds=5), "seconds"),
        (NodeDefinition(id="nap", kind=NodeKind.END, until_path="wake.at"), "until_path"),
    ],
)
def test_a_wait_node_takes_exactly_one_time_and_no_other_node_takes_one(
    node: NodeDefinition, field: str
) -> None:
    world = World()
    graph = GraphDefinition(graph_id="bad", entry="nap", nodes=(node,))
    with pytest.raises(ValidationFailed) as refused:
        world.ecp.graphs.register(TENANT, graph)
    assert ("nodes", 0, field) in [error.loc for error in refused.value.errors]
