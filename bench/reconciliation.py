"""Provider-bill reconciliation on PostgreSQL: one report of 1,000 buckets over 50,000 events.

Run as ``python bench/reconciliation.py [--events N] [--days D] [--projects P] [--repeats K]
[--profile R]``. It prints figures and checks only that what it got is correct (the report equals
the one the in-memory reference computes from the same evidence, the HTTP answer equals the
in-process one, allocated + unreconciled = billed), never anything about timing. The database
server is ``ECP_BENCH_DATABASE_URL`` (a maintenance database on a server where this user may
create databases) when set, else an embedded PostgreSQL in a temporary directory; the database it
uses is fresh, migrated, and dropped at the end. The ECP app runs under uvicorn in a child process
of its own (this script run again with ``--serve``; access log off).

The data set (made in advance, deterministic): ``--events`` (50,000, the most one report may
reconcile) ``charge`` execution events of provider ``openai`` over ``--days`` (10) UTC days,
``--projects`` (25) projects and 4 models, in six workflow versions and 10,000 runs: 96 % measured,
2 % estimated, 2 % of unknown cost, 0.5 % without a run; 3 % of charges revised (some twice);
outcomes for 90 % of runs and a definition per version; plus 5,000 charges of another provider
in the same period (which the report must not read). The events are loaded with psycopg ``COPY``
(digests computed as ingestion would), outcomes and revisions through the adapter. The statement
has one bucket per (day, project, model): 1,000 buckets, billed around their measured cost.

Timed, in ``--repeats`` (7) rounds with a rotating order after a warm-up (medians):

1. ``GET /v1/reconciliation/provider-bills/openai/{id}/report`` through HTTP;
2. ``ReconciliationService.report`` in this process over ``PostgresStore`` (target < 1 s);
3. the adapter's statement read alone (the statement and its 1,000 bucket rows);
4. the adapter's ``provider_events`` alone (SQL, fetch and conversion to priced events);
5. the adapter's SQL alone, with the adapter's session settings: fetched as dict rows, and
   executed on the server only (``EXPLAIN ANALYZE`` without per-node timing, rows not sent);
6. the core alone on events fetched in advance: ``allocations`` + ``closure_state``, split into
   the event index, the overlap check and the per-bucket matching and allocation;
7. rendering the report as JSON (``unstructure`` + ``json.dumps``).

Then ``EXPLAIN ANALYZE`` of the SQL and a cProfile of ``--profile`` (3) service reports.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import itertools
import json
import pstats
import random
import statistics
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import httpx
import psycopg
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb

from _database import Databases, server
from _evidence import Evidence, load_note, ms
from _server import ecp_app, running_ecp, serve
from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeDefinitionRequest,
    OutcomeEvent,
    PredicateKind,
    SuccessPredicate,
    digest_of,
)
from ecp_core.reconciliation.matching import ProviderWindow, provider_events
from ecp_core.reconciliation.model import (
    METHOD_VERSION,
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
)
from ecp_core.reconciliation.rules import (
    EventIndex,
    allocate,
    allocations,
    closure_state,
    overlaps,
)
from ecp_core.reconciliation.service import MAX_RECONCILIATION_EVENTS
from ecp_core.system import SystemClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import unstructure
from ecp_http.server.auth import mint_token
from ecp_postgres import PostgresStore
from ecp_postgres.evidence import WORK_MEM
from ecp_postgres.reconciliation import PROVIDER_EVENTS

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecp_core.reconciliation.matching import PricedEvent

TENANT = "bench"
PROVIDER = "openai"
STATEMENT_ID = "openai-bench"
MODELS = ("gpt-4o", "gpt-4o-mini", "o3-mini", "text-embedding-3-small")
WORKFLOWS = (
    ("support-triage", "v1"),
    ("support-triage", "v2"),
    ("refunds", "v7"),
    ("refunds", "v8"),
    ("onboarding", "2026-10"),
    ("onboarding", "2026-11"),
)
RUNS = 10_000
OTHER_PROVIDER_EVENTS = 5_000
TARGET_SECONDS = 1.0
JWT_SECRET = "bench-" + "r" * 40
SIGNING_KEY = base64.b64encode(bytes(range(11, 43))).decode("ascii")
PROFILE_LINES = 22
ADMIN = ActorIdentity(subject="bench", auth_method=AuthMethod.BEARER, tenant_id=TENANT)
EXECUTIONS = "ecp_evidence_executions"
COLUMNS = (
    "tenant_id",
    "event_id",
    "digest",
    "workflow_id",
    "workflow_version",
    "occurred_at",
    "run_id",
    "attempt",
    "dimensions",
    "cost_usd",
    "cost_measurement",
    "cost_role",
    "charge_id",
    "metadata",
)
COPY_SQL = f"COPY {EXECUTIONS} ({', '.join(COLUMNS)}) FROM STDIN"
HTTP = "GET .../report (HTTP)"
SERVICE = "ReconciliationService.report"
ADAPTER = "adapter provider_events"
SQL = "its SQL alone (dict rows)"
SERVER = "its SQL on the server only"
STATEMENT = "statement read (adapter)"
CORE = "core allocations + closure"
RENDER = "unstructure + json.dumps"


# -- the data set ---------------------------------------------------------------------------------


def a_cost(rng: random.Random) -> tuple[Decimal | None, CostMeasurement]:
    roll = rng.random()
    if roll < 0.02:
        return None, CostMeasurement.UNMEASURED
    amount = Decimal(rng.randint(1, 50_000)).scaleb(-6)  # 0.000001 to 0.05 USD
    return amount, CostMeasurement.ESTIMATED if roll < 0.04 else CostMeasurement.MEASURED


def make_evidence(events: int, days: int, projects: int, now: datetime, seed: int = 11) -> Evidence:
    rng = random.Random(seed)
    start = (now - timedelta(days=days + 2)).replace(hour=0, minute=0, second=0, microsecond=0)
    evidence = Evidence(start=start, end=start + timedelta(days=days))
    runs = [(rng.choice(WORKFLOWS), f"run-{index:05d}") for index in range(RUNS)]

    def charge(index: int, provider: str) -> ExecutionEvent:
        (workflow_id, version), run_id = rng.choice(runs)
        cost, measurement = a_cost(rng)
        return ExecutionEvent(
            event_id=f"{provider}-{index:06d}",
            workflow_id=workflow_id,
            workflow_version=version,
            run_id=None if rng.random() < 0.005 else run_id,
            occurred_at=start + timedelta(microseconds=rng.randrange(days * 86_400 * 10**6)),
            attempt=1 if rng.random() < 0.9 else 2,
            cost_usd=cost,
            cost_measurement=measurement,
            cost_role=CostRole.CHARGE,
            charge_id=f"charge-{provider}-{index:06d}",
            metadata={
                "provider": provider,
                "model": rng.choice(MODELS),
                "project_id": f"proj_{rng.randrange(projects):02d}",
            },
        )

    evidence.executions = [charge(index, PROVIDER) for index in range(events)]
    evidence.executions += [charge(index, "anthropic") for index in range(OTHER_PROVIDER_EVENTS)]
    for event in rng.sample(evidence.executions[:events], events * 3 // 100):
        for number in range(1 if rng.random() < 0.8 else 2):
            cost, measurement = a_cost(rng)
            evidence.revisions.append(
                ChargeRevision(
                    event_id=f"revision-{len(evidence.revisions):06d}",
                    charge_id=event.charge_id or "",
                    revised_at=event.occurred_at + timedelta(hours=1 + number),
                    cost_usd=cost,
                    cost_measurement=measurement,
                )
            )
    for (workflow_id, version), run_id in runs:
        if rng.random() < 0.9:
            evidence.outcomes.append(
                OutcomeEvent(
                    event_id=f"outcome-{run_id}",
                    workflow_id=workflow_id,
                    workflow_version=version,
                    run_id=run_id,
                    outcome_type="done",
                    asserted_at=evidence.end,
                    value=rng.random() < 0.8,
                )
            )
    return evidence


def definitions(now: datetime) -> list[OutcomeDefinition]:
    predicate = SuccessPredicate(kind=PredicateKind.EQUALS, value=True)
    return [
        OutcomeDefinition(
            tenant_id=TENANT,
            workflow_id=workflow_id,
            workflow_version=version,
            outcome_type="done",
            predicate=predicate,
            digest=digest_of(predicate),
            created_at=now,
            created_by="bench",
        )
        for workflow_id, version in WORKFLOWS
    ]


def make_statement(
    evidence: Evidence, days: int, projects: int, seed: int = 13
) -> ProviderStatement:
    """One bucket per (day, project, model), billed 95 % to 110 % of its measured cost."""
    rng = random.Random(seed)
    measured: dict[tuple[int, str, str], Decimal] = {}
    for event in evidence.executions:
        metadata = event.metadata
        if (
            metadata["provider"] != PROVIDER
            or event.cost_measurement is not CostMeasurement.MEASURED
        ):
            continue
        key = (
            (event.occurred_at - evidence.start).days,
            str(metadata["project_id"]),
            str(metadata["model"]),
        )
        measured[key] = measured.get(key, Decimal(0)) + (event.cost_usd or Decimal(0))
    buckets = []
    for day, project, model in itertools.product(range(days), range(projects), MODELS):
        key = (day, f"proj_{project:02d}", model)
        amount = (
            measured.get(key, Decimal("0.01")) * Decimal(rng.randint(95, 110)) / 100
        ).quantize(Decimal("0.01"))
        buckets.append(
            ProviderBucket(
                bucket_id=f"{day:02d}/{key[1]}/{model}",
                period_start=evidence.start + timedelta(days=day),
                period_end=evidence.start + timedelta(days=day + 1),
                amount_usd=max(amount, Decimal("0.01")),
                model=model,
                provider_dimensions={"project_id": key[1]},
            )
        )
    return ProviderStatement(
        statement_id=STATEMENT_ID,
        provider=PROVIDER,
        period_start=evidence.start,
        period_end=evidence.end,
        currency=Currency.USD,
        billed_total_usd=sum((bucket.amount_usd for bucket in buckets), Decimal(0)),
        source_kind=SourceKind.COST_API,
        buckets=tuple(buckets),
    )


def copy_row(event: ExecutionEvent) -> tuple[Any, ...]:
    return (
        TENANT,
        event.event_id,
        digest_of(event),
        event.workflow_id,
        event.workflow_version,
        event.occurred_at,
        event.run_id,
        event.attempt,
        Jsonb(event.dimensions),
        event.cost_usd,
        str(event.cost_measurement),
        str(event.cost_role),
        event.charge_id,
        Jsonb(event.metadata),
    )


def load(url: str, store: PostgresStore, ecp: Ecp, evidence: Evidence) -> None:
    began = time.perf_counter()
    rows = [copy_row(event) for event in evidence.executions]
    digests = time.perf_counter() - began
    with psycopg.connect(url) as conn:
        with conn.cursor() as cursor, cursor.copy(COPY_SQL) as copy:
            for row in rows:
                copy.write_row(row)
        conn.commit()
        copied = time.perf_counter() - began - digests
        with store.unit_of_work() as uow:
            uow.evidence.add_outcomes(
                TENANT, [Digested(o, digest_of(o)) for o in evidence.outcomes]
            )
            uow.evidence.add_revisions(
                TENANT, [Digested(r, digest_of(r)) for r in evidence.revisions]
            )
            uow.commit()
        for workflow_id, version in WORKFLOWS:
            ecp.evidence.define_outcome(
                ADMIN,
                OutcomeDefinitionRequest(
                    workflow_id=workflow_id,
                    workflow_version=version,
                    outcome_type="done",
                    predicate=SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
                ),
            )
        conn.autocommit = True
        for table in (EXECUTIONS, "ecp_evidence_outcomes", "ecp_evidence_revisions"):
            conn.execute(f"VACUUM ANALYZE {table}")
    print(
        f"  {len(rows):,} execution events: digests {digests:.1f} s, COPY {copied:.1f} s; "
        f"{len(evidence.outcomes):,} outcomes and {len(evidence.revisions):,} revisions through "
        f"the adapter; all loaded in {time.perf_counter() - began:.1f} s"
    )


# -- the timed parts ------------------------------------------------------------------------------


def window(statement: ProviderStatement) -> ProviderWindow:
    return ProviderWindow(
        provider=PROVIDER,
        start=statement.period_start,
        end=statement.period_end,
        as_of=datetime.now(UTC),
    )


def whole_window(conn: psycopg.Connection[Any]) -> None:
    """The adapter's settings for its whole-window statements (no nested loops, more work_mem),
    for the current transaction."""
    conn.execute(
        "SELECT set_config('enable_nestloop', 'off', true), set_config('work_mem', %s, true)",
        (WORK_MEM,),
    )


def sql_params(statement: ProviderStatement) -> dict[str, Any]:
    asked = window(statement)
    return {
        "tenant": TENANT,
        "provider": PROVIDER,
        "start": asked.start,
        "end": asked.end,
        "as_of": asked.as_of,
        "limit": MAX_RECONCILIATION_EVENTS + 1,
    }


def sql_alone(conn: psycopg.Connection[Any], statement: ProviderStatement) -> int:
    """The adapter's statement, its rows fetched as the adapter fetches them."""
    whole_window(conn)
    with conn.cursor(row_factory=dict_row) as cursor:
        rows = cursor.execute(PROVIDER_EVENTS, sql_params(statement)).fetchall()
    conn.commit()
    return len(rows)


