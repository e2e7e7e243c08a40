"""Wake-ups by ``LISTEN/NOTIFY`` (ADR 0063): one thread, one connection, reconnecting by itself.

Triggers (migrations ``core_0005``, ``core_0008``, ``tasks_0004`` and ``webhooks_0003``) notify
when a run becomes runnable (:data:`RUNS_RUNNABLE`), when a run starts to wait or ends
(:data:`RUNS_MOVED`, payload ``"<STATUS> <run_id> <tenant_id>"``, read by :func:`moved`), when a
task can be claimed (:data:`TASKS_OFFERED`, its tenant and topic, read by :func:`offered`) and
when a webhook delivery is queued (:data:`WEBHOOKS_DUE`). A :class:`NotificationListener` hands
each notification's payload to the handler of its channel.

Notifications are a shortcut, never the only way work is found: whoever listens keeps polling.
A notification sent while the listener is away is lost, so after every (re)connection the
listener calls ``on_connect``, which should look for work as if woken.
"""

import json
import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import psycopg
from psycopg import sql

log = logging.getLogger("ecp_postgres.notifications")

RUNS_RUNNABLE = "ecp_runs_runnable"
"""A run was inserted pending or went back to running from a wait; the payload is empty."""
RUNS_MOVED = "ecp_runs_moved"
"""A run started to wait or ended; the payload is ``"<STATUS> <run_id> <tenant_id>"`` (ADR 0071)."""
TASKS_OFFERED = "ecp_tasks_offered"
"""A task can be claimed now (offered, or waiting again); the payload is the JSON array
``["<tenant_id>", "<topic>"]`` (ADR 0071)."""
WEBHOOKS_DUE = "ecp_webhooks_due"
"""A pending webhook delivery was queued; the payload is empty."""
CHANNELS = (RUNS_RUNNABLE, RUNS_MOVED, TASKS_OFFERED, WEBHOOKS_DUE)
"""Every channel the triggers notify on."""

LISTEN_SLICE_SECONDS = 0.25
"""How long one wait for notifications lasts: how late the thread notices it should stop."""
RECONNECT_FIRST_SECONDS = 0.2
"""The first wait before connecting again after the connection was lost; it doubles."""
RECONNECT_CAP_SECONDS = 5.0
"""The longest wait between two connection attempts."""


@attrs.frozen
class RunMoved:
    """What a :data:`RUNS_MOVED` notification says: a run's new status, the run, its tenant."""

    status: str
    run_id: str
    tenant_id: str | None
    """None from a trigger older than ``core_0008``, whose payload did not name the tenant."""


def moved(payload: str) -> RunMoved:
    """What a :data:`RUNS_MOVED` payload says; the older shape names no tenant.

    The payload is ``"<STATUS> <run_id> <tenant_id>"`` (before ``core_0008``, ``"<STATUS>
    <run_id>"``). The tenant comes last, so it may hold spaces; statuses and run ids hold none.
    """
    status, _, rest = payload.partition(" ")
    run_id, _, tenant_id = rest.partition(" ")
    return RunMoved(status, run_id, tenant_id or None)


@attrs.frozen
class TaskOffered:
    """What a :data:`TASKS_OFFERED` notification says: the tenant and topic of a claimable task."""

    tenant_id: str
    topic: str


def offered(payload: str) -> TaskOffered | None:
    """What a :data:`TASKS_OFFERED` payload says, or None when it is not the expected shape."""
    try:
        value = json.loads(payload)
    except ValueError:
        return None
    match value:
        case [str() as tenant_id, str() as topic]:
            return TaskOffered(tenant_id=tenant_id, topic=topic)
        case _:
            return None


class NotificationListener:
    """A daemon thread that ``LISTEN``s on the channels of ``handlers`` and calls them.

    Handlers and hooks run on the listener's thread and must return quickly; an exception they
    raise is logged and the listener goes on. ``on_state`` hears True on every connection and
    False when the connection is lost.
    """

    def __init__(
        self,
        url: str,
        handlers: Mapping[str, Callable[[str], object]],
        *,
        on_connect: Callable[[], object] | None = None,
        on_state: Callable[[bool], object] | None = None,
        connect_timeout_seconds: int = 5,
    ) -> None:
        """Prepare, not start: :meth:`start` opens the connection on the listener's thread."""
        self._url = url
        self._handlers = dict(handlers)
        self._on_connect = on_connect
        self._on_state = on_state
        self._connect_timeout = connect_timeout_seconds
        self._stop = threading.Event()
        self._connected = threading.Event()
        self._backend_pid: int | None = None
        self._thread: threading.Thread | None = None

    @property
    def backend_pid(self) -> int | None:
        """The server process id of the listening session while connected, else None."""
        return self._backend_pid if self._connected.is_set() else None

    def wait_connected(self, seconds: float) -> bool:
        """Whether the listener is connected (waiting at most ``seconds`` for it)."""
        return self._connected.wait(seconds)

    def start(self) -> None:
        """Start the thread; it connects, listens, and reconnects until :meth:`stop`."""
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="ecp-notifications", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop listening and join the thread."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def _run(self) -> None:
        failures = 0
        while not self._stop.is_set():
            try:
                with psycopg.connect(
                    self._url, autocommit=True, connect_timeout=self._connect_timeout
                ) as conn:
                    failures = 0
                    self._listen(conn)
            except psycopg.Error as exc:
                failures += 1
                self._lost(exc, first=failures == 1)
                self._stop.wait(
                    min(RECONNECT_CAP_SECONDS, RECONNECT_FIRST_SECONDS * 2.0 ** min(failures, 8))
                )

    def _listen(self, conn: psycopg.Connection[Any]) -> None:
        for channel in self._handlers:
            conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
        self._backend_pid = conn.info.backend_pid
        log.info(
            "notification listener connected",
            extra={"listener_pid": self._backend_pid, "channels": sorted(self._handlers)},
        )
        self._state(connected=True)
        self._call(self._on_connect)
        self._connected.set()  # after the catch-up wake: what is notified from now on is heard
        while not self._stop.is_set():
            for note in conn.notifies(timeout=LISTEN_SLICE_SECONDS):
                handler = self._handlers.get(note.channel)
                if handler is not None:
                    self._call(handler, note.payload)

    def _lost(self, error: psycopg.Error, *, first: bool) -> None:
        was_connected = self._backend_pid is not None
        self._connected.clear()
        if was_connected:
            log.warning(
                "notification listener lost its connection; polling until it reconnects",
                extra={"listener_pid": self._backend_pid, "error": str(error).strip()},
            )
            self._state(connected=False)
        elif first:
            log.warning(
                "notification listener cannot connect; polling until it does",
                extra={"error": str(error).strip()},
            )
        self._backend_pid = None

    def _state(self, *, connected: bool) -> None:
        if self._on_state is not None:
            self._call(self._on_state, connected)

    @staticmethod
    def _call(hook: Callable[..., object] | None, *args: object) -> None:
        if hook is None:
            return
        try:
            hook(*args)
        except Exception:  # a failing handler must not stop the listener
            log.exception("notification handler failed")


__all__ = [
    "CHANNELS",
    "RUNS_MOVED",
    "RUNS_RUNNABLE",
    "TASKS_OFFERED",
    "WEBHOOKS_DUE",
    "NotificationListener",
    "RunMoved",
    "TaskOffered",
    "moved",
    "offered",
]
