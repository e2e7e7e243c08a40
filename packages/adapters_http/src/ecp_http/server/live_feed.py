"""What the console's live updates hear: runs that waited or ended, approvals requested (ADR 0084).

One :class:`LiveFeed` per server process. The dispatcher of this process publishes each run it
moves to a wait or an end (with the approvals a run now waits for), and the notification listener
publishes the runs other processes moved (``ecp_runs_moved``, ADR 0063): the same notifications
that wake ``Prefer: wait``. Events hold ids only (a tenant, a kind, an id), never a run's data.

Each event gets the next number of a sequence of this process; the feed keeps the latest
:data:`BUFFERED` of them, so a client that reconnects with ``Last-Event-ID`` gets what it missed,
or hears that it missed too much (its id is older than the buffer, or from another process or an
earlier start) and should reload. The same move heard twice (from the dispatcher and from its own
notification) is published once. :class:`LiveFeed` also bounds the open streams: per session,
per tenant and per process, so no tenant can take every stream of a process.
"""

import collections
import contextlib
import itertools
import logging
import secrets
import threading
import time
from collections.abc import Iterable, Iterator

import attrs

from ecp_http.server.long_poll import Bell

log = logging.getLogger("ecp_http.live")

BUFFERED = 1024
"""How many recent events a process keeps for clients that reconnect."""
STREAMS_PER_SESSION = 4
"""Open streams one console session may hold (a few tabs)."""
STREAMS_PER_TENANT = 100
"""Open streams one tenant may hold in one process."""
STREAMS_PER_PROCESS = 400
"""Open streams one process serves at once."""
RUN = "run"
APPROVAL = "approval"
_WAITING_APPROVAL = "WAITING_APPROVAL"
ECHO_SECONDS = 5.0
"""How long after a move is published the same move heard again (its notification) is an echo."""


@attrs.frozen
class LiveEvent:
    """One event: ``kind`` (``run`` or ``approval``) of ``subject_id`` in ``tenant_id``."""

    seq: int
    tenant_id: str
    kind: str
    subject_id: str


@attrs.frozen
class _Move:
    """The latest move published for a run: its status, its approvals, when (monotonic)."""

    status: str
    approval_ids: tuple[str, ...]
    at: float


class TooManyStreams(Exception):
    """A stream would pass one of the bounds; the message says which."""


