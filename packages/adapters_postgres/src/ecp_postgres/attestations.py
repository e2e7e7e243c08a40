"""Attestations on PostgreSQL: numbered per correlation, first write wins on the primary key."""

from datetime import datetime
from typing import Any

from ecp_core.attestations.model import Attestation
from ecp_postgres.rows import Repository, Table

ATTESTATIONS = Table("ecp_attestations", Attestation)

_LATEST = "tenant_id = %s AND correlation_id = %s ORDER BY generation DESC LIMIT 1"


class PostgresAttestations(Repository):
    """AttestationRepository on PostgreSQL."""

    def _latest(self, tenant_id: str, correlation_id: str) -> tuple[int, Attestation] | None:
        row = self._conn.execute(
            f"SELECT generation, {ATTESTATIONS.column_list} FROM ecp_attestations"  # noqa: S608 - fixed text
            f" WHERE {_LATEST}",
            (tenant_id, correlation_id),
        ).fetchone()
        return None if row is None else (int(row["generation"]), ATTESTATIONS.load(row))

    def get(self, tenant_id: str, correlation_id: str) -> Attestation | None:
        """The latest attestation of the correlation (in force or expired), or None."""
        latest = self._latest(tenant_id, correlation_id)
        return None if latest is None else latest[1]

    def insert_first(self, attestation: Attestation) -> tuple[Attestation, bool]:
        """Store ``attestation`` unless another is in force at its ``issued_at``; first wins.

        One ``INSERT ... ON CONFLICT DO NOTHING`` at the next generation: a racing insert of the
        same generation waits for the other transaction and then does nothing, and the read that
        follows (a fresh snapshot under READ COMMITTED) finds the winner. A winner that expired
        meanwhile makes room for the next generation, so the loop ends.
        """
        params: dict[str, Any] = ATTESTATIONS.params(attestation)
        while True:
            latest = self._latest(attestation.tenant_id, attestation.correlation_id)
            if latest is not None and latest[1].in_force(attestation.issued_at):
                return latest[1], False
            params["generation"] = 0 if latest is None else latest[0] + 1
            cursor = self._conn.execute(
                f"INSERT INTO ecp_attestations (generation, {ATTESTATIONS.column_list})"  # noqa: S608 - fixed text
                f" VALUES (%(generation)s, {ATTESTATIONS.placeholders}) ON CONFLICT DO NOTHING",
                params,
            )
            if cursor.rowcount == 1:
                return attestation, True

    def current_for_deployment(
        self, tenant_id: str, deployment_ref: str, now: datetime
    ) -> Attestation | None:
        """The latest (by ``issued_at``) attestation of the deployment in force at ``now``."""
        return self._one(
            ATTESTATIONS,
            "tenant_id = %s AND deployment_ref = %s AND expires_at > %s"
            " ORDER BY issued_at DESC, correlation_id DESC LIMIT 1",
            (tenant_id, deployment_ref, now),
        )

    def history(self, tenant_id: str, correlation_id: str) -> list[Attestation]:
        """Every attestation stored for the correlation, oldest first."""
        return self._all(
            ATTESTATIONS,
            "WHERE tenant_id = %s AND correlation_id = %s ORDER BY generation",
            (tenant_id, correlation_id),
        )


__all__ = ["PostgresAttestations"]
