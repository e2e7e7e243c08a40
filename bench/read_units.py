"""Read units of work: the store's rollback, which keeps prepared statements, against psycopg's.

Run as ``python bench/read_units.py [--reads N] [--rounds R]``. A fresh, migrated database gets a few
completed runs; then each round makes N read units of work (``uow.runs.get`` of one of those
runs, the read a ``GET /runs/{id}`` makes), each ending in a rollback, as every read unit does.
The contenders alternate round by round on one pool of one connection: ``kept``, the store's
``UnitConnection.rollback`` (ADR 0108: the session's prepared statements stay), and ``psycopg``,
psycopg's own rollback (it drops every prepared statement with ``DEALLOCATE ALL``, so a read's
statement is parsed and planned again until it has run five more times). It prints per read the
wall time, the client's CPU and PostgreSQL's (every process of the server, when it runs here),
with kept / psycopg ratios of the medians over rounds, and checks only that every read found its
run. The server is ``ECP_BENCH_DATABASE_URL`` or an embedded PostgreSQL.
"""

import argparse
import statistics
import time

import psycopg

from _cpu import backend_postmaster, postgres_seconds
from _database import Databases, server
from ecp_core.testing.samples import run
from ecp_postgres import PostgresStore
from ecp_postgres.session import UnitConnection

RUNS = 50
KEPT = UnitConnection.rollback


def psycopg_rollback(conn: UnitConnection) -> None:
    """Psycopg's own rollback, after the store's bookkeeping: its prepared statements dropped."""
    conn.pending.discard()
    conn.memo.clear()
    psycopg.Connection.rollback(conn)


def reads(store: PostgresStore, count: int) -> None:
    """``count`` read units of work, each ending in a rollback."""
    for index in range(count):
        with store.unit_of_work() as uow:
            if uow.runs.get("t1", f"read-{index % RUNS}") is None:
                raise SystemExit("a read found no run")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reads", type=int, default=2000, help="reads a round (default 2000)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds a contender (default 6)")
    args = parser.parse_args()
    contenders = {"kept": KEPT, "psycopg": psycopg_rollback}
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in contenders}
    with server() as url:
        databases = Databases(url)
        try:
            _, database = databases.fresh("reads")
            postmaster = backend_postmaster(database)
            with PostgresStore(database, max_size=1) as store:
                with store.unit_of_work() as tx:
                    for index in range(RUNS):
                        tx.runs.add(run(f"read-{index}", tenant="t1"))
                    tx.commit()
                for _ in range(args.rounds):
                    for name, rollback in contenders.items():
                        UnitConnection.rollback = rollback  # type: ignore[method-assign]
                        reads(store, 100)  # the statement prepared again, where it was dropped
                        cpu, pg, wall = (
                            time.process_time(),
                            postgres_seconds(postmaster),
                            time.perf_counter(),
                        )
                        reads(store, args.reads)
                        after = postgres_seconds(postmaster)
                        spent_pg = float("nan") if pg is None or after is None else after - pg
                        figures[name].append(
                            (time.perf_counter() - wall, time.process_time() - cpu, spent_pg)
                        )
                UnitConnection.rollback = KEPT  # type: ignore[method-assign]
        finally:
            databases.drop_all()
    print(f"read units of work, {args.reads} a round, {args.rounds} rounds a contender")
    medians = {
        name: [statistics.median(row[part] for row in rows) / args.reads * 1e3 for part in range(3)]
        for name, rows in figures.items()
    }
    for name, (wall, cpu, pg) in medians.items():
        print(
            f"  {name:<8} {wall:.3f} ms a read, client CPU {cpu:.3f} ms, PostgreSQL CPU {pg:.3f} ms"
        )
    kept, dropped = medians["kept"], medians["psycopg"]
    print(
        f"  kept / psycopg: wall {kept[0] / dropped[0]:.2f}, client CPU {kept[1] / dropped[1]:.2f}, "
        f"PostgreSQL CPU {kept[2] / dropped[2]:.2f} (lower is better)"
    )


if __name__ == "__main__":
    main()
