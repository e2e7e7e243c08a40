"""What NOTIFY costs (parts 2 and 3 of ``bench/wakeups.py``): PostgreSQL serialises the commits of
transactions that notified, so notifying commits cannot share a WAL flush. Imported by
``wakeups.py``; not run."""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import psycopg

from ecp_postgres import PostgresStore
from ecp_postgres.notifications import CHANNELS, RUNS_MOVED, NotificationListener
from postgres_audit import ecp_run, ecp_service

if TYPE_CHECKING:
    import argparse

    from _database import Databases

TRIGGER_TABLES = ("ecp_runs", "ecp_webhook_deliveries")


def set_triggers(url: str, *, enabled: bool) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        for table in TRIGGER_TABLES:
            conn.execute(f"ALTER TABLE {table} {'ENABLE' if enabled else 'DISABLE'} TRIGGER USER")


def run_each(ecp: Any, numbers: list[int]) -> None:
    for number in numbers:
        ecp_run(ecp, number)


def bench_commits(databases: Databases, args: argparse.Namespace) -> None:
    _, url = databases.fresh("commits")
    heard: dict[str, int] = dict.fromkeys(CHANNELS, 0)

    def count(channel: str) -> Any:
        return lambda _: heard.__setitem__(channel, heard[channel] + 1)

    listener = NotificationListener(url, {channel: count(channel) for channel in CHANNELS})
    listener.start()
    rates: dict[tuple[int, bool], list[float]] = {}
    serial = iter(range(10**9))
    notified = 0
    print(
        f"\n2. in-process runs/s with the notifying triggers enabled and disabled "
        f"({args.commit_runs} runs per contender in {args.rounds} rounds, a listener connected)"
    )
    with PostgresStore(url, max_size=args.clients + 2) as store:
        ecp = ecp_service(store)
        listener.wait_connected(30)
        for index in range(args.rounds):
            contenders = [(t, on) for t in (1, args.clients) for on in (True, False)]
            shift = index % len(contenders)
            for threads, on in contenders[shift:] + contenders[:shift]:
                set_triggers(url, enabled=on)
                share = max(1, args.commit_runs // args.rounds // threads)
                began = time.perf_counter()
                with ThreadPoolExecutor(threads) as pool:
                    numbers = [[next(serial) for _ in range(share)] for _ in range(threads)]
                    for future in [pool.submit(run_each, ecp, ns) for ns in numbers]:
                        future.result()
                notified += share * threads if on else 0
                rates.setdefault((threads, on), []).append(
                    share * threads / (time.perf_counter() - began)
                )
        set_triggers(url, enabled=True)
    time.sleep(0.5)  # the last notifications reach the listener
    listener.stop()
    print_rates(rates, (1, args.clients), "runs/s")
    # A run started and driven in one transaction is inserted waiting (ADR 0067), so it is never
    # runnable in a commit; it notifies that it moved when it waits and when it ends.
    if heard[RUNS_MOVED] < 2 * notified:
        raise SystemExit(f"the listener heard {heard[RUNS_MOVED]} run-moved notifications")
    print(f"  (the listener heard {heard} notifications; ratio = median of per-round ratios)")


def commit_loop(url: str, count: int) -> None:
    with psycopg.connect(url) as conn:
        for value in range(count):
            conn.execute("INSERT INTO bench_commits (value) VALUES (%s)", (value,))
            conn.commit()


def bench_commit_ceiling(databases: Databases, args: argparse.Namespace) -> None:
    """Bare ``INSERT`` + ``COMMIT`` with and without a notifying trigger: the ceiling NOTIFY sets."""
    _, url = databases.fresh("ceiling", migrate=False)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE bench_commits (id bigserial PRIMARY KEY, value integer)")
        conn.execute(
            "CREATE FUNCTION bench_notify() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN PERFORM pg_notify('bench', ''); RETURN NULL; END $$"
        )
        conn.execute(
            "CREATE TRIGGER bench_notify AFTER INSERT ON bench_commits"
            " FOR EACH ROW EXECUTE FUNCTION bench_notify()"
        )
    heard = [0]
    listener = NotificationListener(url, {"bench": lambda _: heard.__setitem__(0, heard[0] + 1)})
    listener.start()
    listener.wait_connected(30)
    rates: dict[tuple[int, bool], list[float]] = {}
    notified = 0
    contenders = [(t, on) for t in (1, args.clients) for on in (True, False)]
    for index in range(args.rounds):
        shift = index % len(contenders)
        for threads, on in contenders[shift:] + contenders[:shift]:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute(
                    f"ALTER TABLE bench_commits {'ENABLE' if on else 'DISABLE'} TRIGGER bench_notify"
                )
            share = max(1, args.commits // threads)
            began = time.perf_counter()
            with ThreadPoolExecutor(threads) as pool:
                for future in [pool.submit(commit_loop, url, share) for _ in range(threads)]:
                    future.result()
            rates.setdefault((threads, on), []).append(
                share * threads / (time.perf_counter() - began)
            )
            notified += share * threads if on else 0
    time.sleep(0.5)  # the last notifications reach the listener
    listener.stop()
    print(
        f"\n3. commits/s of a bare INSERT with a notifying trigger and without "
        f"(~{args.commits} commits per contender and round, {args.rounds} rounds)"
    )
    print_rates(rates, (1, args.clients), "commits/s")
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM bench_commits").fetchone()
    written = sum(max(1, args.commits // t) * t * args.rounds for t, on in contenders)
    if row is None or row[0] != written or heard[0] != notified:
        raise SystemExit(f"wrote {row}, expected {written}; heard {heard[0]} of {notified}")
    print(f"  ({written} rows written; the listener heard all {notified} notifications)")


def print_rates(
    rates: dict[tuple[int, bool], list[float]], threads: tuple[int, ...], unit: str
) -> None:
    for count in threads:
        on, off = rates[(count, True)], rates[(count, False)]
        ratio = statistics.median(a / b for a, b in zip(on, off, strict=True))
        print(
            f"  {count} thread{'s' if count > 1 else ' '}: notify {statistics.median(on):7.1f} "
            f"{unit}, without {statistics.median(off):7.1f} {unit}, ratio {ratio:5.2f}"
        )
