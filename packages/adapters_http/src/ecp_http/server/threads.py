"""The threads that run handlers: each request hops to one and back (ADR 0064).

Handlers are plain functions over a blocking database driver, so every request runs its handler
on a worker thread. The hop goes through one executor of the application's own, with the
request's context (its id for the logs, the tracing span) copied into the thread: about a
third cheaper per request than Starlette's ``run_in_threadpool``, which passes through anyio's
capacity limiter and its worker bookkeeping. At most :data:`HANDLER_THREADS` handlers run at
once, as under Starlette's default limit. A request cancelled while its handler runs lets the
thread finish (its transaction commits or rolls back as it would) and drops the answer.
"""

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

HANDLER_THREADS = 40
"""At most this many handlers run at once (Starlette's default thread limit)."""


class HandlerThreads:
    """The application's handler threads, started as they are needed."""

    def __init__(self, size: int = HANDLER_THREADS) -> None:
        """Up to ``size`` threads."""
        self._executor = ThreadPoolExecutor(size, thread_name_prefix="ecp-handler")

    async def run(self, call: Callable[..., T], *args: Any) -> T:  # noqa: ANN401
        """``call(*args)`` on a handler thread, in a copy of the caller's context."""
        loop = asyncio.get_running_loop()
        in_context = functools.partial(contextvars.copy_context().run, call, *args)
        return await loop.run_in_executor(self._executor, in_context)

    def close(self) -> None:
        """Let the threads end once idle (a handler still running finishes first)."""
        self._executor.shutdown(wait=False)
