"""A deployment's audit chains verified on PostgreSQL: against raw hashing, and across connections.

Run as ``python bench/audit_verify.py [--runs N] [--rounds R] [--connections C ...]``. It prints
figures and checks only that what it verified is correct (every chain verifies, signatures where
signed, every record counted), never anything about timing. The server is
``ECP_BENCH_DATABASE_URL`` or an embedded PostgreSQL, like ``postgres_audit.py``; its one
database is fresh, migrated and dropped at the end.

Setup (not timed as a figure): two deployments of ``--runs`` runs (2,000) each, every run a
chain of four records with ``audit_chain.py``'s personal data (every third run digest_version
3), sealed with ``ecp_core.audit.seal`` and appended through ``PostgresAudit.append``, 20 runs a
transaction: one deployment unsigned (the digest axis), one signed with Ed25519; then ``ANALYZE``.

1. Stored canonical texts (ADR 0061), the unsigned deployment, in ``--rounds`` interleaved
   rounds: **raw hashing** (the baseline: ``hashlib.sha256(...).hexdigest()`` over the bytes
   verification hashes, the nine commitment inputs, salted for version 3, and the hashed form of
   each record, canonicalised in advance, in memory), the verification read alone
   (``uow.audit.chains`` in batches), the check alone (``verify_chain`` over entries read in
   advance), ``AuditTrail.verify_deployment`` on one connection (read and check: texts hashed
   as stored), and the full recomputation (the same read, every record parsed, built and
   re-encoded: verification before stored texts). Target: verification / raw hashing >= 0.25.
2. ``verify_deployment`` of the signed deployment with ``connections=1`` against each
   ``--connections`` value (2 and 4); a speed-up is the median of per-round ratios to one.
"""

import argparse
import hashlib
import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from _database import Databases, server
from audit_chain import attempt_payload
from ecp_core.audit import PII_FIELDS, Ed25519Signer, KeyRing, seal, verify_chain
from ecp_core.audit.chain import hashed_bytes
from ecp_core.audit.record import (
    AuditVerificationResponse,
    NodeAuditRecord,
    RunChain,
    StoredRecord,
)
from ecp_core.audit.salted import commitment_bytes, new_salt, parse_salt
from ecp_core.audit.stored import proven
from ecp_core.canonical import canonical_json
from ecp_core.deployments.model import Deployment
from ecp_core.runs.audit.trail import RUNS_PER_READ, AuditTrail
from ecp_postgres import PostgresStore

TENANT, SIGNED, UNSIGNED = "bench-tenant", "bench-dep", "bench-dep-unsigned"
RECORDS_PER_RUN = 4
START = datetime(2026, 1, 1, tzinfo=UTC)
SIGNER = Ed25519Signer(bytes(range(32)))
RUNS_PER_WRITE = 20
"""Runs appended per transaction (one batched statement of their 80 records)."""


def chain(run_number: int, deployment: str, signer: Ed25519Signer | None) -> list[NodeAuditRecord]:
    """One run's four sealed records (digest_version 3 for every third run)."""
    run_id = f"{deployment}-run-{run_number:06d}"
    salted = run_number % 3 == 0
    rng = random.Random(run_number)
    records: list[NodeAuditRecord] = []
    for attempt in range(1, RECORDS_PER_RUN + 1):
        payload = attempt_payload(run_number * RECORDS_PER_RUN + attempt, rng)
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=signer,
                created_at=START + timedelta(seconds=run_number, microseconds=attempt),
                digest_version=3 if salted else 2,
                salt=new_salt() if salted else None,
                audit_id=f"{run_id}-{attempt}",
                run_id=run_id,
                tenant_id=TENANT,
                deployment_ref=deployment,
                graph_version_ref="refund-triage@1",
                node_id=payload.node_id,
                attempt=attempt,
                status=payload.status,
                **{field: getattr(payload, field, None) for field in PII_FIELDS},
            )
        )
    return records


