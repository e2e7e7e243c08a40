"""Salted commitments of digest_version 3 (ADR 0047, docs/audit-format.md).

A version 3 commitment to one personal-data field is ``sha256:`` + hex(SHA-256(B)) with

    B = b"ecp.audit.pii.v3" 0x00 | field name (ASCII) | 0x00 | salt (32 bytes) | JCS(value)

The domain tag and the field name keep two fields holding one value apart; the record's random
salt, stored apart from the record and destroyed by erasure, keeps an erased low-entropy value
(a yes/no, a small number, an e-mail address) from being guessed back from its commitment.
"""

import re
import secrets
from collections.abc import Mapping
from typing import Any

from ecp_core.audit.record import PII_FIELDS
from ecp_core.canonical import canonical_json, sha256_digest

SALT_BYTES = 32
"""Length of a record's salt: 256 random bits."""
COMMITMENT_TAG = b"ecp.audit.pii.v3"
"""Domain tag that opens every version 3 commitment's hashed bytes."""
_SALT_HEX = re.compile(r"[0-9a-f]{64}")


def new_salt() -> bytes:
    """A fresh record salt from the operating system's CSPRNG (:mod:`secrets`)."""
    return secrets.token_bytes(SALT_BYTES)


def salt_hex(salt: bytes) -> str:
    """The salt as the record carries it: 64 lowercase hex digits."""
    if len(salt) != SALT_BYTES:
        msg = f"a record salt has {SALT_BYTES} bytes, not {len(salt)}"
        raise ValueError(msg)
    return salt.hex()


def parse_salt(text: str | None) -> bytes | None:
    """The salt bytes of a record's ``pii_salt``; None unless it is 64 lowercase hex digits."""
    if text is None or _SALT_HEX.fullmatch(text) is None:
        return None
    return bytes.fromhex(text)


def commitment_prefix(field: str, salt: bytes) -> bytes:
    """What a version 3 commitment hashes before the canonical JSON of the value."""
    return b"".join((COMMITMENT_TAG, b"\0", field.encode("ascii"), b"\0", salt))


def commitment_bytes(field: str, value: Any, salt: bytes) -> bytes:  # noqa: ANN401 - any JSON value
    """The exact bytes a version 3 commitment hashes (see the module docstring)."""
    return commitment_prefix(field, salt) + canonical_json(value)


def salted_commitment(field: str, value: Any, salt: bytes) -> str:  # noqa: ANN401 - any JSON value
    """The version 3 commitment to ``value`` in ``field`` under the record's ``salt``."""
    return sha256_digest(commitment_bytes(field, value, salt))


def salted_commitments(values: Mapping[str, Any], salt: bytes) -> dict[str, str]:
    """Version 3 commitments to every personal-data field (an absent one commits to null)."""
    return {field: salted_commitment(field, values.get(field), salt) for field in PII_FIELDS}