def sql_on_server(conn: psycopg.Connection[Any], statement: ProviderStatement) -> float:
    """The same statement executed in full on the server, its rows not sent (EXPLAIN ANALYZE
    without per-node timing); returns the server's own execution time in seconds."""
    whole_window(conn)
    rows = conn.execute(
        "EXPLAIN (ANALYZE, TIMING OFF, COSTS OFF) " + PROVIDER_EVENTS, sql_params(statement)
    ).fetchall()
    conn.commit()
    found = [str(row[0]) for row in rows if str(row[0]).startswith("Execution Time")]
    return float(found[0].split()[2]) / 1e3 if found else 0.0


def core_parts(statement: ProviderStatement, events: list[PricedEvent]) -> dict[str, float]:
    """The core's matching and allocation, by part (the same steps as ``allocations``)."""
    t0 = time.perf_counter()
    index = EventIndex(events, statement.buckets)
    t1 = time.perf_counter()
    overlapping = overlaps(statement.buckets)
    t2 = time.perf_counter()
    for bucket in sorted(statement.buckets, key=lambda b: b.bucket_id):
        allocate(bucket, index.matches(bucket), overlapping.get(bucket.bucket_id, []))
    t3 = time.perf_counter()
    return {
        "event index": t1 - t0,
        "overlap check": t2 - t1,
        "match + allocate per bucket": t3 - t2,
    }


