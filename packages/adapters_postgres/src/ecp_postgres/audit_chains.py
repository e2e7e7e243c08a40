"""What audit verification reads on PostgreSQL: chains and heads in one snapshot, no locks (ADR 0061).

Verification used to read a run's head ``FOR UPDATE`` (the appender's read) before its records, so
that no append could land between the two readings. One statement reads both instead: under READ
COMMITTED a statement sees one snapshot, so an append committed meanwhile (head and record move in
one transaction) is wholly in or wholly out, and a verification never waits for, nor holds up, a
run that is writing its chain.

Stored canonical texts: ``append`` writes each personal-data ``json`` column as the canonical JSON
text its commitment hashes when the value takes the first canonical tier (:func:`stored_text`),
and ``json`` keeps text as written. Verification reads those columns as text (``stdout`` and
``stderr``, plain text columns, through ``to_json``), with the hashed envelope as the digest
hashes it, into :class:`~ecp_core.audit.record.StoredRecord` entries that the core proves by
hashing the texts directly (:func:`ecp_core.audit.stored.proven`); only an entry they do not
prove is parsed into a record (:func:`_load`).
"""

import functools
import json
from collections.abc import Sequence
from typing import Any

import attrs
import psycopg
from psycopg.rows import tuple_row

from ecp_core.audit.chain import ENVELOPE_FIELDS
from ecp_core.audit.record import PII_FIELDS, ChainHead, NodeAuditRecord, RunChain, StoredRecord
from ecp_core.canonical import JsonValue, by_orjson
from ecp_postgres.rows import Table, load_json

_NINE_COMMITMENTS = (
    "CASE WHEN jsonb_typeof(r.pii_commitments) = 'object' THEN r.pii_commitments"
    f" - ARRAY[{', '.join(repr(field) for field in PII_FIELDS)}] = '{{}}'::jsonb END"
)
"""Whether the stored commitments are an object of the nine fields and nothing else."""
_CREATED_AT = """to_char(r.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')"""
"""``created_at`` as the digest hashes it (``format_timestamp``), written by the server."""


def stored_text(value: JsonValue) -> bytes | str:
    """The text ``append`` writes to a personal-data ``json`` column.

    The canonical JSON its commitment hashes when ``value`` takes the first tier (exact JSON
    types, floats JCS writes as Python does, so the value reads back unchanged); otherwise
    ``json.dumps``, as before stored texts, and verification recomputes such a value in full.
    """
    data = by_orjson(value)
    return json.dumps(value) if data is None else data


def read_chain_run_ids(
    conn: psycopg.Connection[dict[str, Any]], tenant_id: str, deployment_ref: str
) -> list[str]:
    """The runs of a deployment that have audit records, in code-point order."""
    rows = conn.execute(
        "SELECT run_id FROM ecp_audit_records WHERE tenant_id = %s AND deployment_ref = %s"
        ' GROUP BY run_id ORDER BY run_id COLLATE "C"',
        (tenant_id, deployment_ref),
    ).fetchall()
    return [row["run_id"] for row in rows]


@attrs.frozen
class _Layout:
    """The select list of a verification read and where each value lands in a row."""

    names: tuple[str, ...]
    """Each selected value's name, in row order."""
    select: str
    envelope: slice
    texts: slice
    commitments: slice
    at: dict[str, int]


