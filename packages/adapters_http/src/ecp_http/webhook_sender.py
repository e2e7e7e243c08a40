"""The HttpSender for webhooks: httpx, no redirects, a timeout, a capped read, and target checks."""

import ipaddress
import socket
import urllib.parse
from collections.abc import Mapping

import httpx

from ecp_core.webhooks.service import HttpAnswer

MAX_RESPONSE_BYTES = 64 * 1024
METADATA_ADDRESSES = frozenset(
    {ipaddress.ip_address("169.254.169.254"), ipaddress.ip_address("fd00:ec2::254")}
)


def refused_address(
    address: ipaddress.IPv4Address | ipaddress.IPv6Address, *, allow_private: bool
) -> str | None:
    """Why a target address is refused, or None. Link-local and metadata are always refused."""
    if address in METADATA_ADDRESSES or address.is_link_local:
        return "link-local and metadata addresses are never webhook targets"
    if not allow_private and (
        address.is_private
        or address.is_loopback
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    ):
        return "private addresses need ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS"
    return None


def target_problem(url: str, *, allow_private: bool) -> str | None:
    """Why ``url`` may not receive webhooks (every address its host resolves to is checked)."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "the target must be an http(s) URL with a host"
        port = parts.port or (443 if parts.scheme == "https" else 80)
        infos = socket.getaddrinfo(parts.hostname, port, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError, ValueError) as exc:
        return f"the target host does not resolve: {exc}"
    for info in infos:
        problem = refused_address(ipaddress.ip_address(info[4][0]), allow_private=allow_private)
        if problem is not None:
            return problem
    return None


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

    def __init__(self, *, timeout_seconds: float, allow_private: bool) -> None:
        """One pooled client for every delivery."""
        self._allow_private = allow_private
        self._client = httpx.Client(timeout=timeout_seconds, follow_redirects=False)

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HttpAnswer:
        """Send one delivery; read at most 64 KiB of the answer."""
        problem = target_problem(url, allow_private=self._allow_private)
        if problem is not None:
            return HttpAnswer(error=problem)
        try:
            with self._client.stream("POST", url, content=body, headers=dict(headers)) as response:
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
