"""Keyed task-offer wake-ups (ADR 0071): the payloads name the tenant, the bell keys and picks.

``moved`` reads the payload the ``core_0008`` trigger sends and the older one a database not yet
migrated sends, ``offered`` the task offer's of ``tasks_0004``; a bell rung for a key reaches the
watches of that key and the unkeyed ones only, and a ring for one task reaches one of them.
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.types import RunStatus
from ecp_http.server.long_poll import Bell, Watch
from ecp_postgres.notifications import RunMoved, TaskOffered, moved, offered

pytestmark = [pytest.mark.unit, pytest.mark.spec("C10 tenant-keyed-claim-wakeups")]

statuses = st.sampled_from([s.value for s in RunStatus])
run_ids = st.text(st.characters(exclude_characters=" \x00", exclude_categories=["Cs"]), min_size=1)
tenants = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), min_size=1)


@given(statuses, run_ids, tenants)
def test_a_payload_names_the_status_run_and_tenant_even_one_with_spaces(status, run_id, tenant):
    payload = status + " " + run_id + " " + tenant  # as the trigger concatenates them
    assert moved(payload) == RunMoved(status, run_id, tenant)


@given(statuses, run_ids)
def test_the_older_payload_names_no_tenant(status, run_id):
    assert moved(f"{status} {run_id}") == RunMoved(status, run_id, None)


def test_payloads_as_the_triggers_send_them():
    assert moved("WAITING_TASK 0190-ab acme corp") == RunMoved(
        "WAITING_TASK", "0190-ab", "acme corp"
    )
    assert moved("COMPLETED 0190-ab") == RunMoved("COMPLETED", "0190-ab", None)


keys = st.none() | st.sampled_from(["acme", "globex", "initech"])


@given(st.lists(keys, max_size=8), keys)
def test_a_ring_reaches_the_watches_of_its_key_and_the_unkeyed_only(watched, rung):
    bell = Bell()
    watches = [bell.watch(key, 30) for key in watched]
    bell.ring(rung)
    reached = [w for w in watches if rung is None or w.key is None or w.key == rung]
    assert bell.woken == len(reached)
    assert bell.watching == len(watches)
    for watch in watches:
        watch.close()
    bell.ring(rung)
    assert bell.woken == len(reached)
    assert bell.watching == 0


texts = st.text(st.characters(exclude_characters="\x00", exclude_categories=["Cs"]), min_size=1)


@given(texts, texts)
def test_an_offer_payload_names_the_tenant_and_topic_whatever_they_hold(tenant, topic):
    assert offered(json.dumps([tenant, topic])) == TaskOffered(tenant, topic)


@pytest.mark.parametrize("payload", ["", "acme work", "[]", '["acme"]', '["a", 1]', '{"a": "b"}'])
def test_an_offer_payload_of_another_shape_is_not_understood(payload):
    assert offered(payload) is None


topics = st.sampled_from(["work", "mail", "bill"])
watch_specs = st.lists(st.tuples(keys, st.none() | st.frozensets(topics, min_size=1)), max_size=8)


@given(watch_specs, st.sampled_from(["acme", "globex"]), topics, st.integers(1, 10))
def test_each_ring_for_one_wakes_a_distinct_watch_that_takes_the_topic(specs, key, topic, rings):
    """A task offered wakes one claim of its tenant that takes its topic, the one there longest
    that no ring reached yet; as many offers as such claims wake each of them once."""
    bell = Bell()
    watches = [bell.watch(watch_key, 30, watch_topics) for watch_key, watch_topics in specs]
    hearing = [w for w in watches if w.hears(key, topic)]
    expected = [
        (w.key is None or w.key == key) and (w.topics is None or topic in w.topics) for w in watches
    ]
    assert [w in hearing for w in watches] == expected
    reached: list[Watch] = []
    for _ in range(rings):
        before = {id(w): w.free_rank() for w in watches}
        bell.ring(key, topic=topic, one=True)
        now = [w for w in hearing if w.free_rank() != before[id(w)]]
        reached.extend(now)
    assert bell.woken == (rings if hearing else 0)
    distinct = min(rings, len(hearing))
    assert len(reached) == len({id(w) for w in reached}) == distinct
    by_age = sorted(hearing, key=lambda w: w.arrival)
    assert [id(w) for w in reached] == [id(w) for w in by_age[:distinct]]
