"""``AsyncClient``: the API over ``httpx.AsyncClient``, with retries and page iteration.

Written for asyncio; ``make clients`` writes the sync twin, ``_sync_client.py`` (``Client``), by
taking ``async`` and ``await`` out (the generator's ``unasync``), so the two never drift. What
to send and how to read the answer is :mod:`ecp_client._core`'s, shared by both.
"""

from collections.abc import Mapping
from types import TracebackType
from typing import Self

import httpx

from ecp_client import _async_resources as resources
from ecp_client._async_sender import AsyncSender
from ecp_client._core import RetryPolicy, credentials


class AsyncClient:
    """The ECP API at ``base_url``, as a project API key or a bearer token (JWT).

    ``timeout`` (seconds) bounds each try; ``retry`` says how 503, 429 and broken connections
    are tried again. Use it as a context manager, or call ``aclose``.
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        token: str | None = None,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        headers: Mapping[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        """A client of ``base_url`` (``transport`` replaces the network, for tests)."""
        self._http = httpx.AsyncClient(
            base_url=base_url.rstrip("/"),
            headers={**credentials(api_key, token), **(headers or {})},
            timeout=timeout,
            transport=transport,
        )
        sender = AsyncSender(self._http, retry or RetryPolicy())
        self.graphs = resources.Graphs(sender)
        self.deployments = resources.Deployments(sender)
        self.runs = resources.Runs(sender)
        self.approvals = resources.Approvals(sender)
        self.tasks = resources.Tasks(sender)
        self.webhooks = resources.Subscriptions(sender)
        self.evidence = resources.Evidence(sender)
        self.decisions = resources.Decisions(sender)

    async def aclose(self) -> None:
        """Close the connections."""
        await self._http.aclose()

    async def __aenter__(self) -> Self:
        """The client, closed when the block ends."""
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the connections."""
        await self.aclose()
