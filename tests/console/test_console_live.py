"""The console's live stream on a real server over loopback (ADR 0084), read with httpx.

``GET /console/events`` streams ids of the session's tenant only, of the kinds its roles may
read; a reconnection with ``Last-Event-ID`` gets what it missed, an id the server no longer holds
gets ``reload``; heartbeats keep a quiet stream open; a revoked key ends it; a session may hold
only so many streams; ``ecp_console_streams_open`` counts them.
"""

import queue
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import attrs
import httpx
import pytest
from tests.support.console import reviewed
from tests.support.console_browser import Console, console_server

from ecp_http.server import live_feed
from ecp_http.server.auth import mint_token
from ecp_http.server.console import live

pytestmark = pytest.mark.integration

LIVE = "C15 console-live"
TENANT = "live-a"
OTHER = "live-b"
WAIT = {"Prefer": "wait=10"}


@pytest.fixture(scope="module")
def server(postgres_url: str, migrated_template: str) -> Iterator[Console]:
    with console_server(postgres_url, migrated_template) as served:
        yield served


_clients: list[httpx.Client] = []


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Heartbeats (and session checks) twice a second, streams of five seconds; the test's
    clients closed after it."""
    monkeypatch.setattr(live, "HEARTBEAT_SECONDS", 0.5)
    monkeypatch.setattr(live, "LIFETIME_SECONDS", 5.0)
    yield
    while _clients:
        _clients.pop().close()


@attrs.frozen
class Message:
    """One SSE message (``event`` empty for an id-only or comment message)."""

    event: str
    data: str
    id: str
    comment: bool


@attrs.define
class Stream:
    """The messages of one open stream, read by a thread of their own."""

    response: httpx.Response
    messages: "queue.Queue[Message | None]" = attrs.field(factory=queue.Queue)

    def next(self, event: str | None = None, seconds: float = 10.0) -> Message:
        """The next message (of ``event``, skipping others), waiting up to ``seconds``."""
        while True:
            found = self.messages.get(timeout=seconds)
            assert found is not None, "the stream ended"
            if event is None or found.event == event:
                return found

    def events(self, seconds: float = 1.5) -> list[Message]:
        """Every named event until none came for ``seconds`` (or the stream ended)."""
        found: list[Message] = []
        quiet_until = time.monotonic() + seconds
        while (left := quiet_until - time.monotonic()) > 0:
            try:
                message = self.messages.get(timeout=left)
            except queue.Empty:
                break
            if message is None:
                break
            if message.event:
                found.append(message)
                quiet_until = time.monotonic() + seconds
        return found


def _read(response: httpx.Response, into: "queue.Queue[Message | None]") -> None:
    fields: dict[str, str] = {}
    comment = False
    try:
        for line in response.iter_lines():
            if line == "":
                if fields or comment:
                    into.put(
                        Message(
                            fields.get("event", ""),
                            fields.get("data", ""),
                            fields.get("id", ""),
                            comment,
                        )
                    )
                fields, comment = {}, False
            elif line.startswith(":"):
                comment = True
            else:
                name, _, value = line.partition(":")
                fields[name] = value.removeprefix(" ")
    except httpx.HTTPError:  # the test closed it
        pass
    into.put(None)


def signed_in(server: Console, key: str) -> httpx.Client:
    """A client of the server with a console session of ``key``."""
    client = httpx.Client(base_url=server.base_url, timeout=30.0)
    _clients.append(client)
    form = client.get("/console/sign-in").text
    token = re.search(r'name="csrf_token" value="([^"]+)"', form)
    assert token is not None
    answer = client.post("/console/sign-in", data={"csrf_token": token.group(1), "credential": key})
    assert answer.status_code == 303, answer.text
    return client


@contextmanager
def stream(client: httpx.Client, last_event_id: str | None = None) -> Iterator[Stream]:
    headers = {"Accept": "text/event-stream"}
    if last_event_id is not None:
        headers["Last-Event-ID"] = last_event_id
    with client.stream("GET", "/console/events", headers=headers) as response:
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        opened = Stream(response)
        threading.Thread(target=_read, args=(response, opened.messages), daemon=True).start()
        yield opened


def deploy(server: Console, tenant: str, ref: str) -> None:
    admin = server.headers(tenant)
    assert server.client.post("/v1/graphs", json=reviewed(ref), headers=admin).status_code == 201
    body = {"deployment_ref": ref, "graph_id": ref}
    assert server.client.post("/v1/deployments", json=body, headers=admin).status_code == 201


def waiting(server: Console, tenant: str, ref: str) -> tuple[str, str]:
    body = {"deployment_ref": ref, "input": {"amount": 1}}
    run = server.client.post("/runs", json=body, headers={**server.headers(tenant), **WAIT}).json()
    assert run["status"] == "waiting_approval", run
    return run["run_id"], run["pending_approval_ids"][0]


@pytest.mark.spec(LIVE)
def test_a_session_hears_its_tenants_runs_and_approvals_only(server):
    deploy(server, TENANT, "live-pay")
    deploy(server, OTHER, "live-pay")
    approver = signed_in(server, server.key("approver", TENANT))
    with stream(approver) as opened:
        first = opened.next()
        assert first.id and first.event == ""  # where to resume from
        waiting(server, OTHER, "live-pay")
        run_id, approval_id = waiting(server, TENANT, "live-pay")
        got = opened.events()
        assert {(m.event, m.data) for m in got} == {("run", run_id), ("approval", approval_id)}
        assert all(m.id for m in got)
        assert opened.next(seconds=3).comment  # a heartbeat


@pytest.mark.spec(LIVE)
def test_a_reconnection_resumes_from_its_last_event_id_or_is_told_to_reload(server):
    deploy(server, TENANT, "live-resume")
    key = server.key("approver", TENANT)
    approver = signed_in(server, key)
    with stream(approver) as opened:
        waiting(server, TENANT, "live-resume")
        last = opened.events()[-1].id
    missed_run, missed_approval = waiting(server, TENANT, "live-resume")
    with stream(approver, last_event_id=last) as again:
        got = again.events()
        assert {(m.event, m.data) for m in got} == {
            ("run", missed_run),
            ("approval", missed_approval),
        }
    for stale in ("00000000-1", "garbage", f"{last.split('-')[0]}-999999999"):
        # a session of its own each: a closed stream counts until the server next writes to it
        with stream(signed_in(server, key), last_event_id=stale) as told:
            assert told.next().event == "reload"


@pytest.mark.spec(LIVE)
def test_roles_choose_the_kinds_and_a_role_that_reads_neither_gets_none(server):
    deploy(server, TENANT, "live-roles")
    analyst = signed_in(server, server.key("analyst", TENANT))  # run_read, not approval_read
    with stream(analyst) as opened:
        run_id, _ = waiting(server, TENANT, "live-roles")
        assert [(m.event, m.data) for m in opened.events()] == [("run", run_id)]
    worker = signed_in(server, server.key("worker", TENANT))
    refused = worker.get("/console/events")
    assert refused.status_code == 403 and "text/html" in refused.headers["content-type"]
    nobody = server.client.get("/console/events", follow_redirects=False)
    assert (nobody.status_code, nobody.content) == (204, b"")  # an EventSource stops on 204


@pytest.mark.spec(LIVE)
def test_a_revoked_key_ends_its_stream(server):
    admin = server.headers(TENANT)
    made = server.client.post(
        "/v1/api-keys", json={"name": "soon revoked", "role": "approver"}, headers=admin
    ).json()
    approver = signed_in(server, made["key"])
    with stream(approver) as opened:
        opened.next()
        assert server.client.delete(
            f"/v1/api-keys/{made['key_id']}", headers=admin
        ).status_code in (200, 204)
        assert opened.next("end").data == "signed out"


@pytest.mark.spec(LIVE)
def test_streams_are_bounded_per_session_and_counted(server, monkeypatch):
    monkeypatch.setattr(live_feed, "STREAMS_PER_SESSION", 2)
    approver = signed_in(server, server.key("approver", TENANT))
    with stream(approver) as one, stream(approver) as two:
        one.next()
        two.next()
        refused = approver.get("/console/events")
        assert refused.status_code == 429
        # Streams the module's earlier tests left are counted until the server's next heartbeat
        # finds them gone; then only these two are.
        deadline = time.monotonic() + live.HEARTBEAT_SECONDS + 5
        while not re.search(
            r"^ecp_console_streams_open 2\.0$",
            metrics := server.client.get("/metrics").text,
            re.MULTILINE,
        ):
            assert time.monotonic() < deadline, metrics
            time.sleep(0.1)
        other = signed_in(server, server.key("approver", TENANT))
        with stream(other) as three:  # another session still may
            three.next()


@pytest.mark.spec(LIVE)
def test_a_stream_ends_when_its_session_expires(server):
    token = mint_token(server.secret, tenant=TENANT, roles=["approver"], ttl_seconds=3)
    approver = signed_in(server, token)  # the session lasts as long as the token
    with stream(approver) as opened:
        opened.next()
        assert opened.next("end", seconds=15).data == "expired"
