"""``Client``: the API over ``httpx.Client``, with retries and page iteration.

Generated from ``_async_client.py`` by ``make clients``: do not edit by hand (a test fails when stale).
"""

from collections.abc import Mapping
from types import TracebackType
from typing import Self

import httpx

from ecp_client import _sync_resources as resources
from ecp_client._core import RetryPolicy, credentials
from ecp_client._sync_sender import Sender


class Client:
    """The ECP API at ``base_url``, as a project API key or a bearer token (JWT).

    ``timeout`` (seconds) bounds each try; ``retry`` says how 503, 429 and broken connections
    are tried again. Use it as a context manager, or call ``close``.
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
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """A client of ``base_url`` (``transport`` replaces the network, for tests)."""
        self._http = httpx.Client(
            base_url=base_url.rstrip("/"),
            headers={**credentials(api_key, token), **(headers or {})},
            timeout=timeout,
            transport=transport,
        )
        sender = Sender(self._http, retry or RetryPolicy())
        self.graphs = resources.Graphs(sender)
        self.deployments = resources.Deployments(sender)
        self.runs = resources.Runs(sender)
        self.approvals = resources.Approvals(sender)
        self.tasks = resources.Tasks(sender)
        self.webhooks = resources.Subscriptions(sender)
        self.evidence = resources.Evidence(sender)
        self.decisions = resources.Decisions(sender)

    def close(self) -> None:
        """Close the connections."""
        self._http.close()

    def __enter__(self) -> Self:
        """The client, closed when the block ends."""
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Close the connections."""
        self.close()
