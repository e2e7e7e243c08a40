"""The live feed behind ``/console/events`` (ADR 0084): resumption, tenants, echoes and bounds.

Hypothesis publishes moves of runs of two tenants; a client resuming from any event id it was
given gets exactly its tenant's later events, in order, once; an id older than the buffer, from
another process or malformed, says reload.
"""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_http.server import live_feed
from ecp_http.server.live_feed import APPROVAL, RUN, LiveFeed, TooManyStreams

pytestmark = pytest.mark.unit

LIVE = "C15 console-live"
_MOVES = st.lists(
    st.tuples(
        st.sampled_from(["t1", "t2"]),
        st.integers(0, 40),  # a run, each moving once: WAITING_APPROVAL with one approval
    ),
    min_size=1,
    max_size=40,
    unique_by=lambda move: move[1],
)


@pytest.mark.spec(LIVE)
@settings(max_examples=80, deadline=None)
@given(moves=_MOVES, buffered=st.integers(2, 50), data=st.data())
def test_a_resumed_reader_gets_its_tenants_later_events_once_or_is_told_to_reload(
    moves, buffered, data
):
    feed = LiveFeed(buffered=buffered)
    start = feed.event_id_at(feed.last_seq)
    for tenant, run in moves:
        feed.run_moved(tenant, f"run-{run}", "WAITING_APPROVAL", [f"appr-{run}"])
    published = [
        (tenant, kind, f"{'run' if kind == RUN else 'appr'}-{run}")
        for tenant, run in moves
        for kind in (RUN, APPROVAL)
    ]
    point = data.draw(st.integers(0, len(published)), label="resume after")
    resumed = feed.resume_from(feed.event_id_at(point))
    if point < len(published) - buffered:
        assert resumed is None  # the buffer lost some of what it missed
        return
    assert resumed == point
    found, upto = feed.after(resumed, "t1", frozenset({RUN, APPROVAL}))
    assert upto == len(published)
    expected = [(kind, subject) for tenant, kind, subject in published[point:] if tenant == "t1"]
    assert [(e.kind, e.subject_id) for e in found] == expected
    only_runs, _ = feed.after(resumed, "t1", frozenset({RUN}))
    assert [e.subject_id for e in only_runs] == [s for k, s in expected if k == RUN]
    if len(published) <= buffered:
        assert feed.resume_from(start) == 0


@pytest.mark.spec(LIVE)
def test_foreign_malformed_and_future_ids_say_reload_and_no_id_starts_now():
    feed = LiveFeed()
    feed.run_moved("t1", "run-1", "COMPLETED")
    assert feed.resume_from(None) == feed.resume_from("") == 1
    for bad in ("other-1", "garbage", f"{feed.epoch}-x", f"{feed.epoch}-2", "-1"):
        assert feed.resume_from(bad) is None, bad


@pytest.mark.spec(LIVE)
def test_a_move_heard_twice_is_published_once_and_its_approval_is_added():
    feed = LiveFeed()
    feed.run_moved("t1", "run-1", "WAITING_APPROVAL")  # the notification, naming no approval
    feed.run_moved("t1", "run-1", "WAITING_APPROVAL", ["appr-1"])  # the dispatcher of this process
    feed.run_moved("t1", "run-1", "WAITING_APPROVAL")  # an echo
    feed.run_moved("t1", "run-1", "COMPLETED")
    found, _ = feed.after(0, "t1", frozenset({RUN, APPROVAL}))
    assert [(e.kind, e.subject_id) for e in found] == [
        (RUN, "run-1"),
        (APPROVAL, "appr-1"),
        (RUN, "run-1"),
    ]


@pytest.mark.spec(LIVE)
def test_streams_are_bounded_per_session_tenant_and_process(monkeypatch):
    monkeypatch.setattr(live_feed, "STREAMS_PER_SESSION", 2)
    monkeypatch.setattr(live_feed, "STREAMS_PER_TENANT", 3)
    monkeypatch.setattr(live_feed, "STREAMS_PER_PROCESS", 4)
    feed = LiveFeed()
    with feed.stream("s1", "t1"), feed.stream("s1", "t1"):
        assert not feed.admits("s1", "t1")
        with pytest.raises(TooManyStreams), feed.stream("s1", "t1"):
            pass
        with feed.stream("s2", "t1"):
            assert not feed.admits("s3", "t1")  # the tenant's bound
            with feed.stream("s4", "t2"):
                assert feed.open_streams == 4
                assert not feed.admits("s5", "t3")  # the process's bound
    assert feed.open_streams == 0 and feed.admits("s1", "t1")
