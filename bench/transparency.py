"""The transparency log at size on PostgreSQL: an inclusion proof in a log of 10 million leaves,
and how fast the integrator appends (the backfill rate of existing records).

Run as ``python bench/transparency.py [--leaves N] [--proofs N] [--backfill N]``. It prints figures
and checks only that what it got is right (every proof verifies against the signed root), never
anything about timing. The database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance database)
when set, else an embedded PostgreSQL; the databases are fresh, migrated and dropped at the end.

1. The tree of ``--leaves`` leaves (10,000,000) is built in this process with the integrator's own
   code (``extend_tiles`` over batches of 65,536 leaf hashes; the rate is printed) and copied into
   a fresh database as its tiles, with the signed head and a leaf row for each of ``--proofs``
   (1,000) sampled records: a proof needs the record's leaf index (one row) and the tiles.
2. ``--proofs`` inclusion proofs by audit id through ``TransparencyLog.inclusion``, the read
   behind ``GET /v1/log/proof/inclusion``: the median and p99 time per proof, against the target
   of 5 ms at the median.
3. The backfill: ``--backfill`` (200,000) pending leaves queued by SQL in a second database, then
   ``LogIntegrator.integrate`` until the queue is empty: leaves appended per second, each pass a
   signed checkpoint.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import time

import psycopg

from _database import Databases, server
from _rounds import Figure, load_note, percentile, print_summary
from ecp_core.signing import Ed25519Signer
from ecp_core.system import SystemClock
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.keys import LogKeys
from ecp_core.transparency.merkle import leaf_hash, tree_root, verify_inclusion
from ecp_core.transparency.model import LogHead
from ecp_core.transparency.service import TransparencyLog
from ecp_core.transparency.tiles import TiledHashes, extend_tiles
from ecp_postgres import PostgresStore

TENANT = "bench-log"
TARGET_MS = 5.0
BATCH = 65_536
KEYS = LogKeys(origin="bench.example", signing=Ed25519Signer(bytes(range(32))))


def check(condition: object, problem: str) -> None:
    """Stop with ``problem`` unless ``condition`` holds (a wrong answer is never timed)."""
    if not condition:
        raise SystemExit(problem)


def entry(index: int) -> bytes:
    """The 32-byte record digest of leaf ``index``."""
    return hashlib.sha256(index.to_bytes(8, "big")).digest()


def build_tiles(leaves: int) -> tuple[dict[tuple[int, int], bytes], float]:
    """Every tile of the tree of ``leaves`` leaves, and the leaves hashed and tiled per second."""
    tiles: dict[tuple[int, int], bytes] = {}
    started = time.perf_counter()
    for start in range(0, leaves, BATCH):
        hashes = [leaf_hash(entry(i)) for i in range(start, min(leaves, start + BATCH))]
        tiles.update(
            extend_tiles(start, hashes, lambda level, index: tiles.get((level, index), b""))
        )
    return tiles, leaves / (time.perf_counter() - started)


def store_log(
    url: str, tiles: dict[tuple[int, int], bytes], leaves: int, sample: list[int]
) -> None:
    """The tiles, the signed head and the sampled leaves' rows, copied into ``url``."""
    root = tree_root(leaves, TiledHashes(lambda level, index: tiles.get((level, index), b"")))
    text = Checkpoint(KEYS.origin_of(TENANT), leaves, root).text()
    note = text + "\n" + KEYS.signer(TENANT).signature_line(text)
    head = LogHead(TENANT, leaves, root, note, SystemClock().now())
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        with cursor.copy(
            "COPY ecp_log_tiles (tenant_id, level, tile_index, hashes) FROM STDIN"
        ) as copy:
            for (level, index), hashes in tiles.items():
                copy.write_row((TENANT, level, index, hashes))
        with cursor.copy(
            "COPY ecp_log_leaves (tenant_id, leaf_index, audit_id, record_digest) FROM STDIN"
        ) as copy:
            for index in sample:
                copy.write_row((TENANT, index, f"audit-{index}", "sha256:" + entry(index).hex()))
        cursor.execute(
            "INSERT INTO ecp_log_heads (tenant_id, tree_size, root, note, created_at)"
            " VALUES (%s, %s, %s, %s, %s)",
            (TENANT, head.size, head.root, head.note, head.created_at),
        )


