"""Live updates: ``GET /console/events``, a stream of ids as runs and approvals move (ADR 0084).

A signed-in session reads ``text/event-stream`` events ``run`` and ``approval`` whose data is
the id, of its own tenant only, and only the kinds its roles may read (``run_read``,
``approval_read``). Each event's id lets a reconnecting browser resume with ``Last-Event-ID``;
one this process can no longer serve gets a ``reload`` event. A comment line every
:data:`HEARTBEAT_SECONDS` keeps proxies from closing a quiet stream, and the session is checked
as often: the stream ends (an ``end`` event) once it expires or its API key is revoked. A stream
ends after :data:`LIFETIME_SECONDS` and the browser reconnects, so that a graceful shutdown never
waits on one for long.
``/console/static/live.js`` subscribes and refreshes the page's parts; without it every page
still works.
"""

import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response, StreamingResponse

from ecp_core.errors import EcpError, Forbidden
from ecp_core.permissions import Permission
from ecp_http.server.console.browser import (
    CONSOLE_CSP,
    CONSOLE_HEADERS,
    Visit,
    live_session,
    signed_in,
)
from ecp_http.server.console_sessions import SessionEnded
from ecp_http.server.live_feed import APPROVAL, RUN, LiveEvent, LiveFeed, TooManyStreams
from ecp_http.server.pages.render import script
from ecp_http.server.routing import Call
from ecp_http.server.services import Services

log = logging.getLogger("ecp_http.console.live")

HEARTBEAT_SECONDS = 10.0
"""How often a quiet stream sends a comment line, and how often it checks the session."""
LIFETIME_SECONDS = 20.0
"""How long one stream lasts before it ends and the browser reconnects (resuming by its
``Last-Event-ID``): a server shutting down gracefully waits for open requests, never longer."""
RETRY_MILLISECONDS = 3000
"""How long a browser waits before it reconnects a stream that dropped."""
SCRIPT = "/console/static/live.js"


def frame(event: LiveEvent, feed: LiveFeed) -> str:
    """One event as the stream sends it."""
    return f"id: {feed.event_id(event)}\nevent: {event.kind}\ndata: {event.subject_id}\n\n"


def _kinds(visit: Visit) -> frozenset[str]:
    """The kinds of event the session's roles may read; Forbidden when none."""
    kinds = frozenset(
        kind
        for kind, permission in ((RUN, Permission.RUN_READ), (APPROVAL, Permission.APPROVAL_READ))
        if visit.may(permission)
    )
    if not kinds:
        raise Forbidden("live updates need the run_read or the approval_read permission")
    return kinds


async def _stream(visit: Visit, kinds: frozenset[str], start: int | None) -> AsyncIterator[str]:
    """The events after ``start`` (None: the client must reload), heartbeats, then the end."""
    feed, session = visit.services.live, visit.session
    facts = {"tenant_id": session.tenant_id, "subject": session.subject}
    try:
        with feed.stream(session.session_id, session.tenant_id):
            log.info("console stream opened", extra=facts)
            try:
                seq = feed.last_seq if start is None else start
                mark = f"retry: {RETRY_MILLISECONDS}\nid: {feed.event_id_at(seq)}\n"
                yield mark + ("event: reload\ndata: missed\n\n" if start is None else "\n")
                checked = opened = time.monotonic()
                while time.monotonic() - opened < LIFETIME_SECONDS:
                    watch = feed.bell.watch(session.tenant_id, HEARTBEAT_SECONDS)
                    try:
                        found, seq = feed.after(seq, session.tenant_id, kinds)
                        for event in found:
                            yield frame(event, feed)
                        if not found:
                            await watch.wait(HEARTBEAT_SECONDS)
                    finally:
                        watch.close()
                    if time.monotonic() - checked >= HEARTBEAT_SECONDS:
                        checked = time.monotonic()
                        if datetime.now(UTC) >= session.expires_at:
                            yield "event: end\ndata: expired\n\n"
                            return
                        await run_in_threadpool(
                            live_session, visit.services, visit.sessions, visit.call
                        )
                        yield f"id: {feed.event_id_at(seq)}\n: heartbeat\n\n"  # resume from here
                found, seq = feed.after(seq, session.tenant_id, kinds)
                yield (
                    "".join(frame(event, feed) for event in found)
                    + f"id: {feed.event_id_at(seq)}\n\n"
                )
            finally:
                log.info("console stream closed", extra=facts)
    except SessionEnded:
        yield "event: end\ndata: signed out\n\n"
    except EcpError:  # the session could not be checked (the database away): the browser retries
        log.warning("console stream ended: its session could not be checked", extra=facts)
    except TooManyStreams as exc:  # another stream took the last place meanwhile
        yield f"event: end\ndata: {exc}\n\n"


def _events(visit: Visit) -> Response:
    """The session's live stream; 429 when it would pass a bound on open streams."""
    kinds = _kinds(visit)
    feed, session = visit.services.live, visit.session
    if not feed.admits(session.session_id, session.tenant_id):
        return visit.page(
            "console_error.html",
            status=429,
            signed_in=True,
            error_status=429,
            code="too_many_streams",
            message="Too many live streams are open: close another tab, or wait a little.",
            details=[],
        )
    start = feed.resume_from(visit.call.headers.get("last-event-id"))
    headers = {**CONSOLE_HEADERS, "X-Accel-Buffering": "no"}
    return StreamingResponse(
        _stream(visit, kinds, start), media_type="text/event-stream", headers=headers
    )


def _no_session() -> Response:
    """Without a live session: 204, on which an EventSource stops reconnecting."""
    return Response(status_code=204, headers=CONSOLE_HEADERS)


events = signed_in(_events, ended=_no_session)


def live_script(_: Call, __: Services) -> Response:
    """The script that subscribes to the stream and refreshes what a page shows."""
    response = script("console-live.js")
    response.headers["Content-Security-Policy"] = CONSOLE_CSP
    return response


__all__ = ["HEARTBEAT_SECONDS", "LIFETIME_SECONDS", "SCRIPT", "events", "frame", "live_script"]
