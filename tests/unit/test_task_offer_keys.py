"""Keyed task-offer wake-ups (ADR 0071): the run-moved payload names the tenant, the bell keys.

``moved`` reads the payload the ``core_0008`` trigger sends and the older one a database not yet
migrated sends; a bell rung for a key reaches the watches of that key and the unkeyed ones only.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.types import RunStatus
from ecp_http.long_poll import Bell
from ecp_postgres.notifications import RunMoved, moved

pytestmark = pytest.mark.spec("C10 tenant-keyed-claim-wakeups")

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
