"""Retention purge throughput: the run-TTL sweep erasing many terminal runs on PostgreSQL.

Run as ``python bench/retention.py [--runs N]``. It prints figures and checks only that what it
did is correct (every run erased, a sample of erased chains still verifies), never anything about
timing. The server is ``ECP_BENCH_DATABASE_URL`` (the URL of a maintenance database on a server
where this user may create databases) when set, else an embedded PostgreSQL in a temporary
directory. Every database it creates is fresh and migrated, and is dropped at the end.

1. Setup (not the measurement): ``--runs`` terminal runs (default 10,000; one in ten FAILED, the
   rest COMPLETED) of five audit records each, sealed with ``ecp_core.audit.seal`` (commitments,
   digest, Ed25519 signature) and bulk-inserted with plain psycopg through the adapter's own
   ``RUNS``/``AUDIT`` ``Table.insert_sql()``/``params()``, plus each chain's head row. The
   database is then copied (``CREATE DATABASE ... TEMPLATE``) for the baseline.
2. A tenant policy with a run TTL, a ``FixedClock`` past it, and ``ecp.retention.sweep()`` timed
   until every run is erased. Each pass erases at most ``PURGE_BATCH`` runs of a tenant, each in
   the spec's steps (crypto-erase the audits, delete checkpoints, redact the run row, clean
   artifacts, economic events), with the retention lock, the row lock and the re-checks.
3. The baseline, on the copy: the write statements one erasure sends, replayed with plain psycopg
   on one connection with parameters made in advance: the audit-record erasure ``UPDATE`` (one per
   record), the run ``UPDATE`` (twice: checkpoints cleared, then the row redacted) and the
   retention-log ``INSERT`` (one per step), committed like the erasure commits (steps 1-3 and
   their log lines, then the later steps' log lines).

Sweep passes and baseline batches of the same runs alternate (their order rotating), so table
growth and other processes' load fall on both; the ratio is the median over rounds of the two
rates in the same round. The statements of one erasure by kind follow, and finally a check that
all runs, records and log lines were written and that a sample of erased chains still verifies.
"""

import argparse
import random
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

import attrs
import psycopg

from _database import Databases, server
from _rounds import Timing, load_note, paired_ratio
from _statements import statement_kind, statements_seen
from ecp_core import ActorIdentity, AuthMethod, Ecp, Ed25519Signer
from ecp_core.audit import crypto_erase, seal
from ecp_core.audit.record import NodeAuditRecord
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.retention import (
    ErasureRequest,
    ErasureStepStatus,
    RetentionAuditEntry,
    RetentionPolicyRequest,
)
from ecp_core.retention.service import PURGE_BATCH
from ecp_core.runs.run.model import FailureState, Run
from ecp_core.service import RetentionSettings
from ecp_core.system import FixedClock, UuidV7Factory
from ecp_core.types import AttemptStatus, RunStatus
from ecp_postgres import (
    PostgresStore,
)
from ecp_postgres.audit import AUDIT, DROP_SALT_SQL, ERASURE_SQL
from ecp_postgres.retention import RETENTION_LOG
from ecp_postgres.runs import RUNS

if TYPE_CHECKING:
    from collections.abc import Callable

TENANT = "bench"
DEPLOYMENT = "orders"
SIGNER = Ed25519Signer(bytes(range(2, 34)), key_id="bench-retention")
RECORDS_PER_RUN = 5
RUN_TTL = 3600
START = datetime(2026, 3, 1, tzinfo=UTC)
NOW = START + timedelta(days=1)
"""The FixedClock during the sweep: every bulk-made run is past the TTL, the probe run is not."""
INSERT_CHUNK = 1000
SAMPLE = 40
ADMIN_SUBJECT = "bench-dpo"

RUN_UPDATE_SQL = RUNS.update_sql("run_id") + " AND tenant_id = %(tenant_id)s"
"""The statement ``PostgresRuns.save`` sends."""
LOG_INSERT_SQL = RETENTION_LOG.insert_sql(on_conflict_nothing=True)
"""The statement ``PostgresRetention.append_log`` sends."""
FIRST_STEPS = ("crypto_erase_audits", "delete_checkpoints", "redact_run")
LATER_STEPS = ("clean_artifacts", "econ_erase_skipped")
NEWLY_ERASED = {
    "crypto_erase_audits": RECORDS_PER_RUN,
    "delete_checkpoints": 1,
    "redact_run": 1,
    "clean_artifacts": 0,
    "econ_erase_skipped": 0,
}
"""What each step's log line counts for one bench run (no approvals, no stored artifacts)."""
Chain = tuple[Run, list[NodeAuditRecord]]


