"""An audit export: every record of a time window, proved complete against the tenant's log.

A bundle proves one run's records are in the log; it cannot show that a run is missing. An export
takes the span of the log between the checkpoint signed before the window and the one signed
after it, and carries every leaf of that span with the record it stands for, whichever
deployment's. The range proof ties the leaves to the later checkpoint, the consistency proof
ties the earlier one to it, so a verifier sees each leaf accounted for: a leaf whose record the
database no longer holds (a deleted run, a cut tail) or holds changed (a rewrite) is named.
"""

import base64
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.audit.record import NodeAuditRecord
from ecp_core.constraints import AwareUtc, checked
from ecp_core.errors import Conflict, FieldError, ValidationFailed
from ecp_core.runs.audit.bundle import LogKey
from ecp_core.signing import PublicSigningKey
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.keys import key_view
from ecp_core.transparency.service import LogSpan, TransparencyLog

EXPORT_FORMAT = "ecp-audit-export/1"
_PASSES = 20
"""Integrator passes an export waits for at most, as a bundle does."""


def _b64(hashes: Sequence[bytes]) -> tuple[str, ...]:
    return tuple(base64.b64encode(h).decode("ascii") for h in hashes)


@attrs.frozen(kw_only=True, field_transformer=checked)
class ExportedLeaf:
    """One leaf of the span and the record it stands for."""

    leaf_index: int
    """Its position in the log (0 first)."""
    audit_id: str | None
    """The record the log says this leaf is (null when no row of the log names it)."""
    record: NodeAuditRecord | None
    """The record as the database holds it now (null when it holds none)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditExport:
    """A window of a tenant's audit trail, every leaf of its log span with its record."""

    format: str = EXPORT_FORMAT
    """What this document is: ``ecp-audit-export/1``."""
    tenant_id: str
    deployment_ref: str
    """The deployment the export is for; other deployments' records prove their leaves."""
    since: Annotated[datetime, AwareUtc()]
    """The window's start, as asked."""
    until: Annotated[datetime, AwareUtc()]
    """The window's end (excluded), as asked."""
    start_checkpoint: str | None
    """The newest checkpoint signed at or before ``since`` (null: the span starts the log)."""
    checkpoint: str
    """The oldest checkpoint signed at or after ``until``, else the newest."""
    checkpoint_signed_at: Annotated[datetime, AwareUtc()]
    """When the server signed ``checkpoint``: a window not over yet is covered up to here."""
    first_leaf: int
    """The span's first leaf: the start checkpoint's size (0 without one)."""
    tree_size: int
    """The span's end: the checkpoint's size."""
    consistency: tuple[str, ...]
    """Base64 hashes proving the start checkpoint's tree a prefix of the checkpoint's."""
    range_proof: tuple[str, ...]
    """Base64 hashes that, with the span's leaves, give the checkpoint's root."""
    leaves: tuple[ExportedLeaf, ...]
    """Every leaf from ``first_leaf`` to ``tree_size``, in index order."""
    runs: tuple[str, ...]
    """The deployment's runs with a record in the span, in the order they first appear."""
    signing_keys: tuple[PublicSigningKey, ...]
    """The keys that verify the records' signatures."""
    log_keys: tuple[LogKey, ...]
    """The keys that verify the checkpoints (their note signatures)."""


@attrs.frozen
class AuditExports:
    """Makes audit exports from the tenant's log and the records the database holds."""

    records: Callable[[str, str, Sequence[str]], dict[str, NodeAuditRecord]]
    """``(tenant, deployment, audit ids)`` → the records found (NotFound: no such deployment)."""
    signing_keys: Callable[[], tuple[PublicSigningKey, ...]]
    log: TransparencyLog
    integrator: LogIntegrator

    def export(
        self, tenant_id: str, deployment_ref: str, since: datetime, until: datetime
    ) -> AuditExport:
        """The export of ``[since, until)`` for the deployment's auditors."""
        if until <= since:
            raise ValidationFailed(
                "until must come after since", errors=[FieldError(("until",), "after since")]
            )
        self.records(tenant_id, deployment_ref, [])  # NotFound before any work
        span = self._span(tenant_id, since, until)
        named = [leaf.audit_id for leaf in span.leaves if leaf is not None] if span else []
        found = self.records(tenant_id, deployment_ref, named)
        leaves = () if span is None else self._leaves(span, found)
        runs = dict.fromkeys(
            leaf.record.run_id
            for leaf in leaves
            if leaf.record is not None and leaf.record.deployment_ref == deployment_ref
        )
        checkpoint = self.log.checkpoint(tenant_id) if span is None else span.end.note
        return AuditExport(
            tenant_id=tenant_id,
            deployment_ref=deployment_ref,
            since=since,
            until=until,
            start_checkpoint=None if span is None or span.start is None else span.start.note,
            checkpoint=checkpoint,
            checkpoint_signed_at=span.end.created_at if span else self.integrator.clock.now(),
            first_leaf=span.first if span else 0,
            tree_size=span.end.size if span else 0,
            consistency=_b64(span.consistency) if span else (),
            range_proof=_b64(span.range_hashes) if span else (),
            leaves=leaves,
            runs=tuple(runs),
            signing_keys=self.signing_keys(),
            log_keys=tuple(LogKey(**key_view(k)) for k in self.log.public_keys(tenant_id)),
        )

    def _span(self, tenant_id: str, since: datetime, until: datetime) -> LogSpan | None:
        """The span, once the log holds every record committed before now."""
        for _ in range(_PASSES):
            if not self.integrator.integrate_tenant(tenant_id, wait=True).appended:
                return self.log.span(tenant_id, since, until)
        raise Conflict("the transparency log is still integrating this tenant's records")

    @staticmethod
    def _leaves(span: LogSpan, found: dict[str, NodeAuditRecord]) -> tuple[ExportedLeaf, ...]:
        return tuple(
            ExportedLeaf(
                leaf_index=span.first + offset,
                audit_id=None if leaf is None else leaf.audit_id,
                record=None if leaf is None else found.get(leaf.audit_id),
            )
            for offset, leaf in enumerate(span.leaves)
        )


__all__ = ["EXPORT_FORMAT", "AuditExport", "AuditExports", "ExportedLeaf"]
