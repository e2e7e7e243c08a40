"""The shape of a project API key: ``ecp_<key id>_<secret>``.

The key id is 8 characters of lowercase base32 (40 random bits) and names the key in lists and
logs; ``ecp_<key id>`` is its fingerprint. The secret is 32 random bytes (256 bits) in unpadded
base64url, 43 characters. Only the SHA-256 of the whole key is stored
(docs/decisions/0010-project-api-keys.md says why a fast hash is enough here).
"""

import base64
import hashlib
import hmac
import re
from collections.abc import Callable

PREFIX = "ecp_"
KEY_ID_BYTES = 5
SECRET_BYTES = 32
HASH_PREFIX = "sha256:"

RandomBytes = Callable[[int], bytes]
"""Where randomness comes from: ``secrets.token_bytes`` unless a test injects another source."""

_KEY = re.compile(r"ecp_([a-z2-7]{8})_([A-Za-z0-9_-]{43})")
_KEY_ID = re.compile(r"[a-z2-7]{8}")


def new_key_id(random_bytes: RandomBytes) -> str:
    """Eight characters of lowercase base32 from 40 random bits."""
    return base64.b32encode(_exactly(random_bytes, KEY_ID_BYTES)).decode("ascii").lower()


def new_key(key_id: str, random_bytes: RandomBytes) -> str:
    """A key for ``key_id`` with a fresh 256-bit secret."""
    secret = base64.urlsafe_b64encode(_exactly(random_bytes, SECRET_BYTES)).rstrip(b"=")
    return f"{PREFIX}{key_id}_{secret.decode('ascii')}"


def fingerprint(key_id: str) -> str:
    """The non-secret prefix that identifies a key: ``ecp_<key id>``."""
    return f"{PREFIX}{key_id}"


def is_key_id(text: str) -> bool:
    """Whether ``text`` is shaped like a key id (anything else names no key)."""
    return _KEY_ID.fullmatch(text) is not None


def key_id_of(presented: str) -> str | None:
    """The key id inside a well-formed key, or None when ``presented`` is not shaped like one."""
    match = _KEY.fullmatch(presented)
    return None if match is None else match.group(1)


def hash_key(key: str) -> str:
    """``sha256:<hex>`` of the key's text: what is stored and looked up."""
    return HASH_PREFIX + hashlib.sha256(key.encode("utf-8")).hexdigest()


def same_hash(stored: str, computed: str) -> bool:
    """Compare two key hashes in constant time."""
    return hmac.compare_digest(stored.encode("ascii"), computed.encode("ascii"))


def _exactly(random_bytes: RandomBytes, count: int) -> bytes:
    data = random_bytes(count)
    if len(data) != count:
        msg = f"the random source returned {len(data)} bytes instead of {count}"
        raise ValueError(msg)
    return data