# -- the server and its databases ---------------------------------------------------------------


def describe_server(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
            for name in ("server_version", "fsync", "synchronous_commit", "shared_buffers")
        }
    print(
        f"PostgreSQL {settings['server_version']}, fsync={settings['fsync']}, "
        f"synchronous_commit={settings['synchronous_commit']}, "
        f"shared_buffers={settings['shared_buffers']}; {load_note()}"
    )


# -- 1. the data ------------------------------------------------------------------------------------


def run_id_of(index: int) -> str:
    return f"run-{index:08d}"


def make_run(index: int, run_id: str, updated_at: datetime) -> Run:
    """A terminal run holding personal data in its state, output, metadata and error."""
    failed = index % 10 == 9
    email = f"customer{index}@example.com"
    return Run(
        run_id=run_id,
        tenant_id=TENANT,
        deployment_ref=DEPLOYMENT,
        graph_version_ref="orders@1",
        thread_id=run_id,
        status=RunStatus.FAILED if failed else RunStatus.COMPLETED,
        created_at=updated_at - timedelta(seconds=30),
        updated_at=updated_at,
        state={"order": f"A-{index}", "email": email, "amount_cents": 1299 + index % 50},
        steps=RECORDS_PER_RUN,
        attempts=RECORDS_PER_RUN,
        failure_state=(
            FailureState(reason="approval_rejected", node_id="review", message=f"{email} refused")
            if failed
            else None
        ),
        output=None if failed else {"receipt": f"R-{index}", "email": email},
        metadata={"customer": {"name": "Zoë Ândersen", "email": email}},
        artifacts=(f"{TENANT}/{run_id}/receipt.pdf",),
        error={"message": f"card of {email} declined"} if failed else None,
    )


def make_records(run: Run) -> list[NodeAuditRecord]:
    """The run's chain: five signed version 2 records with personal data in their snapshots."""
    records: list[NodeAuditRecord] = []
    email = run.state["email"]
    for attempt in range(1, RECORDS_PER_RUN + 1):
        records.append(
            seal(
                previous_record_digest=records[-1].record_digest if records else None,
                signer=SIGNER,
                created_at=run.created_at + timedelta(seconds=attempt),
                audit_id=f"{run.run_id}-a{attempt}",
                run_id=run.run_id,
                tenant_id=TENANT,
                deployment_ref=DEPLOYMENT,
                graph_version_ref=run.graph_version_ref,
                node_id=("classify", "charge", "review", "notify", "done")[attempt - 1],
                attempt=attempt,
                status=AttemptStatus.SUCCEEDED,
                input_snapshot={"order": run.state["order"], "customer": {"email": email}},
                output_snapshot={
                    "ok": True,
                    "artifact_key": f"{TENANT}/{run.run_id}/step-{attempt}.json",
                },
                execution_metadata={"join_key": f"{run.run_id}:{attempt}", "provider": "demo"},
                stdout=f"processed order for {email}",
                tool_calls=[{"tool": "lookup", "arguments": {"email": email}}],
            )
        )
    return records


def insert_runs(url: str, runs: list[Chain]) -> None:
    """Bulk-insert runs, their records and chain heads, ``INSERT_CHUNK`` runs per transaction."""
    heads_sql = "INSERT INTO ecp_audit_heads (run_id, attempt, record_digest) VALUES (%s, %s, %s)"
    with psycopg.connect(url) as conn, conn.cursor() as cursor:
        for lo in range(0, len(runs), INSERT_CHUNK):
            chunk = runs[lo : lo + INSERT_CHUNK]
            cursor.executemany(RUNS.insert_sql(), [RUNS.params(run) for run, _ in chunk])
            cursor.executemany(
                AUDIT.insert_sql(), [AUDIT.params(r) for _, records in chunk for r in records]
            )
            cursor.executemany(
                heads_sql,
                [(run.run_id, len(rs), rs[-1].record_digest) for run, rs in chunk],
            )
            conn.commit()