def time_proofs(url: str, leaves: int, sample: list[int]) -> list[float]:
    """Milliseconds per inclusion proof by audit id, each verified against the signed root."""
    timings = []
    with PostgresStore(url, max_size=2) as store:
        log = TransparencyLog(store.unit_of_work, KEYS)
        root = Checkpoint.parse(log.checkpoint(TENANT).split("\n\n")[0] + "\n").root
        for index in sample:
            started = time.perf_counter()
            proof = log.inclusion(TENANT, f"audit-{index}", None)
            timings.append((time.perf_counter() - started) * 1000)
            check(proof.leaf_index == index, f"record {index} is at leaf {proof.leaf_index}")
            verified = verify_inclusion(leaf_hash(entry(index)), index, leaves, proof.hashes, root)
            check(verified, f"the proof of leaf {index} does not verify")
    return timings


def backfill(url: str, count: int) -> tuple[float, int]:
    """Leaves appended per second from a queue of ``count``, and the passes it took."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "INSERT INTO ecp_log_pending (tenant_id, audit_id, record_digest)"
            " SELECT %s, 'queued-' || n, 'sha256:' || encode(sha256(int8send(n)), 'hex')"
            " FROM generate_series(1, %s) AS n",
            (TENANT, count),
        )
    with PostgresStore(url, max_size=2) as store:
        integrator = LogIntegrator(store.unit_of_work, KEYS, SystemClock())
        started, passes, appended = time.perf_counter(), 0, 0
        while appended < count:
            done = integrator.integrate()
            appended += sum(tenant.appended for tenant in done)
            passes += 1
        rate = count / (time.perf_counter() - started)
        size = TransparencyLog(store.unit_of_work, KEYS).size(TENANT)
    check(size == count, f"the log holds {size} leaves, not {count}")
    return rate, passes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--leaves", type=int, default=10_000_000)
    parser.add_argument("--proofs", type=int, default=1000)
    parser.add_argument("--backfill", type=int, default=200_000)
    args = parser.parse_args()
    print(load_note())
    tiles, tiled_rate = build_tiles(args.leaves)
    print(
        f"tree of {args.leaves:,} leaves: {len(tiles):,} tiles, {tiled_rate:,.0f} leaves/s hashed and tiled"
    )
    sample = sorted(random.Random(7).sample(range(args.leaves), args.proofs))
    figures: list[Figure] = []
    with server() as url:
        databases = Databases(url)
        try:
            _, log_url = databases.fresh("log")
            started = time.perf_counter()
            store_log(log_url, tiles, args.leaves, sample)
            print(f"stored in {time.perf_counter() - started:.1f} s")
            del tiles
            timings = time_proofs(log_url, args.leaves, sample)
            median, p99 = percentile(timings, 0.5), percentile(timings, 0.99)
            print(
                f"inclusion proof, {args.leaves:,} leaves: median {median:.2f} ms, p99 {p99:.2f} ms"
            )
            figures.append(Figure("inclusion proof median", median, "ms", TARGET_MS, at_most=True))
            _, queue_url = databases.fresh("backfill")
            rate, passes = backfill(queue_url, args.backfill)
            print(f"backfill of {args.backfill:,} records: {rate:,.0f} leaves/s in {passes} passes")
            figures.append(Figure("backfill rate", rate, "leaves/s"))
            figures.append(Figure("leaves hashed and tiled", tiled_rate, "leaves/s"))
        finally:
            databases.drop_all()
    print_summary(figures)


if __name__ == "__main__":
    main()
