"""The Python client's retries and errors over real HTTP: a 503 storm, a 429 waited out, codes.

The storm stops the PostgreSQL under a live ``ecp serve`` for a few seconds while clients start
runs; the 429s and the problem of every declared code come from a stand-in server on 127.0.0.1
(``tests/support/receiver.py``) that records what it was sent.
"""

import asyncio
import collections
import json
import pathlib
import re
import threading
import time

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.e2e import gated_action_graph
from tests.support.live_serve import ecp_serve
from tests.support.receiver import receiver

from ecp_client import AsyncClient, Client, RetryPolicy
from ecp_client.problems import BY_CODE, QuotaExhausted

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).parents[2]
STOPPED_SECONDS = 4.0
STARTS = 4
RUN = {
    "run_id": "r-1",
    "thread_id": "r-1",
    "tenant_id": "t",
    "deployment_ref": "refunds",
    "graph_version_ref": "refund-triage@1",
    "status": "running",
    "pending_approval_ids": [],
    "created_at": "2026-12-06T12:00:00Z",
    "updated_at": "2026-12-06T12:00:00Z",
    "campaign_id": None,
    "failure_state": None,
    "output": None,
    "parent_run_id": None,
    "wait_until": None,
}


def declared_statuses() -> dict[str, int]:
    """Each code docs/api/errors.md declares, with its status (``varies`` as 400)."""
    table = (ROOT / "docs" / "api" / "errors.md").read_text().split("## Run failure", 1)[0]
    rows = re.findall(r"^\| `([a-z0-9_]+)` \| (\d{3}|varies) \|", table, re.MULTILINE)
    return {code: 400 if status == "varies" else int(status) for code, status in rows}


@pytest.mark.spec("C18 client-py-retries")
def test_a_429_is_waited_out_with_one_idempotency_key_for_every_try():
    with receiver(script=[429, 429], default=201, reply_body=json.dumps(RUN).encode()) as hook:
        hook.reply_headers = {"Retry-After": "1", "Content-Type": "application/json"}
        base = hook.url.removesuffix("/hook")
        began = time.monotonic()
        with Client(base, api_key="k") as client:
            run = client.runs.start("refunds", {"order": "A-1"})
        took = time.monotonic() - began
    assert run.run_id == "r-1"
    assert [got.answered for got in hook.received] == [429, 429, 201]
    keys = {got.headers["idempotency-key"] for got in hook.received}
    assert len(keys) == 1
    assert {got.headers["x-api-key"] for got in hook.received} == {"k"}
    assert {got.body for got in hook.received} == {
        b'{"deployment_ref": "refunds", "input": {"order": "A-1"}}'
    }
    assert 2.0 <= took < 10.0


@pytest.mark.spec("C18 client-py-retries")
def test_the_async_client_waits_out_a_429_with_one_idempotency_key_too():
    async def start(base: str) -> str:
        async with AsyncClient(base, token="t") as client:
            return (await client.runs.start("refunds", idempotency_key="mine")).run_id

    with receiver(script=[429], default=201, reply_body=json.dumps(RUN).encode()) as hook:
        hook.reply_headers = {"Retry-After": "1"}
        began = time.monotonic()
        assert asyncio.run(start(hook.url.removesuffix("/hook"))) == "r-1"
        took = time.monotonic() - began
    assert [got.headers["idempotency-key"] for got in hook.received] == ["mine", "mine"]
    assert 1.0 <= took < 8.0


@pytest.mark.spec("C18 client-py-retries", "C18 client-py-errors")
def test_a_long_retry_after_is_capped_and_the_deadline_gives_the_last_refusal():
    problem = {"type": "urn:ecp:error:quota_exhausted", "title": "Too Many Requests"}
    problem |= {"status": 429, "detail": "runs used up", "code": "quota_exhausted"}
    with receiver(default=429, reply_body=json.dumps(problem).encode()) as hook:
        hook.reply_headers = {"Retry-After": "3600", "X-Request-Id": "req-429"}
        policy = RetryPolicy(max_wait=0.3, deadline=1.0)
        began = time.monotonic()
        client = Client(hook.url.removesuffix("/hook"), token="t", retry=policy)
        with client, pytest.raises(QuotaExhausted) as refused:
            client.runs.get("r-1")
        took = time.monotonic() - began
    assert (refused.value.status, refused.value.request_id) == (429, "req-429")
    assert 3 <= len(hook.received) <= 5
    assert took < 3.0


@pytest.fixture(scope="module")
def stand_in():
    with receiver() as hook:
        yield hook


@pytest.mark.spec("C18 client-py-errors")
@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(code=st.sampled_from(sorted(declared_statuses())), request_id=st.uuids().map(str))
def test_each_declared_code_raises_its_class_over_http(stand_in, code, request_id):
    status = declared_statuses()[code]
    problem = {"type": f"urn:ecp:error:{code}", "title": "t", "status": status}
    problem |= {"detail": f"a {code}", "code": code, "instance": f"urn:ecp:request:{request_id}"}
    problem |= {"errors": [{"loc": ["body", "x"], "msg": "bad"}]}
    stand_in.default = status
    stand_in.reply_body = json.dumps(problem).encode()
    stand_in.reply_headers = {"Content-Type": "application/problem+json", "Retry-After": "0"}
    once = RetryPolicy(attempts=1)
    client = Client(stand_in.url.removesuffix("/hook"), token="t", retry=once)
    with client, pytest.raises(BY_CODE[code]) as raised:
        client.tasks.get("t-1")
    assert type(raised.value) is BY_CODE[code]
    assert (raised.value.status, raised.value.code) == (status, code)
    assert raised.value.request_id == request_id
    assert raised.value.detail == f"a {code}"
    assert [(e.loc, e.msg) for e in raised.value.errors] == [(("body", "x"), "bad")]


class Counting(httpx.HTTPTransport):
    """httpx's own transport, counting the statuses it saw."""

    def __init__(self) -> None:
        super().__init__()
        self.statuses: collections.Counter[int] = collections.Counter()
        self.lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        with self.lock:
            self.statuses[response.status_code] += 1
        return response


@pytest.mark.spec("C18 client-py-retries")
def test_a_503_storm_is_survived_with_exactly_one_run_per_start(outage_database, tmp_path):
    url, pg_ctl = outage_database
    with ecp_serve(url, tmp_path, ECP_DATABASE_POOL_TIMEOUT_SECONDS="1") as live:
        token = live.token("storm", "admin")
        with Client(live.base_url, token=token) as admin:
            admin.graphs.register(gated_action_graph())
            admin.deployments.create("gated", "gated-refund")
        transport = Counting()
        patient = RetryPolicy(deadline=90.0)
        results: dict[int, str] = {}
        failures: list[BaseException] = []

        def start(n: int) -> None:
            try:
                with Client(live.base_url, token=token, retry=patient, transport=transport) as c:
                    results[n] = c.runs.start("gated", {"n": n}).run_id
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        pg_ctl.stop_fast()
        try:
            threads = [threading.Thread(target=start, args=(n,)) for n in range(STARTS)]
            for thread in threads:
                thread.start()
            time.sleep(STOPPED_SECONDS)
        finally:
            pg_ctl.start()
        for thread in threads:
            thread.join(120)
        assert not failures, failures
        assert transport.statuses[503] >= STARTS, transport.statuses
        assert transport.statuses[500] == 0
        with Client(live.base_url, token=token) as admin:
            runs = list(admin.runs.list(page_size=2))
    assert sorted(run.run_id for run in runs) == sorted(results.values())
    assert len(runs) == STARTS
