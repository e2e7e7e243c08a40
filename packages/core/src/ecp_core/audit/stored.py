"""Verification from stored canonical texts (ADR 0061): a record proven by hashing what was kept.

A store that writes each personal-data field as the canonical JSON text its commitment hashes
(PostgreSQL's ``json`` columns keep text as written) hands verification a
:class:`~ecp_core.audit.record.StoredRecord`. :func:`proven` hashes those texts as they are and
the record's hashed form once. A match proves, by SHA-256's preimage resistance, that each text
is the committed canonical encoding and the envelope the sealed one; since canonical JSON read
back and written again gives the same text, the full recomputation (parse, model, re-encode)
accepts the record too, and is skipped. No match proves nothing: texts written before this rule,
values whose canonical text the store does not keep (floats JCS writes differently), erased and
version 1 records, a changed row. Verification then loads the record and recomputes in full, so
any change of any field is still found.
"""

import hashlib
from collections.abc import Callable
from typing import Any

from ecp_core.audit.chain import hashed_form
from ecp_core.audit.record import (
    DIGEST_VERSION,
    PII_FIELDS,
    SALTED_DIGEST_VERSION,
    NodeAuditRecord,
    StoredRecord,
)
from ecp_core.audit.salted import commitment_prefix, parse_salt
from ecp_core.canonical import by_orjson, canonical_json
from ecp_core.errors import NotCanonicalizable

_NULL = b"null"


def _text_commitments(
    texts: tuple[str | None, ...], salt: bytes | None, commitments: dict[str, Any]
) -> bool:
    """Whether every stored text (a null column is the JSON ``null``) hashes to its commitment."""
    if len(texts) != len(PII_FIELDS) or len(commitments) != len(PII_FIELDS):
        return False
    for field, text in zip(PII_FIELDS, texts, strict=True):
        data = _NULL if text is None else text.encode()
        if salt is not None:
            data = commitment_prefix(field, salt) + data
        if "sha256:" + hashlib.sha256(data).hexdigest() != commitments.get(field):
            return False
    return True


def proven(entry: StoredRecord) -> bool:
    """Whether ``entry``'s stored texts and envelope hash to its commitments and digest.

    True only for a version 2 or 3 record that is not erased, whose nine texts hash to its nine
    commitments (salted for version 3) and whose hashed form hashes to ``record_digest``. False
    says only that the full recomputation must decide.
    """
    commitments = entry.pii_commitments
    if entry.erased or type(commitments) is not dict:
        return False
    version = entry.envelope.get("digest_version")
    if version == DIGEST_VERSION and entry.pii_salt is None:
        salt = None
    elif version == SALTED_DIGEST_VERSION:
        salt = parse_salt(entry.pii_salt)
        if salt is None:
            return False
    else:
        return False
    if not _text_commitments(entry.texts, salt, commitments):
        return False
    try:
        hashed = canonical_json({**entry.envelope, "pii_commitments": commitments})
    except NotCanonicalizable:
        return False
    return "sha256:" + hashlib.sha256(hashed).hexdigest() == entry.record_digest


def kept_texts(record: NodeAuditRecord) -> tuple[str | None, ...] | None:
    """The canonical JSON text of each personal-data value of ``record`` (None for null).

    None when a value does not take the first canonical tier (:func:`~ecp_core.canonical.by_orjson`):
    a store then keeps no texts for the record and verification recomputes it in full.
    """
    texts: list[str | None] = []
    for field in PII_FIELDS:
        value = getattr(record, field)
        if value is None:
            texts.append(None)
            continue
        data = by_orjson(value)
        if data is None:
            return None
        texts.append(data.decode())
    return tuple(texts)


def stored_record(
    record: NodeAuditRecord,
    texts: tuple[str | None, ...],
    load: Callable[[], NodeAuditRecord] | None = None,
) -> StoredRecord:
    """``record`` as a store keeping ``texts`` hands it to verification.

    ``load`` builds the full record when the texts do not prove it (``record`` itself by default).
    """
    envelope = hashed_form(record)
    envelope.pop("pii_commitments", None)
    commitments = record.pii_commitments
    return StoredRecord(
        audit_id=record.audit_id,
        attempt=record.attempt,
        previous_record_digest=record.previous_record_digest,
        record_digest=record.record_digest,
        signature=record.signature,
        signing_key_id=record.signing_key_id,
        envelope=envelope,
        pii_commitments=dict(commitments) if type(commitments) is dict else commitments,
        pii_salt=record.pii_salt,
        erased=record.erased,
        texts=texts,
        load=(lambda: record) if load is None else load,
    )
