"""Verifying a run's audit bundle with nothing but the bundle (and, better, pinned keys).

In order, the first failure named: the bundle's form; the checkpoint's signature by a log key
(the keys pinned by the caller, else the bundle's own, which says less); the records' chain and
their signatures, as the audit verification does; each record's inclusion proof against the
checkpoint's root; and, for a finished run, that its last record ends it (a chain whose tail was
cut ends elsewhere).
"""

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.audit.verify import verify_chain
from ecp_core.errors import EcpError
from ecp_core.runs.audit.bundle import BUNDLE_FORMAT, AuditBundle
from ecp_core.signing import KeyRing
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.merkle import leaf_hash, verify_inclusion
from ecp_core.transparency.model import leaf_entry
from ecp_core.transparency.notes import NoteError, NoteKey, parse_note
from ecp_core.types import AttemptStatus
from ecp_core.wire import structure

FINISHED = frozenset({"completed", "failed", "terminated_by_policy", "canceled"})
"""Public run statuses after which no record follows."""
ENDING = frozenset(
    {AttemptStatus.FAILED, AttemptStatus.REJECTED, AttemptStatus.DENIED, AttemptStatus.CANCELED}
)
"""Attempt statuses that end a run wherever they happen."""


@attrs.frozen
class BundleVerdict:
    """What verifying a bundle found: each check, and the first failure with its record."""

    checkpoint_verified: bool = False
    log_key_pinned: bool = False
    chain_verified: bool = False
    signatures_verified: bool | None = None
    included: bool = False
    complete: bool = False
    record_count: int = 0
    tree_size: int = 0
    failed_audit_id: str | None = None
    error: str | None = None

    @property
    def verified(self) -> bool:
        """Every check passed (signatures too, when records are signed)."""
        return self.error is None


def _ends_run(record: NodeAuditRecord) -> bool:
    """Whether ``record`` is a run's last: an end node's success, or an attempt that ends a run."""
    if record.status in ENDING:
        return True
    metadata = record.execution_metadata if isinstance(record.execution_metadata, dict) else None
    kind = None if metadata is None else metadata.get("node_kind")
    erased = record.erased and metadata is None
    return record.status is AttemptStatus.SUCCEEDED and (kind == "end" or erased)


def trusted_checkpoint(
    text: str, log_keys: Sequence[NoteKey], witness_keys: Sequence[NoteKey] = ()
) -> Checkpoint:
    """The checkpoint ``text`` signs, when a log key signed it and every witness cosigned it.

    NoteError names what is wrong: a malformed note, no trusted log signature, a witness's
    cosignature missing (a witness refuses a fork, so a forked checkpoint lacks it).
    """
    note = parse_note(text)
    head = Checkpoint.parse(note.text)
    if not any(note.verified_by(key) is not None for key in log_keys):
        raise NoteError("the checkpoint is not signed by a trusted log key")
    for witness in witness_keys:
        if note.verified_by(witness) is None:
            raise NoteError(f"the checkpoint is not cosigned by the witness {witness.name}")
    return head


def verify_bundle(
    document: Mapping[str, Any],
    log_keys: Sequence[NoteKey] = (),
    witness_keys: Sequence[NoteKey] = (),
) -> BundleVerdict:
    """Verify a bundle; ``log_keys`` pins the keys a checkpoint must be signed by.

    Each of ``witness_keys`` must have cosigned the checkpoint.
    """
    if document.get("format") != BUNDLE_FORMAT:
        return BundleVerdict(error=f"not an audit bundle (format {BUNDLE_FORMAT} expected)")
    try:
        bundle = structure(dict(document), AuditBundle, what="the bundle")
    except EcpError as exc:
        return BundleVerdict(error=f"the bundle is malformed: {exc}")
    pinned = bool(log_keys)
    keys = list(log_keys) or [NoteKey.from_vkey(k.vkey) for k in bundle.log_keys]
    try:
        head = trusted_checkpoint(bundle.checkpoint, keys, witness_keys)
    except NoteError as exc:
        return BundleVerdict(log_key_pinned=pinned, error=f"checkpoint: {exc}")
    verdict = BundleVerdict(
        checkpoint_verified=True,
        log_key_pinned=pinned,
        record_count=len(bundle.records),
        tree_size=head.size,
    )
    if bundle.tree_size != head.size:
        error = f"the bundle says {bundle.tree_size} leaves, its checkpoint {head.size}"
        return attrs.evolve(verdict, error=error)
    chain = verify_chain(bundle.records, KeyRing.of(bundle.signing_keys), scope="bundle")
    verdict = attrs.evolve(
        verdict, chain_verified=chain.verified, signatures_verified=chain.signature_verified
    )
    if not chain.verified or chain.signature_verified is False:
        return attrs.evolve(verdict, failed_audit_id=chain.failed_audit_id, error=chain.error)
    missing = _first_not_included(bundle, head)
    if missing is not None:
        return attrs.evolve(verdict, failed_audit_id=missing, error="not in the checkpoint's tree")
    verdict = attrs.evolve(verdict, included=True)
    last = bundle.records[-1] if bundle.records else None
    if bundle.run_status in FINISHED and (last is None or not _ends_run(last)):
        failed = None if last is None else last.audit_id
        error = f"the run is {bundle.run_status} but its records stop short of its end"
        return attrs.evolve(verdict, failed_audit_id=failed, error=error)
    return attrs.evolve(verdict, complete=True)


def _first_not_included(bundle: AuditBundle, head: Checkpoint) -> str | None:
    """The first record whose inclusion proof is missing or does not verify, or None."""
    proofs = {proof.audit_id: proof for proof in bundle.inclusion}
    for record in bundle.records:
        proof = proofs.get(record.audit_id)
        if proof is None:
            return record.audit_id
        try:
            path = [base64.b64decode(h, validate=True) for h in proof.hashes]
            leaf = leaf_hash(leaf_entry(record.record_digest))
        except (binascii.Error, ValueError):
            return record.audit_id
        if not verify_inclusion(leaf, proof.leaf_index, head.size, path, head.root):
            return record.audit_id
    return None


__all__ = ["BundleVerdict", "trusted_checkpoint", "verify_bundle"]
