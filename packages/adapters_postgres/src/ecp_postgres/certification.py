"""Certifications on PostgreSQL: the record as JSON beside its key columns, events append-only.

A trigger of the migration refuses UPDATE and DELETE on the events; this module only inserts.
"""

from typing import Any

from psycopg.types.json import Jsonb

from ecp_core.certification.model import Certification, CertificationEvent, CertificationState
from ecp_core.wire import structure, unstructure
from ecp_postgres.rows import Repository


def _record(row: dict[str, Any]) -> Certification:
    return structure(row["record"], Certification)


class PostgresCertifications(Repository):
    """CertificationRepository on PostgreSQL."""

    def add(self, certification: Certification, event: CertificationEvent) -> bool:
        """Store a new certification with its first event; False when its key or id is taken.

        ``ON CONFLICT DO NOTHING`` waits for a racing insert of the same key and then skips.
        """
        c = certification
        cursor = self._conn.execute(
            "INSERT INTO ecp_certifications (certification_id, tenant_id, app_name, app_commit,"
            " image_digest, state, record) VALUES (%s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT DO NOTHING",
            (
                c.certification_id,
                c.tenant_id,
                c.app_name,
                c.app_commit,
                c.image_digest,
                c.state.value,
                Jsonb(unstructure(c)),
            ),
        )
        if cursor.rowcount != 1:
            return False
        self._append(event)
        return True

    def find(
        self, tenant_id: str, app_name: str, app_commit: str, image_digest: str
    ) -> Certification | None:
        """The tenant's certification of that build, or None."""
        row = self._conn.execute(
            "SELECT record FROM ecp_certifications WHERE tenant_id = %s AND app_name = %s"
            " AND app_commit = %s AND image_digest = %s",
            (tenant_id, app_name, app_commit, image_digest),
        ).fetchone()
        return None if row is None else _record(row)

    def get(
        self, tenant_id: str, certification_id: str, *, lock: bool = False
    ) -> Certification | None:
        """One of the tenant's certifications (row-locked with ``lock``)."""
        row = self._conn.execute(
            "SELECT record FROM ecp_certifications WHERE tenant_id = %s"  # noqa: S608 - fixed text
            " AND certification_id = %s" + (" FOR UPDATE" if lock else ""),
            (tenant_id, certification_id),
        ).fetchone()
        return None if row is None else _record(row)

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        after: str | None = None,
        app_name: str | None = None,
        state: CertificationState | None = None,
    ) -> list[Certification]:
        """Certifications by id (code point order), filtered."""
        where, params = ["tenant_id = %s"], [tenant_id]
        if after is not None:
            where.append("certification_id > %s")
            params.append(after)
        if app_name is not None:
            where.append("app_name = %s")
            params.append(app_name)
        if state is not None:
            where.append("state = %s")
            params.append(state.value)
        rows = self._conn.execute(
            f"SELECT record FROM ecp_certifications WHERE {' AND '.join(where)}"  # noqa: S608 - fixed text
            " ORDER BY certification_id LIMIT %s",
            (*params, limit),
        ).fetchall()
        return [_record(row) for row in rows]

    def save(self, certification: Certification, event: CertificationEvent) -> None:
        """Replace a stored certification and append its event."""
        self._conn.execute(
            "UPDATE ecp_certifications SET state = %s, record = %s"
            " WHERE tenant_id = %s AND certification_id = %s",
            (
                certification.state.value,
                Jsonb(unstructure(certification)),
                certification.tenant_id,
                certification.certification_id,
            ),
        )
        self._append(event)

    def events(self, tenant_id: str, certification_id: str) -> list[CertificationEvent]:
        """The certification's events in the order they were appended."""
        rows = self._conn.execute(
            "SELECT event FROM ecp_certification_events"
            " WHERE tenant_id = %s AND certification_id = %s ORDER BY sequence",
            (tenant_id, certification_id),
        ).fetchall()
        return [structure(row["event"], CertificationEvent) for row in rows]

    def _append(self, event: CertificationEvent) -> None:
        """Insert ``event`` after the certification's last (the caller holds its row)."""
        self._conn.execute(
            "INSERT INTO ecp_certification_events (certification_id, sequence, tenant_id, event)"
            " SELECT %s, coalesce(max(sequence), 0) + 1, %s, %s FROM ecp_certification_events"
            " WHERE certification_id = %s",
            (
                event.certification_id,
                event.tenant_id,
                Jsonb(unstructure(event)),
                event.certification_id,
            ),
        )


__all__ = ["PostgresCertifications"]
