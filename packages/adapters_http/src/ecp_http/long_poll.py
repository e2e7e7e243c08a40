"""Long-polling without holding a worker thread: a request that waits awaits, it does not block.

A handler that has nothing to answer yet returns a :class:`Poll` (a task claim with
``wait_seconds``, a run read with ``Prefer: wait=N``). The endpoint then awaits, on the event
loop, either a :class:`Bell` (rung by this process when there may be something now: a task
offered or released, a run that waits or ended) or a short interval that doubles up to a second
(the fallback that sees work done by other server processes), and tries again in a worker thread
each time. So a thousand idle callers cost a thousand coroutines and a few cheap queries a
second, never the thread pool that every other request needs.
"""

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable
from typing import Any

import attrs
from starlette.concurrency import run_in_threadpool

FIRST_INTERVAL_SECONDS = 0.05
"""The first wait between two tries when the bell does not ring; it doubles with each try."""
LONGEST_INTERVAL_SECONDS = 1.0
"""The longest wait between two tries: how late a poll sees work another process made."""


class Bell:
    """Wakes the polls waiting in this process; rung from any thread."""

    def __init__(self) -> None:
        """No one waits yet."""
        self._lock = threading.Lock()
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Event]] = set()

    def ring(self) -> None:
        """Wake every poll waiting now."""
        with self._lock:
            waiting = list(self._waiting)
        for loop, event in waiting:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # that loop closed; its poll is gone
                continue

    async def wait(self, seconds: float) -> None:
        """Return when the bell rings or after ``seconds``, whichever is first."""
        entry = (asyncio.get_running_loop(), asyncio.Event())
        with self._lock:
            self._waiting.add(entry)
        try:
            await asyncio.wait_for(entry[1].wait(), timeout=seconds)
        except TimeoutError:
            pass
        finally:
            with self._lock:
                self._waiting.discard(entry)


def _as_is(answer: Any) -> Any:  # noqa: ANN401
    return answer


@attrs.frozen(kw_only=True)
class Poll:
    """An answer that is not there yet: try ``again`` until it gives one, or ``deadline`` passes.

    ``again`` and ``at_deadline`` run in a worker thread: ``again`` returns the answer, or None
    while there is none; ``at_deadline`` gives the answer when time is up. ``then`` shapes
    either (a status, headers). ``deadline`` is on :func:`time.monotonic`'s clock.
    """

    again: Callable[[], Any]
    at_deadline: Callable[[], Any]
    deadline: float
    bell: Bell
    then: Callable[[Any], Any] = _as_is

    async def settle(self, gone: Callable[[], Awaitable[bool]]) -> Any:  # noqa: ANN401
        """The answer: the first that ``again`` gives, else ``at_deadline``'s, through ``then``.

        Stops trying once ``gone()`` says the caller hung up, so that nothing is claimed for a
        worker that is no longer there.
        """
        interval = FIRST_INTERVAL_SECONDS
        while (left := self.deadline - time.monotonic()) > 0:
            await self.bell.wait(min(interval, left))
            if await gone():
                break
            answer = await run_in_threadpool(self.again)
            if answer is not None:
                return self.then(answer)
            interval = min(interval * 2, LONGEST_INTERVAL_SECONDS)
        return self.then(await run_in_threadpool(self.at_deadline))


__all__ = ["Bell", "Poll"]