def build(url: str, count: int) -> tuple[list[Chain], Run]:
    """Make and insert ``count`` expired runs and one probe run that is not expired."""
    began = time.perf_counter()
    runs = [
        (run, make_records(run))
        for run in (
            make_run(i, run_id_of(i), START + timedelta(milliseconds=i)) for i in range(count)
        )
    ]
    probe = make_run(count, "probe-run", NOW - timedelta(seconds=60))
    runs.append((probe, make_records(probe)))
    sealed = time.perf_counter()
    insert_runs(url, runs)
    inserted = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
    records = (count + 1) * RECORDS_PER_RUN
    print(
        f"  {count + 1:,} runs, {records:,} audit records: sealed in {sealed - began:.1f} s, "
        f"inserted in {inserted - sealed:.1f} s "
        f"({records / (inserted - sealed):,.0f} records/s), vacuumed in "
        f"{time.perf_counter() - inserted:.1f} s"
    )
    return runs[:-1], probe


# -- 2 and 3. the sweep and its baseline ----------------------------------------------------------


def ecp_on(store: PostgresStore, clock: FixedClock) -> Ecp:
    return Ecp.build(
        store.unit_of_work,
        signer=SIGNER,
        clock=clock,
        ids=UuidV7Factory(),
        retention=RetentionSettings(artifacts=MemoryArtifacts()),
    )


def log_params(ids: UuidV7Factory, run_id: str, steps: tuple[str, ...]) -> list[dict[str, Any]]:
    return [
        RETENTION_LOG.params(
            RetentionAuditEntry(
                entry_id=ids.new_id(),
                tenant_id=TENANT,
                run_id=run_id,
                step=step,
                status=ErasureStepStatus.SKIPPED
                if step == "econ_erase_skipped"
                else ErasureStepStatus.DONE,
                newly_erased=NEWLY_ERASED[step],
                reason="run_ttl",
                trigger="purge",
                occurred_at=NOW,
                detail={},
            )
        )
        for step in steps
    ]


@dataclass
class Replay:
    """The write statements of one erasure, with their parameters, ready to send."""

    audits: list[dict[str, Any]]
    runs: list[dict[str, Any]]
    first_log: list[dict[str, Any]]
    later_log: list[dict[str, Any]]


def replay_of(run: Run, records: list[NodeAuditRecord], ids: UuidV7Factory) -> Replay:
    """What ``RunEraser.erase`` writes for ``run`` and its stored ``records``."""
    cleared = attrs.evolve(run, state={}, paused=None, approved_action=None)
    failure = None if run.failure_state is None else attrs.evolve(run.failure_state, message=None)
    redacted = attrs.evolve(
        cleared,
        output=None,
        artifacts=None,
        metadata=None,
        error=None,
        failure_state=failure,
        erased_at=NOW,
    )
    return Replay(
        audits=[AUDIT.params(crypto_erase(r, "run_ttl", NOW)) for r in records],
        runs=[RUNS.params(cleared), RUNS.params(redacted)],
        first_log=log_params(ids, run.run_id, FIRST_STEPS),
        later_log=log_params(ids, run.run_id, LATER_STEPS),
    )


def send(conn: psycopg.Connection[Any], replays: list[Replay]) -> None:
    """Send the erasures' writes, one statement at a time, committing like the erasure does."""
    for replay in replays:
        for params in replay.audits:  # as PostgresAudit.store_erasure sends them
            conn.execute(ERASURE_SQL, params)
            conn.execute(DROP_SALT_SQL, (params["audit_id"],))
        for params in replay.runs:
            conn.execute(RUN_UPDATE_SQL, params)
        for params in replay.first_log:
            conn.execute(LOG_INSERT_SQL, params)
        conn.commit()
        for params in replay.later_log:
            conn.execute(LOG_INSERT_SQL, params)
        conn.commit()


