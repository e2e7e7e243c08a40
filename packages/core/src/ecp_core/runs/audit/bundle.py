"""A run's audit bundle: its records, the keys, a checkpoint and every record's inclusion proof.

One JSON document an auditor verifies with no server and no database (``ecp audit
verify-bundle``): the chain and its signatures as usual, then the checkpoint's signature and each
record's leaf in the checkpoint's tree. Records not yet in the log are integrated first (the
integrator's own pass for the tenant), so a bundle always proves every record it carries.
"""

import base64
from collections.abc import Callable

import attrs

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.constraints import checked
from ecp_core.errors import Conflict
from ecp_core.signing import PublicSigningKey
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.keys import key_view
from ecp_core.transparency.notes import parse_note
from ecp_core.transparency.service import TransparencyLog

BUNDLE_FORMAT = "ecp-audit-bundle/1"
_PASSES = 20
"""Integrator passes a bundle waits for at most (each appends up to a batch of the tenant's)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class LogKey:
    """A public key of the log: note key name, key hash (hex key id), Ed25519 key, vkey."""

    name: str
    """The note key name: the log's origin, ``<origin>/<tenant id>``."""
    key_hash: str
    """The key id signature lines start with (8 hex digits)."""
    public_key: str
    """The Ed25519 public key, base64."""
    vkey: str
    """The verifier key, ``<name>+<key hash>+<base64 type and key>``, as C2SP writes it."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class RecordInclusion:
    """A record's leaf index and the hashes (base64, leaf end first) proving it in the tree."""

    audit_id: str
    """The record proved."""
    leaf_index: int
    """Its leaf's position in the log (0 first)."""
    hashes: tuple[str, ...]
    """The audit path, base64, from the leaf's sibling up."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditBundle:
    """Everything needed to verify one run's records offline."""

    format: str = BUNDLE_FORMAT
    """What this document is: ``ecp-audit-bundle/1``."""
    tenant_id: str
    run_id: str
    deployment_ref: str
    run_status: str
    """The run's public status when the bundle was made."""
    records: tuple[NodeAuditRecord, ...]
    """The run's records in chain order."""
    signing_keys: tuple[PublicSigningKey, ...]
    """The keys that verify the records' signatures."""
    log_keys: tuple[LogKey, ...]
    """The keys that verify the checkpoint (its note signature)."""
    checkpoint: str
    """The signed checkpoint (C2SP tlog-checkpoint note) every proof is against."""
    tree_size: int
    """The checkpoint's tree size."""
    inclusion: tuple[RecordInclusion, ...]
    """One proof per record, in the records' order."""


@attrs.frozen
class AuditBundles:
    """Makes runs' bundles from the audit trail and the tenant's log."""

    records: Callable[[str, str], tuple[str, str, tuple[NodeAuditRecord, ...]]]
    """``(tenant, run)`` → the run's deployment, public status and records (chain order)."""
    signing_keys: Callable[[], tuple[PublicSigningKey, ...]]
    log: TransparencyLog
    integrator: LogIntegrator

    def bundle(self, tenant_id: str, run_id: str) -> AuditBundle:
        """The run's bundle; Conflict when the log stays behind its records (a huge backlog)."""
        deployment_ref, status, records = self.records(tenant_id, run_id)
        audit_ids = [record.audit_id for record in records]
        for _ in range(_PASSES):
            checkpoint = self.log.checkpoint(tenant_id)
            size, proofs = self.log.inclusions(tenant_id, audit_ids)
            signed_size = Checkpoint.parse(parse_note(checkpoint).text).size
            if len(proofs) == len(audit_ids) and signed_size == size:
                break
            self.integrator.integrate_tenant(tenant_id, wait=True)
        else:
            raise Conflict("the transparency log is still integrating this run's records")
        return AuditBundle(
            tenant_id=tenant_id,
            run_id=run_id,
            deployment_ref=deployment_ref,
            run_status=status,
            records=records,
            signing_keys=self.signing_keys(),
            log_keys=tuple(LogKey(**key_view(k)) for k in self.log.public_keys(tenant_id)),
            checkpoint=checkpoint,
            tree_size=size,
            inclusion=tuple(
                RecordInclusion(
                    audit_id=p.audit_id,
                    leaf_index=p.leaf_index,
                    hashes=tuple(base64.b64encode(h).decode("ascii") for h in p.hashes),
                )
                for p in proofs
            ),
        )


__all__ = ["BUNDLE_FORMAT", "AuditBundle", "AuditBundles", "LogKey", "RecordInclusion"]
