"""The transparency log under the HTTP runs load: completed runs per second with the log on against
off, and the checkpoint lag (from a record's creation to the first signed checkpoint holding it).

Run as ``python bench/transparency_load.py [--threads T] [--rounds R] [--seconds S]``. It prints
figures and checks only that what it got is right (every run completes, the log holds every record
and its newest checkpoint's root is the tree's), never anything about timing. The database server
is ``ECP_BENCH_DATABASE_URL`` when set, else an embedded PostgreSQL; two fresh databases are made,
migrated and dropped at the end.

1. Two ECP servers, each under uvicorn in a process of its own on a database of its own: "log on"
   as shipped (the audit insert queues each record, the log thread appends and signs a
   checkpoint every ``ECP_LOG_CHECKPOINT_SECONDS``, default 1), and "log off", whose database has
   the queueing trigger disabled (so nothing is queued, appended or signed). The example graph's
   runs (start with ``Prefer: wait``, approve) by ``--threads`` clients, ``--seconds`` per
   contender in ``--rounds`` interleaved rounds; the ratio of the median rates (target >= 0.9),
   and of the servers' median CPU per run (which other work on the machine disturbs less).
2. The checkpoint lag of every record the "log on" server wrote under that load, read afterwards
   from the database: the first checkpoint whose size covers the record's leaf, minus the
   record's ``created_at`` (both the server's clock). Median, p99 and max (target p99 <= 2 s).
"""

from __future__ import annotations

import argparse
import base64
import statistics
import time

import psycopg

import _database
from _rounds import Figure, load_note, percentile, print_summary
from _run_loop import bench_runs, prepare, print_runs
from _server import Child, ecp_app, serve
from ecp_http.server.auth import mint_token

JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(32))).decode("ascii")
TENANT = "bench-log-load"
LAG_TARGET_SECONDS = 2.0
RATIO_TARGET = 0.9

LAGS = """
SELECT extract(epoch FROM (
    SELECT h.created_at FROM ecp_log_heads h
    WHERE h.tenant_id = l.tenant_id AND h.tree_size > l.leaf_index
    ORDER BY h.tree_size LIMIT 1
) - r.created_at) AS lag
FROM ecp_log_leaves l JOIN ecp_audit_records r USING (audit_id)
WHERE l.tenant_id = %s
"""


def start(url: str, headers: dict[str, str]) -> Child:
    child = Child(
        __file__,
        {
            "ECP_DATABASE_URL": url,
            "ECP_JWT_SECRET": JWT_SECRET,
            "ECP_AUDIT_SIGNING_KEY": SIGNING_KEY,
            "ECP_LOG_LEVEL": "WARNING",
        },
    )
    import httpx  # noqa: PLC0415 - the parent only

    with httpx.Client(base_url=child.base_url, headers=headers, timeout=30.0) as client:
        prepare(client)
    return child


def lags(url: str) -> list[float]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(LAGS, (TENANT,)).fetchall()
    missing = [row for row in rows if row[0] is None]
    if missing:
        raise SystemExit(f"{len(missing)} logged records are in no checkpoint")
    return [float(row[0]) for row in rows]


def logged_everything(url: str) -> int:
    """Wait (30 s at most) until the newest checkpoint covers every record of the tenant."""
    deadline = time.monotonic() + 30
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT (SELECT count(*) FROM ecp_audit_records WHERE tenant_id = %s),"
                " (SELECT max(tree_size) FROM ecp_log_heads WHERE tenant_id = %s)",
                (TENANT, TENANT),
            ).fetchone()
            if row is not None and row[0] == row[1]:
                return int(row[0])
            if time.monotonic() > deadline:
                raise SystemExit(f"the log covers {row and row[1]} of {row and row[0]} records")
            time.sleep(0.1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=4, help="concurrent clients (default 4)")
    parser.add_argument("--rounds", type=int, default=4, help="interleaved rounds (default 4)")
    parser.add_argument(
        "--seconds", type=float, default=15.0, help="seconds per contender a round (default 15)"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=7200)
    headers = {"Authorization": f"Bearer {token}"}
    print(f"transparency log under load; {load_note()}")
    with _database.server() as maintenance:
        databases = _database.Databases(maintenance)
        try:
            _, on_url = databases.fresh("log_on")
            _, off_url = databases.fresh("log_off")
            with psycopg.connect(off_url, autocommit=True) as conn:
                conn.execute("ALTER TABLE ecp_audit_records DISABLE TRIGGER ecp_log_queue")
            measure(on_url, off_url, headers, args)
        finally:
            databases.drop_all()


def measure(on_url: str, off_url: str, headers: dict[str, str], args: argparse.Namespace) -> None:
    servers = {"log on": start(on_url, headers), "log off": start(off_url, headers)}
    rates: dict[str, list[float]] = {name: [] for name in servers}
    cpu: dict[str, list[float]] = {name: [] for name in servers}
    try:
        print(
            f"\n1. completed runs (example graph, approve each), {args.threads} clients,"
            f" {args.rounds} interleaved rounds of {args.seconds:g} s per contender"
        )
        for round_number in range(args.rounds):
            order = list(servers) if round_number % 2 == 0 else list(reversed(servers))
            for name in order:
                child = servers[name]
                before = child.cpu_seconds()
                loop = bench_runs(child.base_url, headers, args.threads, 10**9, args.seconds)
                after = child.cpu_seconds()
                spent = None if before is None or after is None else after - before
                rates[name].append(print_runs(f"round {round_number + 1}, {name}", loop, spent))
                if spent is not None and loop.completed:
                    cpu[name].append(spent / loop.completed)
                if loop.problems:
                    raise SystemExit(f"{name}: {loop.problems[0]}")
        logged = logged_everything(on_url)  # while the server's log thread still runs
    finally:
        for child in servers.values():
            child.stop()
    on, off = (statistics.median(rates[name]) for name in ("log on", "log off"))
    ratio = on / off if off else 0.0
    print(f"  median: log on {on:.1f} runs/s, log off {off:.1f} runs/s: ratio {ratio:.3f}")
    cpu_ratio = None
    if cpu["log on"] and cpu["log off"]:
        per_run = {name: statistics.median(values) for name, values in cpu.items()}
        cpu_ratio = per_run["log off"] / per_run["log on"]
        print(
            f"  server CPU per run (median): log on {per_run['log on'] * 1e3:.2f} ms,"
            f" log off {per_run['log off'] * 1e3:.2f} ms: off / on {cpu_ratio:.3f}"
        )

    print("\n2. checkpoint lag of every record written with the log on")
    found = lags(on_url)
    median, p99, worst = statistics.median(found), percentile(found, 0.99), max(found)
    print(
        f"  {len(found):,} records (all {logged:,} logged): median {median * 1e3:.0f} ms,"
        f" p99 {p99 * 1e3:.0f} ms, max {worst * 1e3:.0f} ms"
    )
    print_summary(
        [
            Figure("runs/s, log on / log off", ratio, "x", RATIO_TARGET),
            Figure("server CPU per run, off / on", cpu_ratio, "x", RATIO_TARGET),
            Figure("checkpoint lag p99", p99 * 1e3, "ms", LAG_TARGET_SECONDS * 1e3, at_most=True),
        ]
    )


if __name__ == "__main__":
    main()
