"""The Python client of ECP's HTTP API (``pip install ecp-client``, docs/clients.md).

``Client`` (sync) and ``AsyncClient`` (asyncio) over httpx; their models in
:mod:`ecp_client.models`, one error class per problem code in :mod:`ecp_client.problems`,
webhook verification in :mod:`ecp_client.webhooks` and the task-worker loop in
:mod:`ecp_client.worker`. httpx is imported when a client is first used, so that
``import ecp_client`` stays fast.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ecp_client.errors import ClientError, ConnectionFailed, EcpError, FieldError

if TYPE_CHECKING:
    from ecp_client._async_client import AsyncClient
    from ecp_client._core import RetryPolicy
    from ecp_client._sync_client import Client

__all__ = [
    "AsyncClient",
    "Client",
    "ClientError",
    "ConnectionFailed",
    "EcpError",
    "FieldError",
    "RetryPolicy",
]

_LAZY = {
    "AsyncClient": "ecp_client._async_client",
    "Client": "ecp_client._sync_client",
    "RetryPolicy": "ecp_client._core",
}


def __getattr__(name: str) -> Any:  # noqa: ANN401 - a class, imported on first use
    """``Client``, ``AsyncClient`` and ``RetryPolicy``, imported when first asked for."""
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'ecp_client' has no attribute {name!r}")
