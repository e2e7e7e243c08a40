"""What the transparency log stores: leaves waiting to be appended, and the log's signed heads."""

from datetime import datetime

import attrs

DIGEST_PREFIX = "sha256:"


def leaf_entry(record_digest: str) -> bytes:
    """The log entry of an audit record: the 32 bytes of its ``sha256:`` record digest."""
    if not record_digest.startswith(DIGEST_PREFIX):
        raise ValueError("a record digest is sha256:<64 hex digits>")
    entry = bytes.fromhex(record_digest.removeprefix(DIGEST_PREFIX))
    if len(entry) != 32:  # noqa: PLR2004 - a SHA-256 digest
        raise ValueError("a record digest is sha256:<64 hex digits>")
    return entry


@attrs.frozen
class PendingLeaf:
    """An audit record committed but not yet in its tenant's log."""

    audit_id: str
    record_digest: str

    @property
    def entry(self) -> bytes:
        """The bytes the log holds for this record (:func:`leaf_entry`)."""
        return leaf_entry(self.record_digest)


@attrs.frozen
class LogHead:
    """A signed checkpoint of one tenant's log: its size, root and the note that signs them."""

    tenant_id: str
    size: int
    root: bytes
    note: str
    created_at: datetime


@attrs.frozen
class LoggedLeaf:
    """Where an audit record sits in its tenant's log."""

    audit_id: str
    leaf_index: int
    record_digest: str


__all__ = ["DIGEST_PREFIX", "LogHead", "LoggedLeaf", "PendingLeaf", "leaf_entry"]
