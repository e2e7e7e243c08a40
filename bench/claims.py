"""The run claim's latency (``ecp_claim_runnable``), without limits and under one (ADR 0079).

Run as ``python bench/claims.py [--tenants N] [--runs M] [--claims K]``. A fresh, migrated
database gets N tenants with M pending runs each (then ``ANALYZE``); each round makes K claims,
each in its own unit of work, committed (the claimed run keeps its place: a claim only stamps
it). It prints the median claim per round, for the tenants without limits and then with a
limit of 5 on every deployment (the claim then admits runs and skips the full deployment's),
and checks only that every claim found a run. The server is ``ECP_BENCH_DATABASE_URL`` or an
embedded PostgreSQL, as for the other scripts.
"""

import argparse
import statistics
import time
from datetime import UTC, datetime

import attrs
import psycopg

from _database import Databases, server
from ecp_core.deployments.model import Deployment
from ecp_core.testing.samples import NOW, run
from ecp_postgres import PostgresStore

ROUNDS = 5


def claims(store: PostgresStore, count: int) -> list[float]:
    """``count`` committed claims: the medians of each round, in microseconds."""
    now = datetime.now(UTC)
    medians = []
    for _ in range(ROUNDS):
        times = []
        for _ in range(count):
            with store.unit_of_work() as tx:
                started = time.perf_counter()
                claim = tx.runs.claim_runnable(now)
                times.append(time.perf_counter() - started)
                if claim is None:
                    raise SystemExit("a claim found no run")
                tx.commit()
        medians.append(statistics.median(times) * 1e6)
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tenants", type=int, default=8, help="tenants (default 8)")
    parser.add_argument("--runs", type=int, default=500, help="pending runs each (default 500)")
    parser.add_argument("--claims", type=int, default=400, help="claims per round (default 400)")
    args = parser.parse_args()
    with server() as url:
        databases = Databases(url)
        try:
            _, database = databases.fresh("claims")
            with PostgresStore(database, max_size=2) as store:
                with store.unit_of_work() as tx:
                    for t in range(args.tenants):
                        for i in range(args.runs):
                            tx.runs.add(run(f"t{t}-run-{i:05d}", tenant=f"t{t}"))
                    tx.commit()
                with psycopg.connect(database, autocommit=True) as conn:
                    conn.execute("ANALYZE ecp_runs")
                shape = f"{args.tenants} tenants x {args.runs} pending runs"
                free = claims(store, args.claims)
                print(f"claims, no limits ({shape}): median per round (us) {_line(free)}")
                with store.unit_of_work() as tx:
                    for t in range(args.tenants):
                        tx.deployments.add(_deployment(f"t{t}"))
                    tx.commit()
                capped = claims(store, args.claims)
                print(
                    f"claims, limit 5 a deployment ({shape}): median per round (us) {_line(capped)}"
                )
        finally:
            databases.drop_all()


def _deployment(tenant: str) -> Deployment:
    """The sample runs' deployment ``dep`` of ``tenant``, limited to 5 runs at once."""
    return attrs.evolve(
        Deployment(
            tenant_id=tenant,
            deployment_ref="dep",
            graph_id="g",
            graph_version=1,
            graph_version_ref="g@1",
            created_at=NOW,
        ),
        max_concurrent_runs=5,
    )


def _line(medians: list[float]) -> str:
    return f"{[round(m) for m in medians]}; median {statistics.median(medians):.0f}"


if __name__ == "__main__":
    main()