@functools.cache
def _layout(table: Table[NodeAuditRecord]) -> _Layout:
    rest = [c for c in table.columns if c not in ENVELOPE_FIELDS and c not in PII_FIELDS]
    columns = [
        ("chain_run_id", "q.run_id"),
        ("head_attempt", "h.attempt"),
        ("head_digest", "h.record_digest"),
        *((c, _CREATED_AT if c == "created_at" else f"r.{c}") for c in ENVELOPE_FIELDS),
        *((c, f"r.{c}::text" if c in table.jsonb else f"r.{c}") for c in rest),
        ("pii_salt", "encode(s.salt, 'hex')"),
        *((c, f"r.{c}::text" if c in table.json else f"to_json(r.{c})::text") for c in PII_FIELDS),
        ("nine_commitments", _NINE_COMMITMENTS),
        *((f"commitment_{c}", f"r.pii_commitments ->> '{c}'") for c in PII_FIELDS),
    ]
    names = tuple(name for name, _ in columns)
    first, texts = names.index(ENVELOPE_FIELDS[0]), names.index(PII_FIELDS[0])
    commitments = names.index(f"commitment_{PII_FIELDS[0]}")
    return _Layout(
        names=names,
        select=", ".join(f"{expression} AS {name}" for name, expression in columns),
        envelope=slice(first, first + len(ENVELOPE_FIELDS)),
        texts=slice(texts, texts + len(PII_FIELDS)),
        commitments=slice(commitments, commitments + len(PII_FIELDS)),
        at={name: index for index, name in enumerate(names)},
    )


def _load(
    table: Table[NodeAuditRecord], names: tuple[str, ...], row: tuple[Any, ...]
) -> NodeAuditRecord:
    """The full record of a verification row: its texts parsed, validated like any read."""
    data = dict(zip(names, row, strict=True))
    for column in (*PII_FIELDS, *table.jsonb):
        if data[column] is not None:
            data[column] = load_json(data[column])
    return table.load(data)


def _entry(table: Table[NodeAuditRecord], layout: _Layout, row: tuple[Any, ...]) -> StoredRecord:
    at = layout.at
    return StoredRecord(
        audit_id=row[at["audit_id"]],
        attempt=row[at["attempt"]],
        previous_record_digest=row[at["previous_record_digest"]],
        record_digest=row[at["record_digest"]],
        signature=row[at["signature"]],
        signing_key_id=row[at["signing_key_id"]],
        envelope=dict(zip(ENVELOPE_FIELDS, row[layout.envelope], strict=True)),
        # read by the server: each field's commitment as text, when they are the nine alone
        pii_commitments=dict(zip(PII_FIELDS, row[layout.commitments], strict=True))
        if row[at["nine_commitments"]]
        else None,
        pii_salt=row[at["pii_salt"]],
        erased=row[at["erased"]],
        texts=row[layout.texts],
        load=functools.partial(_load, table, layout.names, row),
    )


def read_chains(
    conn: psycopg.Connection[dict[str, Any]],
    table: Table[NodeAuditRecord],
    tenant_id: str,
    run_ids: Sequence[str],
) -> list[RunChain]:
    """Each run's records as stored (salts joined) and head, in the order of ``run_ids``.

    One statement; the records are :class:`StoredRecord` entries, parsed only when needed.
    """
    wanted = list(dict.fromkeys(run_ids))
    layout = _layout(table)
    rows = (
        conn.cursor(row_factory=tuple_row)
        .execute(
            f"SELECT {layout.select}"  # noqa: S608 - column names
            " FROM unnest(%s::text[]) AS q (run_id)"
            " LEFT JOIN ecp_audit_heads h ON h.run_id = q.run_id"
            f" LEFT JOIN {table.name} r ON r.run_id = q.run_id AND r.tenant_id = %s"
            # the runs again, so the records are found by index, not among all the tenant's
            " AND r.run_id = ANY(%s::text[])"
            " LEFT JOIN ecp_audit_salts s ON s.audit_id = r.audit_id"
            " ORDER BY q.run_id, r.attempt",
            (wanted, tenant_id, wanted),
        )
        .fetchall()
    )
    entries: dict[str, list[StoredRecord]] = {run_id: [] for run_id in wanted}
    heads: dict[str, ChainHead] = {}
    audit_id = layout.at["audit_id"]
    for row in rows:
        run_id, head_attempt, head_digest = row[0], row[1], row[2]
        if head_attempt is not None and run_id not in heads:
            heads[run_id] = ChainHead(
                run_id=run_id, attempt=head_attempt, record_digest=head_digest
            )
        if row[audit_id] is not None:
            entries[run_id].append(_entry(table, layout, row))
    return [
        RunChain(run_id=run_id, entries=tuple(entries[run_id]), head=heads.get(run_id))
        for run_id in run_ids
    ]
