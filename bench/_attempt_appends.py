"""Audit appends where the product makes them: inside a node attempt's transaction (ADR 0070).

Every record the engine writes belongs to an attempt: the run is locked, the attempt's record is
sealed on the chain head that lock read, the record, the head and the run's new state are written
and the transaction commits. Two contenders do that job, one attempt per transaction, each on its
own run:

- the adapter: ``uow.runs.lock`` (the run with its chain head, settings and policy in one
  statement), ``AuditWriter.write`` (the product's writer: SHA-256 commitments, digest, Ed25519
  signature, the conditional head move and the record queued), ``uow.runs.save``, ``uow.commit``
  (the queued writes leave as one statement);
- plain psycopg doing the same job the direct way, with records sealed in advance (no hashing or
  signing): the run and its head read with ``SELECT ... FOR UPDATE``, an ``UPDATE`` of the run's
  state, the record's ``INSERT``, an ``UPDATE`` of the head row, ``COMMIT``.
"""

import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import attrs
import psycopg
from psycopg.types.json import Jsonb

from _database import Databases
from _rounds import Figure, Timing, interleave, paired_ratio, rate_line
from ecp_core import Ed25519Signer, KeyRing
from ecp_core.audit import verify_chain
from ecp_core.audit.chain import seal
from ecp_core.ports.system import Signer
from ecp_core.runs.audit.writer import AuditWriter
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import Run
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.types import RunStatus
from ecp_postgres import PostgresStore
from ecp_postgres.audit import AUDIT

ROUNDS = 25
TARGET = 0.8

_LOCK = """
SELECT r.*, h.attempt AS head_attempt, h.record_digest AS head_digest
  FROM ecp_runs r LEFT JOIN ecp_audit_heads h ON h.run_id = r.run_id COLLATE "default"
 WHERE r.run_id = %s AND r.tenant_id = %s
   FOR UPDATE OF r"""
_SAVE_STATE = (
    "UPDATE ecp_runs SET state = %s, steps = %s, attempts = %s, updated_at = %s"
    " WHERE run_id = %s AND tenant_id = %s"
)
_FIRST_HEAD = "INSERT INTO ecp_audit_heads (run_id, attempt, record_digest) VALUES (%s, %s, %s)"
_MOVE_HEAD = "UPDATE ecp_audit_heads SET attempt = %s, record_digest = %s WHERE run_id = %s"

Fields = Callable[[int], dict[str, Any]]
"""The attempt record's fields for attempt number n (node, status, snapshots, metadata)."""


def _state(attempt: int) -> dict[str, Any]:
    """The run state after ``attempt``: what the attempt's node wrote."""
    return {"order": f"A-{100000 + attempt}", "step": attempt, "category": "refund"}


def _new_run(run_id: str, tenant_id: str) -> Run:
    now = datetime.now(UTC)
    return Run(
        run_id=run_id,
        tenant_id=tenant_id,
        deployment_ref="approvals",
        graph_version_ref="bench@1",
        thread_id=run_id,
        status=RunStatus.RUNNING,
        created_at=now,
        updated_at=now,
        next_node_id="classify",
    )


class AdapterAttempts:
    """The adapter's attempts on one run: lock, write the record, save the run, commit."""

    def __init__(self, store: PostgresStore, run: Run, signer: Signer, fields: Fields) -> None:
        self._store = store
        self._run = run
        self._fields = fields
        self._clock = SystemClock()
        self._writer = AuditWriter(self._clock, UuidV7Factory(), signer)

    def attempts(self, count: int) -> None:
        for _ in range(count):
            with self._store.unit_of_work() as uow:
                run = uow.runs.lock(self._run.tenant_id, self._run.run_id)
                assert run is not None  # noqa: S101 - added before the rounds
                number = self._writer.write(
                    uow, run, AttemptRecord(**self._fields(run.attempts + 1))
                )
                uow.runs.save(
                    attrs.evolve(
                        run,
                        state=_state(number),
                        steps=run.steps + 1,
                        attempts=number,
                        updated_at=self._clock.now(),
                    )
                )
                uow.commit()


class PlainAttempts:
    """The same attempts in plain psycopg, their records sealed in advance."""

    def __init__(self, conn: psycopg.Connection[Any], run: Run, rows: list[dict[str, Any]]) -> None:
        self._conn = conn
        self._run = run
        self._rows = rows

    def attempts(self, lo: int, hi: int) -> None:
        conn, run_id, tenant_id = self._conn, self._run.run_id, self._run.tenant_id
        insert = AUDIT.insert_sql()
        for params in self._rows[lo:hi]:
            row = conn.execute(_LOCK, (run_id, tenant_id)).fetchone()
            assert row is not None  # noqa: S101 - added before the rounds
            attempt = params["attempt"]
            conn.execute(
                _SAVE_STATE,
                (Jsonb(_state(attempt)), attempt, attempt, datetime.now(UTC), run_id, tenant_id),
            )
            conn.execute(insert, params)
            if row[-2] is None:
                conn.execute(_FIRST_HEAD, (run_id, attempt, params["record_digest"]))
            else:
                conn.execute(_MOVE_HEAD, (attempt, params["record_digest"], run_id))
            conn.commit()