def build(
    store: PostgresStore, runs: int, deployment: str, signer: Ed25519Signer | None
) -> list[NodeAuditRecord]:
    """The deployment and its ``runs`` chains, appended through the adapter; the records."""
    with store.unit_of_work() as uow:
        uow.deployments.add(
            Deployment(
                tenant_id=TENANT,
                deployment_ref=deployment,
                graph_id="refund-triage",
                graph_version=1,
                graph_version_ref="refund-triage@1",
                created_at=START,
            )
        )
        uow.commit()
    written: list[NodeAuditRecord] = []
    for first in range(0, runs, RUNS_PER_WRITE):
        with store.unit_of_work() as uow:
            for number in range(first, min(runs, first + RUNS_PER_WRITE)):
                for record in chain(number, deployment, signer):
                    uow.audit.append(record)
                    written.append(record)
            uow.commit()
    return written


def hashed_inputs(records: list[NodeAuditRecord]) -> list[bytes]:
    """The bytes verification hashes: nine commitment inputs (salted in v3), the hashed form."""
    blobs: list[bytes] = []
    for record in records:
        salt = parse_salt(record.pii_salt)
        for field in PII_FIELDS:
            value = getattr(record, field)
            blobs.append(
                canonical_json(value) if salt is None else commitment_bytes(field, value, salt)
            )
        blobs.append(hashed_bytes(record))
    return blobs


