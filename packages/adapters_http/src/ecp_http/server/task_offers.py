"""The task bell's rings for what this process makes claimable (ADR 0071).

While the notification listener is connected, every task that becomes claimable notifies
``ecp_tasks_offered`` (migration ``tasks_0004``) and the listener rings one claim for it, in this
process as in every other: this process then rings nothing of its own, so each task wakes one
claim. Without a listener (the memory store, ``ECP_DISPATCH_NOTIFY=false``, a listener that is
reconnecting) the rings are made here.

It also keeps how long the task locks this process handed out may last (:class:`LockWatch`): the
lock-expiry sweep looks every second only while one of them may still run out (ADR 0099).
"""

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

import attrs

from ecp_http.server.long_poll import Bell


@attrs.define
class LockWatch:
    """Until when a task lock this process handed out (a claim, a heartbeat) may run out."""

    until: float = 0.0
    """A monotonic instant: no lock of this process outlives it."""
    taken: Callable[[], None] = lambda: None
    """Called when a lock is handed out while none was held (the sweep looks again soon)."""
    _guard: threading.Lock = attrs.field(factory=threading.Lock)

    def locked(self, locked_until: datetime) -> None:
        """A lock of this process lasts until ``locked_until``."""
        now = time.monotonic()
        ends = now + max(0.0, (locked_until - datetime.now(UTC)).total_seconds())
        with self._guard:
            idle, self.until = now >= self.until, max(self.until, ends)
        if idle:
            self.taken()

    def may_run_out(self) -> bool:
        """Whether a lock this process handed out may still be held (and so run out)."""
        return time.monotonic() <= self.until


@attrs.frozen
class TaskOffers:
    """The bell long-polling claims wait on, and whether notifications ring it now."""

    bell: Bell = attrs.field(factory=Bell)
    listening: threading.Event = attrs.field(factory=threading.Event)
    """Set while the notification listener is connected (:mod:`ecp_http.background.wakeups`)."""
    locks: LockWatch = attrs.field(factory=LockWatch)
    """The locks this process handed out, for the lock-expiry sweep."""

    def offered(self, tenant_id: str, topic: str | None = None) -> None:
        """A task of ``tenant_id`` became claimable here.

        Wakes one claim that takes ``topic``, or every claim of the tenant when the topic is not
        known.
        """
        if not self.listening.is_set():
            self.bell.ring(tenant_id, topic=topic, one=topic is not None)

    def released(self) -> None:
        """Locks of any tenant ran out and their tasks wait again: wake every claim."""
        if not self.listening.is_set():
            self.bell.ring()


__all__ = ["LockWatch", "TaskOffers"]