def sweep_and_replay(
    ecp: Ecp, baseline_url: str, runs: list[Chain], deadline: float
) -> tuple[Timing, Timing]:
    """Alternate one sweep pass and the baseline's writes for the same runs; time both."""
    sweep, plain = Timing(), Timing()
    ids = UuidV7Factory()
    with psycopg.connect(baseline_url) as conn:
        warm_up = make_run(-1, "warm-up", START)  # not in the copy: the statements match nothing
        send(conn, [replay_of(warm_up, make_records(warm_up), ids)])
        for number, lo in enumerate(range(0, len(runs), PURGE_BATCH)):
            batch = runs[lo : lo + PURGE_BATCH]
            replays = [replay_of(run, records, ids) for run, records in batch]

            def do_sweep(batch: list[Chain] = batch) -> None:
                report = ecp.retention.sweep()
                if report.failures or report.runs_erased != len(batch):
                    raise SystemExit(f"sweep pass erased {report}, expected {len(batch)} runs")

            def do_plain(replays: list[Replay] = replays) -> None:
                send(conn, replays)

            steps: list[tuple[Timing, Callable[[], None]]] = [(sweep, do_sweep), (plain, do_plain)]
            for timing, step in steps if number % 2 == 0 else steps[::-1]:
                began = time.perf_counter()
                step()
                timing.rounds.append((len(batch), time.perf_counter() - began))
            done = lo + len(batch)
            if done < len(runs) and time.perf_counter() > deadline:
                print(f"  (time budget spent: erased {done:,} of {len(runs):,} runs)")
                break
    return sweep, plain


# -- the statements of one erasure ------------------------------------------------------------------


