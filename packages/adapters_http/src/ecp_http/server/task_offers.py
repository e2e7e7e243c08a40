"""The task bell's rings for what this process makes claimable (ADR 0071).

While the notification listener is connected, every task that becomes claimable notifies
``ecp_tasks_offered`` (migration ``tasks_0004``) and the listener rings one claim for it, in this
process as in every other: this process then rings nothing of its own, so each task wakes one
claim. Without a listener (the memory store, ``ECP_DISPATCH_NOTIFY=false``, a listener that is
reconnecting) the rings are made here.
"""

import threading

import attrs

from ecp_http.server.long_poll import Bell


@attrs.frozen
class TaskOffers:
    """The bell long-polling claims wait on, and whether notifications ring it now."""

    bell: Bell = attrs.field(factory=Bell)
    listening: threading.Event = attrs.field(factory=threading.Event)
    """Set while the notification listener is connected (:mod:`ecp_http.background.wakeups`)."""

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


__all__ = ["TaskOffers"]