def contenders(
    client: httpx.Client,
    ecp: Ecp,
    store: PostgresStore,
    conn: psycopg.Connection[Any],
    *,
    statement: ProviderStatement,
    fetched: list[PricedEvent],
    answers: dict[str, Any],
) -> list[tuple[str, Callable[[], Any]]]:
    """What is timed, by name; HTTP's and the service's answers are kept in ``answers``."""
    path = f"/v1/reconciliation/provider-bills/{PROVIDER}/{STATEMENT_ID}/report"
    in_process = ecp.reconciliation.report(TENANT, PROVIDER, STATEMENT_ID)

    def over_http() -> None:
        response = client.get(path)
        if response.status_code != 200:
            raise SystemExit(f"GET {path}: {response.status_code} {response.text[:2000]}")
        answers["http"] = response.json()

    def service() -> None:
        answers["service"] = ecp.reconciliation.report(TENANT, PROVIDER, STATEMENT_ID)

    def adapter() -> None:
        with store.unit_of_work() as uow:
            uow.evidence.provider_events(
                TENANT, window(statement), limit=MAX_RECONCILIATION_EVENTS + 1
            )

    def statement_read() -> None:
        with store.unit_of_work() as uow:
            uow.reconciliation.statement(TENANT, PROVIDER, STATEMENT_ID)

    def core() -> None:
        found, totals = allocations(statement, fetched)
        closure_state(found, totals)

    return [
        (HTTP, over_http),
        (SERVICE, service),
        (STATEMENT, statement_read),
        (ADAPTER, adapter),
        (SQL, lambda: sql_alone(conn, statement)),
        (SERVER, lambda: sql_on_server(conn, statement)),
        (CORE, core),
        (RENDER, lambda: json.dumps(unstructure(in_process))),
    ]


