"""Verifying an audit export with nothing but the export (and, better, pinned keys).

In order, the first failure named: the export's form; both checkpoints' signatures (and every
pinned witness's cosignature on the later one); the consistency of the earlier checkpoint with
the later; every leaf of the span accounted for by a record that recomputes to it; the span's
leaves giving the later checkpoint's root; each run's records linking in the span; and the
records' signatures.
"""

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.audit.verify import content_problem
from ecp_core.errors import EcpError
from ecp_core.runs.audit.bundle_check import trusted_checkpoint
from ecp_core.runs.audit.export import EXPORT_FORMAT, AuditExport
from ecp_core.signing import KeyRing
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import (
    EMPTY_ROOT,
    leaf_hash,
    root_from_range,
    verify_consistency,
)
from ecp_core.transparency.model import leaf_entry
from ecp_core.transparency.notes import NoteError, NoteKey
from ecp_core.wire import structure


@attrs.frozen
class ExportVerdict:
    """What verifying an export found: each check, and the first failure with its leaf."""

    checkpoint_verified: bool = False
    log_key_pinned: bool = False
    witnesses: int = 0
    consistent: bool = False
    complete: bool = False
    included: bool = False
    chain_verified: bool = False
    signatures_verified: bool | None = None
    leaf_count: int = 0
    record_count: int = 0
    run_count: int = 0
    tree_size: int = 0
    failed_leaf: int | None = None
    failed_audit_id: str | None = None
    error: str | None = None

    @property
    def verified(self) -> bool:
        """Every check passed."""
        return self.error is None


class _Failure(Exception):
    def __init__(self, error: str, leaf: int | None = None, audit_id: str | None = None) -> None:
        super().__init__(error)
        self.error, self.leaf, self.audit_id = error, leaf, audit_id


def _hashes(encoded: Sequence[str], what: str) -> list[bytes]:
    try:
        return [base64.b64decode(h, validate=True) for h in encoded]
    except (binascii.Error, ValueError) as exc:
        raise _Failure(f"the {what} is not base64 hashes") from exc


def _accounted(export: AuditExport) -> list[NodeAuditRecord]:
    """Each leaf's record, in index order, once each leaf is shown to be that record's."""
    records: list[NodeAuditRecord] = []
    for offset, leaf in enumerate(export.leaves):
        index = export.first_leaf + offset
        if leaf.leaf_index != index:
            raise _Failure(f"leaf {index} is missing from the span", index)
        record = leaf.record
        if record is None:
            error = f"leaf {index} has no record: the database no longer holds it"
            raise _Failure(error, index, leaf.audit_id)
        if record.audit_id != leaf.audit_id or record.tenant_id != export.tenant_id:
            raise _Failure(f"leaf {index} is not the record it carries", index, record.audit_id)
        problem = content_problem(record)
        if problem is not None:
            raise _Failure(f"leaf {index}: {problem}", index, record.audit_id)
        records.append(record)
    return records


def _linked(records: Sequence[NodeAuditRecord], first: int) -> None:
    """Each run's records follow one another in the span: consecutive attempts, linked."""
    last: dict[str, NodeAuditRecord] = {}
    for offset, record in enumerate(records):
        before = last.get(record.run_id)
        if before is not None and (
            record.attempt != before.attempt + 1
            or record.previous_record_digest != before.record_digest
        ):
            error = f"run {record.run_id}: attempt {record.attempt} does not follow its predecessor"
            raise _Failure(error, first + offset, record.audit_id)
        last[record.run_id] = record


def _signed(records: Sequence[NodeAuditRecord], keys: KeyRing) -> bool | None:
    """Whether every signed record's signature holds (None when none is signed)."""
    signed = [r for r in records if r.signature is not None]
    if not signed:
        return None
    return all(
        keys.verify_text(r.signing_key_id, r.record_digest, r.signature or "") for r in signed
    )


def _verify(
    export: AuditExport,
    keys: Sequence[NoteKey],
    witnesses: Sequence[NoteKey],
    found: dict[str, Any],
) -> None:
    """Run the checks in order, noting in ``found`` each that passed; _Failure at the first."""
    try:
        end = trusted_checkpoint(export.checkpoint, keys, witnesses)
        start = (
            Checkpoint("", 0, EMPTY_ROOT)
            if export.start_checkpoint is None
            else trusted_checkpoint(export.start_checkpoint, keys)
        )
    except NoteError as exc:
        raise _Failure(f"checkpoint: {exc}") from exc
    found.update(checkpoint_verified=True, tree_size=end.size)
    if export.start_checkpoint is not None and start.origin != end.origin:
        raise _Failure("the two checkpoints are of different logs")
    if (start.size, end.size) != (export.first_leaf, export.tree_size):
        raise _Failure("the span's sizes are not its checkpoints'")
    proof = _hashes(export.consistency, "consistency proof")
    if not verify_consistency(start.size, end.size, proof, start.root, end.root):
        raise _Failure("the start checkpoint is not a prefix of the checkpoint's tree (a fork)")
    found["consistent"] = True
    if len(export.leaves) != end.size - start.size:
        carried = len(export.leaves)
        raise _Failure(f"the span has {end.size - start.size} leaves; the export has {carried}")
    records = _accounted(export)
    found["complete"] = True
    if records:
        hashes = [leaf_hash(leaf_entry(r.record_digest)) for r in records]
        proof = _hashes(export.range_proof, "range proof")
        if root_from_range(start.size, end.size, hashes, proof) != end.root:
            raise _Failure("the span's leaves do not give the checkpoint's root")
    found["included"] = True
    _linked(records, start.size)
    signatures = _signed(records, KeyRing.of(export.signing_keys))
    found.update(chain_verified=True, signatures_verified=signatures)
    if signatures is False:
        raise _Failure("a record's signature does not verify")
    ours = (r.run_id for r in records if r.deployment_ref == export.deployment_ref)
    if tuple(dict.fromkeys(ours)) != export.runs:
        raise _Failure("the export's list of runs is not the runs its leaves hold")


def verify_export(
    document: Mapping[str, Any],
    log_keys: Sequence[NoteKey] = (),
    witness_keys: Sequence[NoteKey] = (),
) -> ExportVerdict:
    """Verify an export; ``log_keys`` pins the log's keys, ``witness_keys`` the cosigners."""
    if document.get("format") != EXPORT_FORMAT:
        return ExportVerdict(error=f"not an audit export (format {EXPORT_FORMAT} expected)")
    try:
        export = structure(dict(document), AuditExport, what="the export")
    except EcpError as exc:
        return ExportVerdict(error=f"the export is malformed: {exc}")
    pinned = bool(log_keys)
    keys = list(log_keys) or [NoteKey.from_vkey(k.vkey) for k in export.log_keys]
    own = [r.record for r in export.leaves if r.record is not None]
    verdict = ExportVerdict(
        log_key_pinned=pinned,
        witnesses=len(witness_keys),
        leaf_count=len(export.leaves),
        record_count=sum(r.deployment_ref == export.deployment_ref for r in own),
        run_count=len(export.runs),
    )
    found: dict[str, Any] = {}
    try:
        _verify(export, keys, witness_keys, found)
    except _Failure as failure:
        return attrs.evolve(
            verdict,
            **found,
            failed_leaf=failure.leaf,
            failed_audit_id=failure.audit_id,
            error=failure.error,
        )
    return attrs.evolve(verdict, **found)


__all__ = ["ExportVerdict", "verify_export"]