def _presealed(run: Run, count: int, signer: Signer, fields: Fields) -> list[dict[str, Any]]:
    """The plain contender's record rows, chained and signed before the clock starts."""
    clock, ids, previous, rows = SystemClock(), UuidV7Factory(), None, []
    for attempt in range(1, count + 1):
        record = seal(
            previous_record_digest=previous,
            signer=signer,
            created_at=clock.now(),
            audit_id=ids.new_id(),
            run_id=run.run_id,
            tenant_id=run.tenant_id,
            deployment_ref=run.deployment_ref,
            graph_version_ref=run.graph_version_ref,
            attempt=attempt,
            **fields(attempt),
        )
        previous = record.record_digest
        rows.append(AUDIT.params(record))
    return rows


def bench_attempt_appends(
    databases: Databases,
    count: int,
    deadline: float,
    *,
    tenant_id: str,
    signer: Ed25519Signer,
    fields: Fields,
) -> list[Figure]:
    """Time both contenders over ``count`` attempts each; check the adapter's chain verifies."""
    _, url = databases.fresh("attempts")
    runs = {name: _new_run(f"bench-attempt-{name}", tenant_id) for name in ("adapter", "plain")}
    warm = {name: _new_run(f"bench-attempt-warm-{name}", tenant_id) for name in runs}
    started = time.perf_counter()
    rows = _presealed(runs["plain"], count, signer, fields)
    seal_ms = (time.perf_counter() - started) * 1e3 / count
    with PostgresStore(url, max_size=2) as store, psycopg.connect(url) as conn:
        with store.unit_of_work() as uow:
            for run in (*runs.values(), *warm.values()):
                uow.runs.add(run)
            uow.commit()
        # Warm up (pool, prepared statements) on runs of their own.
        AdapterAttempts(store, warm["adapter"], signer, fields).attempts(50)
        PlainAttempts(conn, warm["plain"], _presealed(warm["plain"], 50, signer, fields)).attempts(
            0, 50
        )

        adapter = AdapterAttempts(store, runs["adapter"], signer, fields)
        plain = PlainAttempts(conn, runs["plain"], rows)
        steps: dict[str, Callable[[int, int], None]] = {
            "adapter": lambda lo, hi: adapter.attempts(hi - lo),
            "plain": plain.attempts,
        }
        timings = interleave(steps, count, ROUNDS, deadline, "attempts")
        done = timings["adapter"].count
        with store.unit_of_work() as uow:
            records = uow.audit.for_run(tenant_id, runs["adapter"].run_id)
            head = uow.audit.head(runs["adapter"].run_id)
            stored = uow.runs.get(tenant_id, runs["adapter"].run_id)
    result = verify_chain(records, KeyRing.of([signer]), scope="bench", head=head)
    if not (result.verified and result.signature_verified) or len(records) != done:
        raise SystemExit(f"the adapter's attempts do not verify: {result}")
    if stored is None or stored.attempts != done:
        raise SystemExit("the adapter's run does not count its attempts")
    return _report(timings, seal_ms)


def _report(timings: dict[str, Timing], seal_ms: float) -> list[Figure]:
    print(
        rate_line(
            "adapter: lock + AuditWriter.write + save + commit", timings["adapter"], "attempts"
        )
    )
    print(
        rate_line(
            "plain psycopg: lock + UPDATE run + INSERT + UPDATE head", timings["plain"], "attempts"
        )
    )
    ratio = paired_ratio(timings["adapter"], timings["plain"])
    overall = timings["adapter"].rate / timings["plain"].rate
    print(
        f"  adapter / plain, in an attempt: {ratio:.2f} (median of paired rounds; "
        f"{overall:.2f} overall; target >= {TARGET}); sealing alone {seal_ms:.3f} ms a record,"
        " paid by the adapter only"
    )
    return [
        Figure("attempts with a record/s, adapter", timings["adapter"].rate, "/s"),
        Figure("attempts with a record/s, plain psycopg", timings["plain"].rate, "/s"),
        Figure("audit appends in an attempt, adapter / plain", ratio, "x", TARGET),
    ]
