"""Long-polling without holding a worker thread: a request that waits awaits, it does not block.

A handler that has nothing to answer yet returns a :class:`Poll` (a task claim with
``wait_seconds``, a run read with ``Prefer: wait=N``). The endpoint then awaits, on the event
loop, either a :class:`Bell` (rung when there may be something now: a task offered or released,
a run that waits or ended, by this process or, through ``LISTEN/NOTIFY``, by another one; ADR
0063) or a short interval that doubles up to a second (the fallback when notifications are off
or one is lost), and tries again in a worker thread each time. A poll may wait for one key (a
run id, a claim's tenant): rings for other keys pass it by (ADR 0071). So a thousand idle callers
cost a thousand coroutines and a few cheap queries a second, never the thread pool that every
other request needs. A bell counts the polls its rings reached and those waiting on it now
(``ecp_long_poll_wakeups_total``, ``ecp_long_polls_waiting``).

A handler may start its :class:`Watch` before it asks for the work it waits for (so no ring is
missed in between), and a ring may carry news, the run the dispatcher of this process just moved:
the poll answers from it on the event loop instead of reading the run again (ADR 0065).
"""

import asyncio
import itertools
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from starlette.concurrency import run_in_threadpool

FIRST_INTERVAL_SECONDS = 0.05
"""The first wait between two tries when the bell does not ring; it doubles with each try."""
LONGEST_INTERVAL_SECONDS = 1.0
"""The longest wait between two tries: how late a poll sees another process's work unnotified."""

ABANDONED_WATCH_SECONDS = 60.0
"""How long after its wait should have ended a watch never closed may still be rung."""
PRUNE_ABOVE = 1024
"""A bell holding this many watches drops the abandoned ones before it adds another."""
_ARRIVALS = itertools.count()


class Watch:
    """One wait on a :class:`Bell`, hearing its rings from the moment it is made (any thread).

    A handler makes it before it asks for the work it will wait for, so a ring that comes before
    the wait begins is not lost; a ring may carry ``news`` (the run the dispatcher just moved),
    which the waiter can answer from without reading it again.
    """

    def __init__(
        self,
        bell: "Bell",
        key: str | None,
        expires: float,
        topics: frozenset[str] | None = None,
    ) -> None:
        """Registered on ``bell`` at once; :meth:`close` when done with it.

        ``expires`` (:func:`time.monotonic`) is when the bell may drop it unclosed: a poll whose
        request went away before it began waiting never closes its watch. ``topics``: what the
        waiter can take (a claim's topics), None for anything.
        """
        self.key = key
        self.topics = topics
        self.expires = expires
        self.arrival = next(_ARRIVALS)
        """Its place among the watches made in this process: the lower, the longer it waits."""
        self._bell = bell
        self._rung = False
        self._news: Any = None
        self._waiter: tuple[asyncio.AbstractEventLoop, asyncio.Event] | None = None

    def take_news(self) -> Any:  # noqa: ANN401 - whatever the ringer sent
        """The latest news a ring carried since the last call, or None."""
        with self._bell.lock:
            news, self._news = self._news, None
        return news

    async def wait(self, seconds: float) -> None:
        """Return when the bell rings for this watch (or rang since the last wait), or in ``seconds``."""
        event = asyncio.Event()
        with self._bell.lock:
            if self._rung:
                self._rung = False
                return
            self._waiter = (asyncio.get_running_loop(), event)
        try:
            await asyncio.wait_for(event.wait(), timeout=seconds)
        except TimeoutError:
            pass
        finally:
            with self._bell.lock:
                self._waiter = None
                self._rung = False

    def close(self) -> None:
        """Stop hearing the bell."""
        self._bell.forget(self)

    def hears(self, key: str | None, topic: str | None) -> bool:
        """Whether a ring for ``key`` and ``topic`` (None: any) concerns this watch."""
        return (key is None or self.key is None or self.key == key) and (
            topic is None or self.topics is None or topic in self.topics
        )

    def free_rank(self) -> tuple[int, int]:
        """The order a ring for one picks watches in (the bell's lock held).

        One waiting and not rung yet first, then one between two tries, then one rung already;
        among equals, the one there longest.
        """
        if self._rung:
            return (2, self.arrival)
        return (0 if self._waiter is not None else 1, self.arrival)

    def rung(self, news: Any) -> tuple[asyncio.AbstractEventLoop, asyncio.Event] | None:  # noqa: ANN401
        """Note a ring (the bell's lock held); the waiter to wake, if one waits."""
        self._rung = True
        if news is not None:
            self._news = news
        return self._waiter