class LiveFeed:
    """The recent events of this process, a bell rung for each, and the open streams' count."""

    def __init__(self, *, buffered: int = BUFFERED) -> None:
        """No event yet; ``epoch`` tells this process's event ids from any other's."""
        self.epoch = secrets.token_hex(4)
        self.bell = Bell()
        self._lock = threading.Lock()
        self._events: collections.deque[LiveEvent] = collections.deque(maxlen=buffered)
        self._seen: collections.OrderedDict[tuple[str, str], _Move] = collections.OrderedDict()
        self._buffered = buffered
        self._seq = 0
        self._streams: collections.Counter[str] = collections.Counter()
        self._tenants: collections.Counter[str] = collections.Counter()

    # -- publishing ----------------------------------------------------------------------------

    def run_moved(
        self, tenant_id: str, run_id: str, status: str, approval_ids: Iterable[str] = ()
    ) -> None:
        """A run started to wait or ended: a ``run`` event, and one ``approval`` per approval.

        The approvals are those the run now waits for (``approval_ids``, when it waits for one).
        The same move heard again within :data:`ECHO_SECONDS` (the notification of a move this
        process published, which names no approval) is not published twice.
        """
        ids = tuple(approval_ids) if status == _WAITING_APPROVAL else ()
        now = time.monotonic()
        with self._lock:
            key = (tenant_id, run_id)
            before = self._seen.get(key)
            echo = before is not None and before.status == status and now - before.at < ECHO_SECONDS
            known = before.approval_ids if before is not None and echo else ()
            fresh = tuple(approval_id for approval_id in ids if approval_id not in known)
            events = ([] if echo else [(RUN, run_id)]) + [(APPROVAL, i) for i in fresh]
            if not events:
                return
            at = before.at if before is not None and echo else now
            self._seen[key] = _Move(status, known + fresh, at)
            self._seen.move_to_end(key)
            while len(self._seen) > self._buffered:
                self._seen.popitem(last=False)
            for kind, subject_id in events:
                self._seq += 1
                self._events.append(LiveEvent(self._seq, tenant_id, kind, subject_id))
        self.bell.ring(tenant_id)

    # -- reading -------------------------------------------------------------------------------

    def event_id(self, event: LiveEvent) -> str:
        """The SSE id of ``event``: this process's epoch and the event's number."""
        return self.event_id_at(event.seq)

    def event_id_at(self, seq: int) -> str:
        """The SSE id of the position after event number ``seq`` (0: before any)."""
        return f"{self.epoch}-{seq}"

    @property
    def last_seq(self) -> int:
        """The number of the latest event (0 before any)."""
        with self._lock:
            return self._seq

    def resume_from(self, last_event_id: str | None) -> int | None:
        """The number to read after for a client that last saw ``last_event_id``.

        None when the client missed events this process no longer holds (or its id is from
        another process or start): it should reload. Without an id, from now on.
        """
        if not last_event_id:
            return self.last_seq
        epoch, _, number = last_event_id.partition("-")
        if epoch != self.epoch or not number.isdigit():
            return None
        seq = int(number)
        with self._lock:
            oldest = self._events[0].seq if self._events else self._seq + 1
            if seq > self._seq or seq < oldest - 1:
                return None
        return seq

    def after(self, seq: int, tenant_id: str, kinds: frozenset[str]) -> tuple[list[LiveEvent], int]:
        """The tenant's events of ``kinds`` numbered after ``seq``, and the number read up to."""
        with self._lock:  # numbers are consecutive: the events after seq are the last ones
            newer = list(itertools.islice(reversed(self._events), max(self._seq - seq, 0)))
            found = [e for e in reversed(newer) if e.tenant_id == tenant_id and e.kind in kinds]
            return found, self._seq

    # -- streams -------------------------------------------------------------------------------

    @property
    def open_streams(self) -> int:
        """How many streams are open in this process now."""
        with self._lock:
            return sum(self._streams.values())

    def admits(self, session_id: str, tenant_id: str) -> bool:
        """Whether one more stream of the session and tenant stays within every bound now."""
        with self._lock:
            return self._refusal(session_id, tenant_id) is None

    def _refusal(self, session_id: str, tenant_id: str) -> str | None:
        """Which bound one more stream would pass (the lock held), or None."""
        if self._streams[session_id] >= STREAMS_PER_SESSION:
            return "this session has as many live streams open as it may"
        if self._tenants[tenant_id] >= STREAMS_PER_TENANT:
            return "this tenant has as many live streams open as it may"
        if sum(self._streams.values()) >= STREAMS_PER_PROCESS:
            return "this server has as many live streams open as it serves"
        return None

    @contextlib.contextmanager
    def stream(self, session_id: str, tenant_id: str) -> Iterator[None]:
        """Hold one stream of the session for the block; TooManyStreams past a bound."""
        with self._lock:
            refusal = self._refusal(session_id, tenant_id)
            if refusal is not None:
                raise TooManyStreams(refusal)
            self._streams[session_id] += 1
            self._tenants[tenant_id] += 1
        try:
            yield
        finally:
            with self._lock:
                self._streams[session_id] -= 1
                self._tenants[tenant_id] -= 1
                self._streams += collections.Counter()  # drop the zeros
                self._tenants += collections.Counter()


__all__ = [
    "APPROVAL",
    "BUFFERED",
    "RUN",
    "STREAMS_PER_PROCESS",
    "STREAMS_PER_SESSION",
    "STREAMS_PER_TENANT",
    "LiveEvent",
    "LiveFeed",
    "TooManyStreams",
]
