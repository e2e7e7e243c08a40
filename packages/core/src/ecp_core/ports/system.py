"""System ports: the clock, identifiers, the audit signer and outbound HTTP."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

if TYPE_CHECKING:
    from collections.abc import Mapping
    from datetime import datetime

    from ecp_core.signing import PublicSigningKey


class Clock(Protocol):
    """The current time, aware and in UTC."""

    def now(self) -> datetime:
        """Return the current instant."""
        ...


class IdFactory(Protocol):
    """Opaque, unique, time-ordered identifiers."""

    def new_id(self) -> str:
        """Return a fresh identifier."""
        ...


class Signer(Protocol):
    """Signs audit record digests."""

    key_id: str

    def sign_text(self, text: str) -> str:
        """Return the base64 signature over the ASCII ``text``."""
        ...

    def published(self) -> PublicSigningKey:
        """The public key that verifies this signer's signatures."""
        ...


@attrs.frozen(kw_only=True)
class HttpAnswer:
    """What a receiver answered: a status, a ``Retry-After`` in seconds, or a transport error."""

    status_code: int | None = None
    retry_after: float | None = None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        """Whether the receiver accepted the request (any 2xx)."""
        return self.status_code is not None and 200 <= self.status_code < 300  # noqa: PLR2004


class HttpSender(Protocol):
    """POSTs one body; never raises for network trouble, it answers with an error."""

    def post(self, url: str, body: bytes, headers: Mapping[str, str]) -> HttpAnswer:
        """Send ``body`` to ``url``."""
        ...


__all__ = ["Clock", "HttpAnswer", "HttpSender", "IdFactory", "Signer"]