class Bell:
    """Wakes the polls waiting in this process; rung from any thread."""

    def __init__(self) -> None:
        """No one waits yet."""
        self.lock = threading.Lock()
        self._watches: set[Watch] = set()
        self.woken = 0
        """How many watches its rings reached so far: each is a poll that tries again."""

    def watch(
        self,
        key: str | None = None,
        seconds: float = 0.0,
        topics: frozenset[str] | None = None,
    ) -> Watch:
        """A :class:`Watch` hearing rings from now on: all of them, or with ``key`` those for it.

        ``seconds``: how long it is meant to wait; it is dropped unclosed a minute after that.
        ``topics``: a ring naming a topic reaches it only when it is one of them.
        """
        now = time.monotonic()
        watch = Watch(self, key, now + seconds + ABANDONED_WATCH_SECONDS, topics)
        with self.lock:
            if len(self._watches) >= PRUNE_ABOVE:
                self._watches = {w for w in self._watches if w.expires > now}
            self._watches.add(watch)
        return watch

    @property
    def watching(self) -> int:
        """How many watches hear it now: the polls waiting on it (and any not yet dropped)."""
        with self.lock:
            return len(self._watches)

    def forget(self, watch: Watch) -> None:
        """Stop ringing ``watch``."""
        with self.lock:
            self._watches.discard(watch)

    def ring(
        self,
        key: str | None = None,
        news: Any = None,  # noqa: ANN401
        *,
        topic: str | None = None,
        one: bool = False,
    ) -> None:
        """Wake the polls waiting now: all of them, or with ``key`` those for it or for any key.

        ``news`` (with a key) goes to the watches of that key. ``topic`` narrows the ring to the
        watches that take it. ``one``: wake a single one of those (one task offered wakes one
        claim, ADR 0071), the one waiting longest that no ring has reached yet.
        """
        with self.lock:
            hearing = [w for w in self._watches if w.hears(key, topic)]
            if one and hearing:
                hearing = [min(hearing, key=Watch.free_rank)]
            waiters = [w.rung(news if key is not None else None) for w in hearing]
            self.woken += len(waiters)
        for waiter in waiters:
            if waiter is None:
                continue
            loop, event = waiter
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop closed; its poll is gone
                continue

    async def wait(self, seconds: float, key: str | None = None) -> None:
        """Return when the bell rings (for ``key``, when given) or after ``seconds``."""
        watch = self.watch(key, seconds)
        try:
            await watch.wait(seconds)
        finally:
            watch.close()


def _as_is(answer: Any) -> Any:  # noqa: ANN401
    return answer


@attrs.frozen(kw_only=True)
class Poll:
    """An answer that is not there yet: try ``again`` until it gives one, or ``deadline`` passes.

    ``again`` and ``at_deadline`` run in a worker thread: ``again`` returns the answer, or None
    while there is none; ``at_deadline`` gives the answer when time is up. ``then`` shapes
    either (a status, headers). ``deadline`` is on :func:`time.monotonic`'s clock. ``key``
    narrows the rings that wake it.
    """

    again: Callable[[], Any]
    at_deadline: Callable[[], Any]
    deadline: float
    bell: Bell
    then: Callable[[Any], Any] = _as_is
    key: str | None = None
    """What the poll waits for (a run id, a tenant): the bell's rings for other keys do not wake it."""
    topics: frozenset[str] | None = None
    """What the poll can take (a claim's topics): a ring naming another topic does not wake it."""
    watch: Watch | None = None
    """The wait, made before the work was asked for (else made when the poll starts)."""
    heard: Callable[[Any], Any] | None = None
    """Runs on the event loop: the answer from a ring's news, or None to try ``again``."""

    async def settle(self, gone: Callable[[], Awaitable[bool]]) -> Any:  # noqa: ANN401
        """The answer: the first that ``again`` gives, else ``at_deadline``'s, through ``then``.

        Stops trying once ``gone()`` says the caller hung up, so that nothing is claimed for a
        worker that is no longer there.
        """
        watch = self.watch or self.bell.watch(
            self.key, self.deadline - time.monotonic(), self.topics
        )
        try:
            interval = FIRST_INTERVAL_SECONDS
            while (left := self.deadline - time.monotonic()) > 0:
                await watch.wait(min(interval, left))
                if await gone():
                    break
                news = watch.take_news()
                answer = None if news is None or self.heard is None else self.heard(news)
                if answer is None:
                    answer = await run_in_threadpool(self.again)
                if answer is not None:
                    return self.then(answer)
                interval = min(interval * 2, LONGEST_INTERVAL_SECONDS)
        finally:
            watch.close()
        return self.then(await run_in_threadpool(self.at_deadline))


__all__ = ["Bell", "Poll", "Watch"]
