"""``AsyncSender``: sends calls over ``httpx.AsyncClient``, retrying, and follows pages.

Written for asyncio; ``make clients`` writes the sync twin, ``_sync_sender.py``, by taking
``async`` and ``await`` out. What to send and how to read the answer is
:mod:`ecp_client._core`'s, shared by both.
"""

import asyncio
from collections.abc import AsyncIterator
from typing import TypeVar

import httpx

from ecp_client._core import Answer, Call, Page, Retrying, RetryPolicy, outcome
from ecp_client.errors import ConnectionFailed

T = TypeVar("T")
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Failures before the request left: trying again cannot repeat anything."""


class AsyncSender:
    """Sends calls: one idempotency key for every try, retries under the policy."""

    def __init__(self, http: httpx.AsyncClient, policy: RetryPolicy) -> None:
        """Send through ``http`` under ``policy``."""
        self._http = http
        self._policy = policy

    async def send(self, call: Call[T]) -> T:
        """What ``call`` answers, after the retries the policy allows; or its error."""
        key, retrying = call.key(), Retrying(self._policy)
        request = self._http.build_request(
            call.method,
            call.path,
            params=dict(call.params),
            content=call.content(),
            headers=call.headers(key),
            timeout=self._http.timeout if call.timeout is None else call.timeout,
        )
        while True:
            try:
                response = await self._http.send(request)
            except httpx.TransportError as exc:
                wait = retrying.after_failure(call, sent=not isinstance(exc, NOT_SENT))
                if wait is None:
                    raise ConnectionFailed(f"{call.method} {call.path}: {exc!r}") from exc
            else:
                answer = Answer(
                    status=response.status_code,
                    headers=response.headers,
                    content=response.content,
                    links=response.links,
                )
                wait = retrying.after_answer(answer)
                if wait is None:
                    return outcome(call, answer)
            await asyncio.sleep(wait)

    async def every(self, call: Call[Page[T]]) -> AsyncIterator[T]:
        """Every item of a listing, following its cursors page after page."""
        while True:
            page = await self.send(call)
            for item in page.items:
                yield item
            if not page.next_cursor:
                return
            call = call.with_params(cursor=page.next_cursor)