def erasure_statements(ecp: Ecp, probe: Run) -> None:
    """Print what one erasure (explicit, of the probe run: the purge's path) sends, by kind."""
    actor = ActorIdentity(subject=ADMIN_SUBJECT, auth_method=AuthMethod.BEARER, tenant_id=TENANT)
    with statements_seen() as seen:
        ecp.retention.request_erasure(actor, ErasureRequest(run_id=probe.run_id, reason="bench"))
    kinds: dict[str, int] = {}
    for sql in seen:
        kinds[statement_kind(sql)] = kinds.get(statement_kind(sql), 0) + 1
    commits = kinds.get("COMMIT", 0)
    print(
        f"\nstatements of one erasure ({RECORDS_PER_RUN} audit records, no approvals): "
        f"{len(seen) - commits} statements and {commits} commits"
    )
    for kind, number in sorted(kinds.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {number:3d}  {kind}")
    writes = RECORDS_PER_RUN + 2 + len(FIRST_STEPS) + len(LATER_STEPS)
    print(f"  (the baseline sends the {writes} writes among them and the 2 commits)")


# -- checks ---------------------------------------------------------------------------------------


def check(store: PostgresStore, ecp: Ecp, erased: list[Run], label: str) -> None:
    """Every run erased with all its records and log lines; a sample of chains verifies."""
    ids = [run.run_id for run in erased]
    with psycopg.connect(store.url) as conn:
        runs_done, records_done, log_lines = conn.execute(
            "SELECT (SELECT count(*) FROM ecp_runs WHERE run_id = ANY(%(ids)s)"
            "          AND erased_at IS NOT NULL AND state = '{}'::jsonb AND metadata IS NULL),"
            "       (SELECT count(*) FROM ecp_audit_records WHERE run_id = ANY(%(ids)s)"
            "          AND erased AND input_snapshot IS NULL AND stdout IS NULL),"
            "       (SELECT count(*) FROM ecp_retention_audit_log WHERE run_id = ANY(%(ids)s))",
            {"ids": ids},
        ).fetchone()  # type: ignore[misc]
    steps = len(FIRST_STEPS) + len(LATER_STEPS)
    expected = (len(ids), len(ids) * RECORDS_PER_RUN, len(ids) * steps)
    if (runs_done, records_done, log_lines) != expected:
        raise SystemExit(
            f"{label}: erased runs, records, log lines {(runs_done, records_done, log_lines)}, "
            f"expected {expected}"
        )
    sample = random.Random(7).sample(ids, min(SAMPLE, len(ids)))
    for run_id in sample:
        result = ecp.audit.verify_run(TENANT, run_id)
        if not (
            result.verified and result.signature_verified and result.record_count == RECORDS_PER_RUN
        ):
            raise SystemExit(f"{label}: the erased chain of {run_id} does not verify: {result}")
    print(
        f"  {label}: {runs_done:,} runs, {records_done:,} records and {log_lines:,} log lines "
        f"erased and written; {len(sample)} sampled erased chains verify (digests, signatures)"
    )


def same_rows(store: PostgresStore, copy_store: PostgresStore, erased: list[Run]) -> None:
    """The sweep and the baseline left the sampled runs and records in exactly the same state."""
    sample = random.Random(11).sample(erased, min(SAMPLE, len(erased)))
    for run in sample:
        with store.unit_of_work() as uow, copy_store.unit_of_work() as other:
            mine = (uow.runs.get(TENANT, run.run_id), uow.audit.for_run(TENANT, run.run_id))
            theirs = (other.runs.get(TENANT, run.run_id), other.audit.for_run(TENANT, run.run_id))
        if mine != theirs:
            raise SystemExit(f"the baseline did not write what the sweep wrote for {run.run_id}")
    print(f"  the baseline wrote exactly the sweep's rows for {len(sample)} sampled runs")


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--runs", type=int, default=10_000, help="terminal runs to erase (default 10000)"
    )
    parser.add_argument(
        "--budget", type=float, default=120.0, help="seconds for the timed part (default 120)"
    )
    args = parser.parse_args()
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    with server() as url:
        databases = Databases(url)
        try:
            source_name, source_url = databases.fresh("retention")
            describe_server(source_url)
            print(
                f"\n1. setup: {args.runs:,} terminal runs of {RECORDS_PER_RUN} signed audit "
                "records each, bulk-inserted"
            )
            runs, probe = build(source_url, args.runs)
            began = time.perf_counter()
            _, copy_url = databases.fresh("baseline", template=source_name)
            print(f"  copied for the baseline in {time.perf_counter() - began:.1f} s")

            clock = FixedClock(START)
            with (
                PostgresStore(source_url, max_size=2) as store,
                PostgresStore(copy_url, max_size=2) as copy_store,
            ):
                ecp = ecp_on(store, clock)
                ecp.retention.put_policy(
                    TENANT, RetentionPolicyRequest(audit_ttl_seconds=None, run_ttl_seconds=RUN_TTL)
                )
                clock.advance((NOW - START).total_seconds())
                print(
                    f"\n2-3. run TTL {RUN_TTL} s, clock {(NOW - START).total_seconds():,.0f} s on; "
                    f"sweep passes of up to {PURGE_BATCH} runs against the plain-psycopg baseline "
                    f"of the same writes; {load_note()}"
                )
                sweep, plain = sweep_and_replay(
                    ecp, copy_url, runs, time.perf_counter() + args.budget
                )
                records_per_s = sweep.rate * RECORDS_PER_RUN
                print(
                    f"  ecp.retention.sweep():     {sweep.rate:8,.0f} runs/s "
                    f"({records_per_s:9,.0f} audit records erased/s), "
                    f"{sweep.ms:6.3f} ms per run, {len(sweep.rounds)} passes, {sweep.seconds:.1f} s"
                )
                print(
                    f"  plain psycopg, its writes: {plain.rate:8,.0f} runs/s "
                    f"({plain.rate * RECORDS_PER_RUN:9,.0f} audit records/s), "
                    f"{plain.ms:6.3f} ms per run"
                )
                ratio = paired_ratio(sweep, plain)
                print(
                    f"  sweep / plain writes: {ratio:.2f} (median of paired rounds; "
                    f"{sweep.rate / plain.rate:.2f} overall)"
                )
                erasure_statements(ecp, probe)

                print("\nchecks")
                erased = [run for run, _ in runs[: sweep.count]]
                check(store, ecp, [*erased, probe], "sweep")
                check(copy_store, ecp_on(copy_store, clock), erased, "baseline copy")
                same_rows(store, copy_store, erased)
                if sweep.count == len(runs):
                    if ecp.retention.sweep().runs_erased != 0:
                        raise SystemExit("a further sweep erased runs again")
                    print("  a further sweep erases nothing")

            print("\nsummary")
            print(f"  runs erased/s by the sweep          {sweep.rate:10,.0f}")
            print(f"  audit records erased/s by the sweep {records_per_s:10,.0f}")
            print(f"  runs/s of the plain writes          {plain.rate:10,.0f}")
            print(f"  sweep / plain writes                {ratio:10.2f}")
            print(f"  ({load_note()} at the end: other processes' load makes the figures noisy)")
        finally:
            databases.drop_all()


if __name__ == "__main__":
    main()