def bench(
    client: httpx.Client,
    ecp: Ecp,
    store: PostgresStore,
    conn: psycopg.Connection[Any],
    *,
    statement: ProviderStatement,
    repeats: int,
) -> tuple[dict[str, list[float]], dict[str, list[float]], dict[str, Any]]:
    with store.unit_of_work() as uow:
        fetched = uow.evidence.provider_events(
            TENANT, window(statement), limit=MAX_RECONCILIATION_EVENTS + 1
        )
    answers: dict[str, Any] = {"events": fetched}
    timed = contenders(
        client, ecp, store, conn, statement=statement, fetched=fetched, answers=answers
    )
    for _, run in timed:  # warm-up: plans, pools, caches
        run()
    seconds: dict[str, list[float]] = {name: [] for name, _ in timed}
    parts: dict[str, list[float]] = {}
    for number in range(repeats):
        shift = number % len(timed)
        for name, run in timed[shift:] + timed[:shift]:
            began = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - began)
        for name, value in core_parts(statement, fetched).items():
            parts.setdefault(name, []).append(value)
    return seconds, parts, answers


def explain(conn: psycopg.Connection[Any], statement: ProviderStatement) -> str:
    whole_window(conn)
    rows = conn.execute(
        "EXPLAIN (ANALYZE, BUFFERS) " + PROVIDER_EVENTS, sql_params(statement)
    ).fetchall()
    conn.commit()
    lines = [str(row[0]) for row in rows]
    nodes = [line for line in lines if "->" in line or not line.startswith(" ")][:18]
    times = [line for line in lines if line.startswith(("Planning Time", "Execution Time"))]
    return "\n".join(f"    {line[:150]}" for line in [*nodes, *times])