def expect_verified(
    answer: AuditVerificationResponse, records: int, *, signed: bool | None
) -> None:
    """Stop when the deployment does not verify in full (a bug, not a timing)."""
    if not (
        answer.verified and answer.signature_verified is signed and answer.record_count == records
    ):
        raise SystemExit(f"the deployment failed to verify: {answer}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2_000, help="runs of 4 records (2000)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (5)")
    parser.add_argument(
        "--connections", type=int, nargs="+", default=[2, 4], help="parallel contenders (2 4)"
    )
    args = parser.parse_args()
    records = args.runs * RECORDS_PER_RUN
    with server() as url:
        databases = Databases(url)
        try:
            _, db_url = databases.fresh("verify")
            with PostgresStore(db_url, max_size=max(args.connections) + 1) as store:
                began = time.perf_counter()
                unsigned = build(store, args.runs, UNSIGNED, None)
                build(store, args.runs, SIGNED, SIGNER)
                with psycopg.connect(db_url, autocommit=True) as conn:
                    conn.execute("ANALYZE")  # as autovacuum would have: plans for real tables
                print(
                    f"setup: 2 x {args.runs:,} runs x {RECORDS_PER_RUN} records (unsigned, signed)"
                    f" in {time.perf_counter() - began:.1f} s; {RUNS_PER_READ} runs per read"
                )
                against_raw(store, unsigned, args.rounds)
                across_connections(store, [1, *args.connections], args.rounds, records)
        finally:
            databases.drop_all()


def _read(store: PostgresStore, run_ids: list[str]) -> list[RunChain]:
    chains: list[RunChain] = []
    for start in range(0, len(run_ids), RUNS_PER_READ):
        with store.unit_of_work() as uow:
            chains.extend(uow.audit.chains(TENANT, run_ids[start : start + RUNS_PER_READ]))
    return chains


def proven_count(chains: list[RunChain]) -> int:
    """How many entries their stored texts prove (the rest take the full recomputation)."""
    return sum(isinstance(e, StoredRecord) and proven(e) for c in chains for e in c.entries)


def against_raw(store: PostgresStore, written: list[NodeAuditRecord], rounds: int) -> None:
    """Interleaved rounds: raw hashing, the read alone, verification, the full recomputation."""
    count = len(written)
    blobs = hashed_inputs(written)
    run_ids = list(dict.fromkeys(record.run_id for record in written))
    service = AuditTrail(store.unit_of_work, [], connections=1)

    def raw() -> None:
        sha256 = hashlib.sha256
        for blob in blobs:
            sha256(blob).hexdigest()

    def read() -> None:
        if sum(len(c.entries) for c in _read(store, run_ids)) != count:
            raise SystemExit("the read missed records")

    def stored() -> None:
        expect_verified(service.verify_deployment(TENANT, UNSIGNED), count, signed=None)

    chains = _read(store, run_ids)
    contenders: dict[str, Callable[[], Any]] = {
        "raw": raw,
        "read": read,
        "check": lambda: check_chains(chains, count, loaded=False),
        "stored": stored,
        "full": lambda: check_chains(_read(store, run_ids), count, loaded=True),
    }
    report(interleave(contenders, rounds), count, proven_count(chains))


def check_chains(chains: list[RunChain], count: int, *, loaded: bool) -> None:
    """``verify_chain`` over each chain's entries, or over its records loaded (the full path)."""
    ring = KeyRing.of([])
    checked = 0
    for c in chains:
        entries = c.records if loaded else c.entries
        result = verify_chain(entries, ring, scope=c.run_id, head=c.head)
        if not result.verified:
            raise SystemExit(f"run {c.run_id} failed to verify: {result.error}")
        checked += result.record_count
    if checked != count:
        raise SystemExit(f"verified {checked} records of {count}")


def report(seconds: dict[str, list[float]], count: int, proven_count: int) -> None:
    """Records/s of each contender of :func:`against_raw` and its ratio to raw hashing."""
    rounds = len(seconds["raw"])
    print(
        f"\n1. digest-only verification on PostgreSQL, {count:,} records"
        f" ({proven_count / count:.1%} proven from stored texts), median of {rounds} rounds"
        f" ({load_note()})"
    )
    labels = {
        "raw": "raw sha256 of the same bytes (baseline)",
        "read": "verification read alone",
        "check": "checking rows read in advance",
        "stored": "verify_deployment (stored texts)",
        "full": "full recomputation (parse, build)",
    }
    for name, label in labels.items():
        median = statistics.median(seconds[name])
        ratio = statistics.median(r / t for r, t in zip(seconds["raw"], seconds[name], strict=True))
        target = "  (target >= 0.25)" if name in ("stored", "check") else ""
        print(f"  {label:<40} {count / median:>9,.0f} records/s  raw / this {ratio:5.3f}{target}")
    gain = statistics.median(f / s for f, s in zip(seconds["full"], seconds["stored"], strict=True))
    print(f"  stored texts against the full recomputation: {gain:.2f}x faster")


def interleave(contenders: dict[str, Callable[[], Any]], rounds: int) -> dict[str, list[float]]:
    """Seconds of each contender per round, their order rotating from round to round."""
    names = list(contenders)
    seconds: dict[str, list[float]] = {name: [] for name in names}
    for number in range(rounds):
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            began = time.perf_counter()
            contenders[name]()
            seconds[name].append(time.perf_counter() - began)
    return seconds


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def across_connections(
    store: PostgresStore, connections: list[int], rounds: int, records: int
) -> None:
    """The signed deployment on one connection and on several; speed-ups against one."""
    keys = [SIGNER.published()]
    contenders = {
        str(n): lambda n=n: expect_verified(
            AuditTrail(store.unit_of_work, keys, connections=n).verify_deployment(TENANT, SIGNED),
            records,
            signed=True,
        )
        for n in connections
    }
    seconds = interleave(contenders, rounds)
    print(
        f"\n2. verify_deployment, signed, {records:,} records, median of {rounds} rounds"
        f" ({load_note()})"
    )
    for n in connections:
        median = statistics.median(seconds[str(n)])
        speedup = statistics.median(
            one / this for one, this in zip(seconds["1"], seconds[str(n)], strict=True)
        )
        print(
            f"  {n} connection{'s' if n > 1 else ' '}  {records / median:>9,.0f} records/s"
            f"  {median * 1e3:8.1f} ms  speed-up against one: {speedup:5.2f}x"
        )


if __name__ == "__main__":
    main()
