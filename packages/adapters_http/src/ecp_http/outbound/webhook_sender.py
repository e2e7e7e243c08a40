"""The HttpSender for webhooks: the outbound guard, the pinned address, a timeout, a capped read."""

from collections.abc import Mapping

import httpx

from ecp_core.ports.system import HttpAnswer
from ecp_http import version
from ecp_http.outbound import (
    AddressGuard,
    Refusal,
    Resolver,
    outbound_client,
    pin,
    pinned_stream,
    resolve_host,
)

MAX_RESPONSE_BYTES = 64 * 1024


def user_agent() -> str:
    """``ecp-webhooks/<version of ecp-http>``: the User-Agent of every delivery."""
    return f"ecp-webhooks/{version()}"


def webhook_guard(*, allow_private: bool) -> AddressGuard:
    """The guard for webhook targets: ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS unlocks loopback and private."""
    return AddressGuard(
        allow_loopback=allow_private,
        allow_private=allow_private,
        unlock_hint="ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS allows it",
    )


def target_problem(
    url: str, *, allow_private: bool, resolver: Resolver = resolve_host
) -> str | None:
    """Why ``url`` may not receive webhooks (every address its host resolves to is checked)."""
    found = pin(url, webhook_guard(allow_private=allow_private), resolver=resolver)
    return found.reason if isinstance(found, Refusal) else None


def _retry_after(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None  # an HTTP date: the backoff applies instead
    return seconds if seconds >= 0 else None


class HttpxSender:
    """POSTs webhook bodies; network trouble becomes an answer with an error, never an exception."""

    def __init__(
        self, *, timeout_seconds: float, allow_private: bool, resolver: Resolver = resolve_host
    ) -> None:
        """One pooled client for every delivery; ``resolver`` answers for target host names."""
        self._guard = webhook_guard(allow_private=allow_private)
        self._resolver = resolver
        self._client = outbound_client(timeout_seconds)
        self._user_agent = user_agent()

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HttpAnswer:
        """Send one delivery to the address that was checked; read at most 64 KiB of the answer."""
        target = pin(url, self._guard, resolver=self._resolver)
        if isinstance(target, Refusal):
            return HttpAnswer(error=target.reason)
        try:
            with pinned_stream(
                self._client,
                "POST",
                target,
                content=body,
                headers={**headers, "User-Agent": self._user_agent},
            ) as response:
                read = 0
                for chunk in response.iter_bytes():
                    read += len(chunk)
                    if read >= MAX_RESPONSE_BYTES:
                        break
                return HttpAnswer(
                    status_code=response.status_code,
                    retry_after=_retry_after(response.headers.get("retry-after")),
                )
        except httpx.HTTPError as exc:
            return HttpAnswer(error=f"{type(exc).__name__}: {exc}")

    def close(self) -> None:
        """Close the connection pool."""
        self._client.close()