def profile(ecp: Ecp, runs: int) -> str:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(runs):
        ecp.reconciliation.report(TENANT, PROVIDER, STATEMENT_ID)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(PROFILE_LINES)
    table = out.getvalue()
    table = table[table.index("   ncalls") :] if "   ncalls" in table else table
    lines = [f"    {line.rstrip()[:150]}" for line in table.strip().splitlines()]
    return "\n".join(
        [f"\n  cProfile of {runs} service reports, top {PROFILE_LINES} by own time:", *lines]
    )


# -- checks ---------------------------------------------------------------------------------------


def without_as_of(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if key != "as_of"}


def check_answers(
    answers: dict[str, Any], statement: ProviderStatement, evidence: Evidence, now: datetime
) -> dict[str, Any]:
    """The service's report equals HTTP's and the in-memory reference's; totals add up."""
    mine = unstructure(answers["service"])
    if without_as_of(answers["http"]) != without_as_of(mine):
        raise SystemExit("the HTTP report differs from the in-process one")
    asked = ProviderWindow(
        provider=PROVIDER, start=statement.period_start, end=statement.period_end, as_of=now
    )
    reference = provider_events(
        asked, evidence.executions, evidence.outcomes, evidence.revisions, definitions(now)
    )
    found, totals = allocations(statement, reference)
    expected = {
        "totals": unstructure(totals),
        "allocations": unstructure(found),
        "closure_state": str(closure_state(found, totals)),
    }
    if {key: mine[key] for key in expected} != expected:
        raise SystemExit("the report differs from the in-memory reference's")
    figures = answers["service"].totals
    if figures.allocated_billed_usd + figures.unreconciled_billed_usd != figures.billed_total_usd:
        raise SystemExit("allocated + unreconciled != billed")
    if mine["method_version"] != METHOD_VERSION:
        raise SystemExit(f"method_version {mine['method_version']}")
    return mine


def print_figures(
    seconds: dict[str, list[float]],
    parts: dict[str, list[float]],
    report: dict[str, Any],
    events: int,
) -> float:
    statuses: dict[str, int] = {}
    for allocation in report["allocations"]:
        statuses[allocation["status"]] = statuses.get(allocation["status"], 0) + 1
    groups = sum(len(allocation["groups"]) for allocation in report["allocations"])
    totals = report["totals"]
    print(
        f"  the report: {len(report['allocations']):,} buckets ({statuses}), {groups:,} groups, "
        f"{events:,} provider events; closure {report['closure_state']}; billed "
        f"{totals['billed_total_usd']}, allocated {totals['allocated_billed_usd']}, telemetry "
        f"{totals['telemetry_measured_usd']} USD"
    )
    median = {name: statistics.median(values) for name, values in seconds.items()}
    for name, values in seconds.items():
        print(
            f"  {name:<30} median {ms(median[name])}  (min {min(values) * 1e3:.1f}, "
            f"max {max(values) * 1e3:.1f} ms)"
        )
    print("  where the service's time goes (medians):")
    rows = [
        ("statement read (1 + buckets rows)", median[STATEMENT]),
        ("provider-events SQL on the server", median[SERVER]),
        ("its rows sent, fetched, decoded", median[SQL] - median[SERVER]),
        ("rows -> priced events (adapter)", median[ADAPTER] - median[SQL]),
        ("core: match + allocate + totals", median[CORE]),
        (
            "rest (pool, transactions, checks)",
            median[SERVICE] - median[STATEMENT] - median[ADAPTER] - median[CORE],
        ),
    ]
    for name, value in rows:
        print(f"    {name:<36} {ms(value)}  {100 * value / median[SERVICE]:5.1f} %")
    print("  the core's parts (medians):")
    for name, values in parts.items():
        print(f"    {name:<36} {ms(statistics.median(values))}")
    print(
        f"  HTTP on top of the service (rendering, JSON, transport): "
        f"{ms(median[HTTP] - median[SERVICE])} (rendering alone {ms(median[RENDER]).strip()})"
    )
    return median[SERVICE]


