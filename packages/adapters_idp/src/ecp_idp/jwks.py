"""The provider's signing keys (a JWKS), fetched once, cached, and refetched on an unknown key id.

A refetch happens at most once per ``min_refetch_seconds``, so tokens naming made-up key ids
cannot make the service hammer the provider.
"""

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import jwt

from ecp_core.errors import IdentityProviderUnavailable, LoginRejected

Fetch = Callable[[], Mapping[str, Any]]
"""Reads the JWKS document (``{"keys": [...]}``) from the provider."""


def _keys(document: Mapping[str, Any]) -> dict[str, jwt.PyJWK]:
    """The document's RSA signing keys by key id; keys without an id or of other kinds skipped."""
    found: dict[str, jwt.PyJWK] = {}
    keys = document.get("keys")
    if not isinstance(keys, list):
        raise IdentityProviderUnavailable("the identity provider's JWKS has no list of keys")
    for entry in keys:
        if not isinstance(entry, dict) or entry.get("kty") != "RSA" or not entry.get("kid"):
            continue
        try:
            found[str(entry["kid"])] = jwt.PyJWK(entry, algorithm="RS256")
        except jwt.PyJWTError:
            continue
    return found


class JwksCache:
    """Signing keys by key id, read from the provider when a key id is not known yet."""

    def __init__(
        self,
        fetch: Fetch,
        *,
        min_refetch_seconds: float = 30.0,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        """Read keys with ``fetch``; refetch for an unknown key id at most that often."""
        self._fetch = fetch
        self._min_refetch = min_refetch_seconds
        self._monotonic = monotonic
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._lock = threading.Lock()

    def key(self, kid: str) -> jwt.PyJWK:
        """The key ``kid`` names; LoginRejected when the provider does not publish it."""
        with self._lock:
            if kid not in self._keys and self._may_refetch():
                self._keys = _keys(self._fetch())
                self._fetched_at = self._monotonic()
            found = self._keys.get(kid)
        if found is None:
            raise LoginRejected(
                "the access token is signed with a key the provider does not publish"
            )
        return found

    def _may_refetch(self) -> bool:
        return self._fetched_at is None or self._monotonic() - self._fetched_at >= self._min_refetch


__all__ = ["JwksCache"]
