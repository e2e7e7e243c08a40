"""The keyed request digest and the sealed inputs, under rotatable keys (ADR 0038).

A request's digest is ``hmac-sha256:<hex>`` of its RFC 8785 JSON under the current key; the
record keeps the key's id. Retired keys still compute digests, so an exact retry of a request
digested under a key since rotated is recognised (looked up under every known key). The same
keys seal the request's raw text while the backtest waits or runs (XSalsa20-Poly1305 under a
subkey derived by HMAC), so the transient copy is unreadable without the key.
"""

import hashlib
import hmac
from collections.abc import Mapping

import attrs
import nacl.exceptions
import nacl.secret

from ecp_core.backtests.model import BacktestRequest, SealedInputs
from ecp_core.canonical import canonical_json
from ecp_core.wire import digest_form

MIN_KEY_LENGTH = 32
"""The fewest characters of a digest key."""

_SEAL_LABEL = b"ecp backtest inputs/1"


def key_id_of(key: str) -> str:
    """A default id for ``key``: a short fingerprint that does not reveal it."""
    return "k-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]


def _check(key_id: str, key: str) -> None:
    if not key_id:
        msg = "a digest key needs an id"
        raise ValueError(msg)
    if len(key) < MIN_KEY_LENGTH:
        msg = f"digest key {key_id} must be at least {MIN_KEY_LENGTH} characters"
        raise ValueError(msg)


@attrs.frozen(kw_only=True)
class DigestKeys:
    """The current digest key (by id) and the retired ones still recognised."""

    key_id: str
    key: str = attrs.field(repr=False)
    retired: Mapping[str, str] = attrs.field(factory=dict, repr=False)

    def __attrs_post_init__(self) -> None:
        """Refuse short keys and a retired key reusing the current id."""
        _check(self.key_id, self.key)
        for key_id, key in self.retired.items():
            _check(key_id, key)
        if self.key_id in self.retired:
            msg = f"digest key id {self.key_id} is both current and retired"
            raise ValueError(msg)

    def _all(self) -> dict[str, str]:
        return {self.key_id: self.key, **self.retired}

    def digest(self, request: BacktestRequest) -> str:
        """The request's digest under the current key."""
        return _digest(self.key, request)

    def known_digests(self, request: BacktestRequest) -> list[str]:
        """The request's digest under every known key, the current one first."""
        return [_digest(key, request) for key in self._all().values()]

    def seal(self, request: BacktestRequest) -> SealedInputs:
        """The request, sealed under the current key."""
        box = nacl.secret.SecretBox(_subkey(self.key))
        return SealedInputs(key_id=self.key_id, box=bytes(box.encrypt(_text(request))))

    def open(self, sealed: SealedInputs) -> bytes | None:
        """The sealed request's JSON; None when its key is unknown now or the box is damaged."""
        key = self._all().get(sealed.key_id)
        if key is None:
            return None
        try:
            return bytes(nacl.secret.SecretBox(_subkey(key)).decrypt(sealed.box))
        except nacl.exceptions.CryptoError:
            return None


def _text(request: BacktestRequest) -> bytes:
    return canonical_json(digest_form(request))


def _digest(key: str, request: BacktestRequest) -> str:
    mac = hmac.new(key.encode("utf-8"), _text(request), hashlib.sha256)
    return "hmac-sha256:" + mac.hexdigest()


def _subkey(key: str) -> bytes:
    return hmac.new(key.encode("utf-8"), _SEAL_LABEL, hashlib.sha256).digest()


__all__ = ["MIN_KEY_LENGTH", "DigestKeys", "key_id_of"]
