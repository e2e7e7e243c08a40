"""``Sender``: sends calls over ``httpx.Client``, retrying, and follows pages.

Generated from ``_async_sender.py`` by ``make clients``: do not edit by hand (a test fails when stale).
"""

import time
from collections.abc import Iterator
from typing import TypeVar

import httpx

from ecp_client._core import Answer, Call, Page, Retrying, RetryPolicy, outcome
from ecp_client.errors import ConnectionFailed

T = TypeVar("T")
NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout)
"""Failures before the request left: trying again cannot repeat anything."""


class Sender:
    """Sends calls: one idempotency key for every try, retries under the policy."""

    def __init__(self, http: httpx.Client, policy: RetryPolicy) -> None:
        """Send through ``http`` under ``policy``."""
        self._http = http
        self._policy = policy

    def send(self, call: Call[T]) -> T:
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
                response = self._http.send(request)
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
            time.sleep(wait)

    def every(self, call: Call[Page[T]]) -> Iterator[T]:
        """Every item of a listing, following its cursors page after page."""
        while True:
            page = self.send(call)
            yield from page.items
            if not page.next_cursor:
                return
            call = call.with_params(cursor=page.next_cursor)