# -- main -----------------------------------------------------------------------------------------


def main() -> None:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events",
        type=int,
        default=MAX_RECONCILIATION_EVENTS,
        help=f"provider events (default and at most {MAX_RECONCILIATION_EVENTS})",
    )
    parser.add_argument("--days", type=int, default=10, help="days of the statement (10)")
    parser.add_argument("--projects", type=int, default=25, help="projects (25); 4 models each")
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds (default 7)")
    parser.add_argument("--profile", type=int, default=3, help="profiled reports (3; 0: none)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    if not 1 <= args.events <= MAX_RECONCILIATION_EVENTS:
        parser.error(f"--events must be between 1 and {MAX_RECONCILIATION_EVENTS}")

    whole = time.perf_counter()
    now = datetime.now(UTC)
    print(f"reconciliation benchmark; {load_note()}")
    began = time.perf_counter()
    evidence = make_evidence(args.events, args.days, args.projects, now)
    statement = make_statement(evidence, args.days, args.projects)
    print(
        f"data set: {args.events:,} {PROVIDER} charges and {OTHER_PROVIDER_EVENTS:,} of another "
        f"provider over {args.days} days, {RUNS:,} runs, {len(evidence.outcomes):,} outcomes, "
        f"{len(evidence.revisions):,} charge revisions; a statement of "
        f"{len(statement.buckets):,} buckets, {statement.billed_total_usd} USD "
        f"(made in {time.perf_counter() - began:.1f} s)"
    )
    gc.freeze()  # the data set lives all along: keep it out of the cyclic GC's full collections
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["analyst"], ttl_seconds=3600)
    with server() as maintenance:
        databases = Databases(maintenance)
        try:
            _, url = databases.fresh("reconciliation")
            with (
                PostgresStore(url, max_size=2) as store,
                psycopg.connect(url) as conn,
            ):
                ecp = Ecp.build(store.unit_of_work, signer=None, clock=SystemClock())
                print("\nsetup (not timed as a figure)")
                load(url, store, ecp, evidence)
                began = time.perf_counter()
                ecp.reconciliation.import_statement(ADMIN, statement)
                imported = time.perf_counter() - began
                began = time.perf_counter()
                _, created = ecp.reconciliation.import_statement(ADMIN, statement)
                replayed = time.perf_counter() - began
                assert not created  # noqa: S101 - the replay is a replay
                print(
                    f"  import of the {len(statement.buckets):,}-bucket statement "
                    f"{ms(imported).strip()}, its exact replay {ms(replayed).strip()}"
                )
                with (
                    running_ecp(
                        __file__, database_url=url, jwt_secret=JWT_SECRET, signing_key=SIGNING_KEY
                    ) as child,
                    httpx.Client(
                        base_url=child.base_url,
                        timeout=120.0,
                        headers={"Authorization": f"Bearer {token}"},
                    ) as client,
                ):
                    print(
                        f"\nreport over {args.events:,} events and {len(statement.buckets):,} "
                        f"buckets, {args.repeats} rounds with a rotating order after a warm-up; "
                        f"{load_note()}"
                    )
                    seconds, parts, answers = bench(
                        client, ecp, store, conn, statement=statement, repeats=args.repeats
                    )
                report = check_answers(answers, statement, evidence, datetime.now(UTC))
                median = print_figures(seconds, parts, report, len(answers["events"]))
                print(
                    "  checks: the report equals the in-memory reference's, HTTP equals "
                    "in-process, allocated + unreconciled = billed"
                )
                print(
                    f"\n  EXPLAIN ANALYZE of the provider-events SQL:\n{explain(conn, statement)}"
                )
                if args.profile:
                    print(profile(ecp, args.profile))
        finally:
            databases.drop_all()

    met = "met" if median < TARGET_SECONDS else "NOT met"
    print("\nsummary")
    print(
        f"  report in process (service), median {ms(median)}  (target < {TARGET_SECONDS:.0f} s: "
        f"{met})"
    )
    print(f"  report through HTTP, median         {ms(statistics.median(seconds[HTTP]))}")
    print(
        f"  SQL alone / core alone, medians     {ms(statistics.median(seconds[SQL])).strip()} / "
        f"{ms(statistics.median(seconds[CORE])).strip()}"
    )
    print(
        f"  ({load_note()} at the end; the whole script took {time.perf_counter() - whole:.0f} s)"
    )


if __name__ == "__main__":
    main()
