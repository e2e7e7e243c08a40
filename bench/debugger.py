"""Economic debugger on PostgreSQL: report latency over 50,000 events, ingestion through HTTP.

Run as ``python bench/debugger.py [--events N] [--runs M] [--repeats K] [--rounds R]``. It prints
figures and checks only that what it got is correct (every batch stored, the COPY baseline wrote
exactly the rows the API wrote, the report agrees with an independent SQL aggregate and with the
reference tally), never anything about timing. The database server is
``ECP_BENCH_DATABASE_URL`` (a maintenance database on a server where this user may create
databases) when set, else an embedded PostgreSQL in a temporary directory; the database it uses
is fresh, migrated, and dropped at the end. The ECP app runs under uvicorn in a child process of
its own (this script run again with ``--serve``; access log off).

The data set (made in advance, deterministic): ``--events`` execution events (50,000, the most
one debugger request aggregates) of one workflow across four versions in 14 daily windows:
``--runs`` runs (10,000) of 3 to 7 events over five steps, attempts 1 to 3 (retries of the step
before), 3 % of charges with an unknown cost, one run in ten closed by a ``summary`` event, 0.5 %
of events with no run; ``subject_id`` among 200 customers and typed dimensions (``tier`` a
string, ``priority`` an integer). Charge revisions for 3 % of charges (some twice, some to an
unknown cost); outcome assertions for 92 % of runs (10 % inferred, 5 % provisional, 5 % re-asserted
later, 3 % with a future-dated assertion that must not count) plus assertions of an undefined
type; an outcome definition per version (``equals`` true on ``resolved`` for v1 and v2,
``at_least`` 4 on ``csat`` for v3 and v4).

1. Ingestion: the execution events as JSON batches of 1,000 (``POST /v1/evidence/executions``,
   one client, keep-alive, bodies serialised in advance) against psycopg ``COPY`` of the same
   rows (digests computed in advance) into the same table, once per 1,000 rows with a commit
   each (the API's transaction size) and once for all rows. The table is truncated before each
   phase; phases run in ``--rounds`` rounds (3) with a rotating order, and every phase must leave
   exactly the same rows. Target HTTP / COPY per 1,000 rows >= 0.5 (ADR 0060). It prints the
   server's CPU per event too. Then where the server's time goes: the request path replayed in
   this process for the same batches (rows COPYed while later events are read), the reader
   alone (orjson parse, checks, rows and digests), the adapter alone (rows read before, COPY,
   commit) and what overlapping the two saves; ``json.loads``, ``orjson.loads`` and the generic
   reader (``parse_json_text``, cattrs, rules, ``digest_of``) for comparison; and a batch of
   exact replays and one of half replays (the merge through a staging table).
2. ``GET /v1/debugger/report`` over the whole window (all events; timeline by day, cohorts by
   subject, breakage by step) through HTTP and ``Ecp.debugger.report`` in this process over
   ``PostgresStore``, the adapter's ``count_executions`` + ``tally`` alone, and one hand-written
   SQL aggregate of the same rows (latest revision prices a charge; the latest non-future
   assertion of the defined type judges a run) by version and day: ``--repeats`` (7) interleaved
   rounds after a warm-up, medians. Target report / hand SQL <= 2.
"""

from __future__ import annotations

import argparse
import base64
import cProfile
import gc
import io
import json
import pstats
import random
import statistics
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import httpx
import orjson
import psycopg
from psycopg.types.json import Jsonb

from _database import Databases, server
from _evidence import Evidence, load_note, ms
from _server import ecp_app, running_ecp, serve
from _statements import cursor_statements_seen, statement_kind
from ecp_core import Ecp
from ecp_core.debugger.model import MAX_WINDOW_EVENTS, Accounting, DebuggerQuery
from ecp_core.debugger.service import REPORT
from ecp_core.debugger.tally import Grouping, TallyQuery, tally
from ecp_core.evidence.model import (
    MAX_BATCH,
    ChargeRevision,
    CostRole,
    ExecutionBatch,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    SuccessPredicate,
    digest_of,
)
from ecp_core.evidence.reading import ExecutionBody
from ecp_core.evidence.rules import checked, execution_problems
from ecp_core.json_text import parse_json_text
from ecp_core.system import SystemClock
from ecp_core.types import CostMeasurement
from ecp_core.wire import format_timestamp, structure, unstructure
from ecp_http.server.auth import mint_token
from ecp_postgres import PostgresStore

if TYPE_CHECKING:
    from collections.abc import Callable

TENANT = "bench"
WORKFLOW = "support-triage"
VERSIONS = ("v1", "v2", "v3", "v4")
VERSION_WEIGHTS = (0.2, 0.3, 0.3, 0.2)
STEPS = ("classify", "retrieve", "draft", "review", "send")
TIERS = ("free", "pro", "enterprise")
MODELS = ("gpt-4o-mini", "claude-haiku", "llama-3-70b")
SUBJECTS = 200
DAYS = 14
DEFINITIONS: dict[str, tuple[str, dict[str, Any]]] = {
    "v1": ("resolved", {"kind": "equals", "value": True}),
    "v2": ("resolved", {"kind": "equals", "value": True}),
    "v3": ("csat", {"kind": "at_least", "threshold": "4"}),
    "v4": ("csat", {"kind": "at_least", "threshold": "4"}),
}
JWT_SECRET = "bench-" + "j" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
WARM_TENANT = "bench-warm-up"
WARM_BATCHES = 2
PROFILE_LINES = 25
HTTP_PHASE = "HTTP, batches of 1,000"
COPY_BATCHED = "COPY, per 1,000 rows"
COPY_ALL = "COPY, all rows at once"
REPORT_TARGET = 2.0
INGEST_TARGET = 0.5
EXECUTIONS = "ecp_evidence_executions"
COLUMNS = (
    "tenant_id",
    "event_id",
    "digest",
    "workflow_id",
    "workflow_version",
    "occurred_at",
    "run_id",
    "step_id",
    "attempt",
    "subject_id",
    "dimensions",
    "cost_usd",
    "cost_measurement",
    "cost_role",
    "charge_id",
    "source_window_id",
    "join_key",
    "metadata",
)
COPY_SQL = f"COPY {EXECUTIONS} ({', '.join(COLUMNS)}) FROM STDIN"
FINGERPRINT_SQL = (
    f"SELECT count(*), md5(string_agg(e::text, '|' ORDER BY event_id)) FROM {EXECUTIONS} e"  # noqa: S608
)

# One aggregate of the window by version and UTC day, written by hand: a charge is priced by its
# latest revision (else its own cost); a run is judged by the latest non-future assertion of its
# version's defined outcome type (equals: jsonb equality; at_least: a number >= the threshold).
HAND_SQL = """
WITH deciding AS (
    SELECT DISTINCT ON (o.workflow_version, o.run_id)
           o.workflow_version, o.run_id, o.value, d.predicate
      FROM ecp_evidence_outcomes o
      JOIN ecp_evidence_definitions d
        ON d.tenant_id = o.tenant_id AND d.workflow_id = o.workflow_id
       AND d.workflow_version = o.workflow_version AND d.outcome_type = o.outcome_type
     WHERE o.tenant_id = %(tenant)s AND o.workflow_id = %(workflow)s AND o.asserted_at <= now()
     ORDER BY o.workflow_version, o.run_id, o.asserted_at DESC, o.event_id DESC
), verdicts AS (
    SELECT workflow_version, run_id,
           CASE WHEN predicate->>'kind' = 'equals' THEN value = (predicate->'value')::jsonb
                WHEN jsonb_typeof(value) = 'number'
                THEN (value #>> '{}')::numeric >= (predicate->>'threshold')::numeric
           END AS success
      FROM deciding
), prices AS (
    SELECT DISTINCT ON (charge_id) charge_id, cost_usd
      FROM ecp_evidence_revisions
     WHERE tenant_id = %(tenant)s
     ORDER BY charge_id, revised_at DESC, event_id DESC
), priced AS (
    SELECT e.workflow_version, e.occurred_at, e.run_id, e.cost_role, v.success,
           CASE WHEN p.charge_id IS NULL THEN e.cost_usd ELSE p.cost_usd END AS cost
      FROM ecp_evidence_executions e
      LEFT JOIN prices p ON p.charge_id = e.charge_id
      LEFT JOIN verdicts v ON v.workflow_version = e.workflow_version AND v.run_id = e.run_id
     WHERE e.tenant_id = %(tenant)s AND e.workflow_id = %(workflow)s
       AND e.occurred_at >= %(start)s AND e.occurred_at < %(end)s
)
SELECT workflow_version,
       date_trunc('day', occurred_at, 'UTC') AS day,
       count(*) AS events,
       count(DISTINCT run_id) AS runs,
       count(DISTINCT run_id) FILTER (WHERE success) AS successful_runs,
       count(DISTINCT run_id) FILTER (WHERE NOT success) AS failed_runs,
       coalesce(sum(cost), 0) AS known_cost_usd,
       count(*) FILTER (WHERE cost_role = 'charge' AND cost IS NULL) AS unknown_cost_events,
       coalesce(sum(cost) FILTER (WHERE NOT success), 0) AS failure_tax_usd
  FROM priced
 GROUP BY 1, 2
 ORDER BY 1, 2
"""
HAND_FIGURES = (
    "events",
    "runs",
    "successful_runs",
    "failed_runs",
    "known_cost_usd",
    "unknown_cost_events",
    "failure_tax_usd",
)


# -- the data set ---------------------------------------------------------------------------------


def split(total: int, parts: int, rng: random.Random) -> list[int]:
    """``parts`` counts of 3 to 7 (about) that sum to ``total``."""
    base, extra = divmod(total, parts)
    counts = [base + (index < extra) for index in range(parts)]
    for index in range(0, parts - 1, 2):
        shift = rng.randint(-2, 2)
        if counts[index] + shift >= 1 and counts[index + 1] - shift >= 1:
            counts[index] += shift
            counts[index + 1] -= shift
    return counts


def a_cost(rng: random.Random) -> tuple[Decimal | None, CostMeasurement]:
    roll = rng.random()
    if roll < 0.03:
        return None, CostMeasurement.UNMEASURED
    amount = Decimal(rng.randint(1, 250_000)).scaleb(-7)
    return amount, CostMeasurement.ESTIMATED if roll < 0.18 else CostMeasurement.MEASURED


class Maker:
    """Deterministic evidence: ids in order, random choices from one seeded generator."""

    def __init__(self, now: datetime, seed: int) -> None:
        self.rng = random.Random(seed)
        self.now = now
        self.start = (now - timedelta(days=DAYS + 1)).replace(
            hour=0, minute=0, second=0, microsecond=0
        )
        self.evidence = Evidence(start=self.start, end=self.start + timedelta(days=DAYS))
        self.serial = 0

    def next_id(self, prefix: str) -> str:
        self.serial += 1
        return f"{prefix}-{self.serial:07d}"

    def execution(self, **fields: Any) -> ExecutionEvent:
        rng = self.rng
        event_id = self.next_id("ex")
        if fields.pop("summary", False):
            money: dict[str, Any] = {"cost_role": CostRole.SUMMARY}
        else:
            cost, measurement = a_cost(rng)
            money = {
                "cost_usd": cost,
                "cost_measurement": measurement,
                "charge_id": "ch" + event_id[2:],
            }
        event = ExecutionEvent(
            event_id=event_id,
            workflow_id=WORKFLOW,
            metadata={"provider": "bench", "model": rng.choice(MODELS)},
            **money,
            **fields,
        )
        self.evidence.executions.append(event)
        if event.charge_id is not None and rng.random() < 0.03:
            self.revise(event)
        return event

    def revise(self, event: ExecutionEvent) -> None:
        rng = self.rng
        for number in range(2 if rng.random() < 0.2 else 1):
            unknown = rng.random() < 0.1
            self.evidence.revisions.append(
                ChargeRevision(
                    event_id=self.next_id("rev"),
                    charge_id=str(event.charge_id),
                    revised_at=event.occurred_at + timedelta(hours=2 + number),
                    cost_usd=None if unknown else Decimal(rng.randint(1, 250_000)).scaleb(-7),
                    cost_measurement=(
                        CostMeasurement.UNMEASURED if unknown else CostMeasurement.MEASURED
                    ),
                )
            )

    def run(self, index: int, events: int) -> None:
        rng = self.rng
        run_id = f"run-{index:06d}"
        version = rng.choices(VERSIONS, VERSION_WEIGHTS)[0]
        subject = f"customer-{rng.randrange(SUBJECTS):04d}"
        dimensions = {"tier": rng.choice(TIERS), "priority": rng.randint(1, 4)}
        moment = self.start + timedelta(seconds=rng.uniform(0, DAYS * 86_400 - 3_600))
        closing_summary = events > 1 and rng.random() < 0.1
        step, attempt = -1, 1
        for number in range(events):
            summary = closing_summary and number == events - 1
            if step >= 0 and attempt < 3 and rng.random() < 0.12:
                attempt += 1
            else:
                step, attempt = step + 1, 1
            moment += timedelta(seconds=rng.uniform(0.5, 30))
            self.execution(
                workflow_version=version,
                occurred_at=moment,
                run_id=run_id,
                step_id=None if summary else STEPS[step % len(STEPS)],
                attempt=1 if summary else attempt,
                subject_id=subject,
                dimensions=dimensions,
                join_key=f"{run_id}:{number}",
                summary=summary,
            )
        self.outcomes(version, run_id, subject, moment)

    def outcomes(self, version: str, run_id: str, subject: str, ended: datetime) -> None:
        rng = self.rng
        outcome_type = DEFINITIONS[version][0]

        def value() -> Any:
            return rng.random() < 0.75 if outcome_type == "resolved" else rng.randint(1, 5)

        def assert_(asserted_at: datetime, kind: str = outcome_type, **extra: Any) -> None:
            self.evidence.outcomes.append(
                OutcomeEvent(
                    event_id=self.next_id("out"),
                    workflow_id=WORKFLOW,
                    workflow_version=version,
                    run_id=run_id,
                    outcome_type=kind,
                    asserted_at=asserted_at,
                    subject_id=subject,
                    **{"value": value(), **extra},
                )
            )

        if rng.random() < 0.92:
            assert_(
                ended + timedelta(minutes=5),
                outcome_measurement=(
                    OutcomeMeasurement.INFERRED
                    if rng.random() < 0.1
                    else OutcomeMeasurement.MEASURED
                ),
                maturity=(
                    OutcomeMaturity.PROVISIONAL if rng.random() < 0.05 else OutcomeMaturity.FINAL
                ),
            )
            if rng.random() < 0.05:
                assert_(ended + timedelta(hours=20))
            if rng.random() < 0.03:
                assert_(self.now + timedelta(days=7))
        if rng.random() < 0.05:
            assert_(ended + timedelta(minutes=1), kind="escalated", value=True)


def make_evidence(events: int, runs: int, now: datetime, seed: int = 7) -> Evidence:
    maker = Maker(now, seed)
    unattributed = events // 200
    for index, count in enumerate(split(events - unattributed, runs, maker.rng)):
        maker.run(index, count)
    for _ in range(unattributed):
        maker.execution(
            workflow_version=maker.rng.choice(VERSIONS),
            occurred_at=maker.start + timedelta(seconds=maker.rng.uniform(0, DAYS * 86_400)),
            step_id="sweep",
        )
    return maker.evidence


def definitions(now: datetime) -> list[OutcomeDefinition]:
    """The definitions as the reference tally needs them (digest and author do not matter)."""
    return [
        OutcomeDefinition(
            tenant_id=TENANT,
            workflow_id=WORKFLOW,
            workflow_version=version,
            outcome_type=outcome_type,
            predicate=structure(predicate, SuccessPredicate),
            digest="sha256:" + "0" * 64,
            created_at=now,
            created_by="bench",
        )
        for version, (outcome_type, predicate) in DEFINITIONS.items()
    ]


def batches(items: list[Any]) -> list[bytes]:
    """JSON bodies of up to MAX_BATCH items."""
    return [
        json.dumps({"events": [unstructure(item) for item in items[lo : lo + MAX_BATCH]]}).encode()
        for lo in range(0, len(items), MAX_BATCH)
    ]


def copy_row(event: ExecutionEvent, digest: str) -> tuple[Any, ...]:
    return (
        TENANT,
        event.event_id,
        digest,
        event.workflow_id,
        event.workflow_version,
        event.occurred_at,
        event.run_id,
        event.step_id,
        event.attempt,
        event.subject_id,
        Jsonb(event.dimensions),
        event.cost_usd,
        str(event.cost_measurement),
        str(event.cost_role),
        event.charge_id,
        event.source_window_id,
        event.join_key,
        Jsonb(event.metadata),
    )


def check(response: httpx.Response, status: int = 200) -> Any:
    if response.status_code != status:
        raise SystemExit(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text[:2000]}"
        )
    return response.json()


# -- setup ------------------------------------------------------------------------------------------


def post_all(client: httpx.Client, path: str, bodies: list[bytes]) -> int:
    stored = 0
    for body in bodies:
        stored += check(client.post(path, content=body))["stored"]
    return stored


def setup(client: httpx.Client, evidence: Evidence) -> None:
    """Outcome definitions, outcome assertions and charge revisions through the API."""
    began = time.perf_counter()
    for version, (outcome_type, predicate) in DEFINITIONS.items():
        check(
            client.post(
                "/v1/debugger/outcome-definitions",
                json={
                    "workflow_id": WORKFLOW,
                    "workflow_version": version,
                    "outcome_type": outcome_type,
                    "predicate": predicate,
                },
            ),
            201,
        )
    outcomes = post_all(client, "/v1/evidence/outcomes", batches(evidence.outcomes))
    revisions = post_all(client, "/v1/evidence/charge-revisions", batches(evidence.revisions))
    if (outcomes, revisions) != (len(evidence.outcomes), len(evidence.revisions)):
        raise SystemExit(f"stored {outcomes} outcomes and {revisions} revisions, expected more")
    print(
        f"  {len(DEFINITIONS)} outcome definitions, {outcomes:,} outcome assertions and "
        f"{revisions:,} charge revisions through the API in {time.perf_counter() - began:.1f} s"
    )


# -- 1. ingestion: HTTP against COPY ------------------------------------------------------------


@dataclass
class Phases:
    """Seconds of each ingestion phase by round, and the table's fingerprint after each."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    fingerprints: set[tuple[int, str]] = field(default_factory=set)
    server_cpu: list[float] = field(default_factory=list)
    """CPU seconds of the ECP server during each HTTP phase."""

    def median(self, name: str) -> float:
        return statistics.median(self.seconds[name])


def truncate(conn: psycopg.Connection[Any]) -> None:
    conn.execute(f"TRUNCATE {EXECUTIONS}")
    conn.commit()


def fingerprint(conn: psycopg.Connection[Any]) -> tuple[int, str]:
    count, digest = conn.execute(FINGERPRINT_SQL).fetchone()  # type: ignore[misc]
    conn.commit()
    return count, digest


def http_phase(
    client: httpx.Client, bodies: list[bytes], sizes: list[int], token: str | None = None
) -> None:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    for body, size in zip(bodies, sizes, strict=True):
        response = client.post("/v1/evidence/executions", content=body, headers=headers)
        if response.status_code != 200 or response.json()["stored"] != size:
            raise SystemExit(f"ingestion: {response.status_code} {response.text[:2000]}")


def copy_phase(conn: psycopg.Connection[Any], rows: list[tuple[Any, ...]], size: int) -> None:
    for lo in range(0, len(rows), size):
        with conn.cursor() as cursor, cursor.copy(COPY_SQL) as copy:
            for row in rows[lo : lo + size]:
                copy.write_row(row)
        conn.commit()


def bench_ingestion(
    client: httpx.Client,
    conn: psycopg.Connection[Any],
    evidence: Evidence,
    rounds: int,
    server_cpu: Callable[[], float | None],
) -> Phases:
    events = evidence.executions
    began = time.perf_counter()
    bodies = batches(events)
    sizes = [min(MAX_BATCH, len(events) - lo) for lo in range(0, len(events), MAX_BATCH)]
    rows = [copy_row(event, digest_of(event)) for event in events]
    gc.freeze()
    print(
        f"  {len(bodies)} bodies ({sum(map(len, bodies)) / len(events):,.0f} bytes per event) "
        f"and {len(rows):,} COPY rows with their digests made in {time.perf_counter() - began:.1f} s"
    )
    # Warm-up (then truncated): the server's converters and pool, another tenant's batches.
    warm = mint_token(JWT_SECRET, tenant=WARM_TENANT, roles=["operator"], ttl_seconds=3600)
    http_phase(client, bodies[:WARM_BATCHES], sizes[:WARM_BATCHES], warm)
    copy_phase(conn, rows[:MAX_BATCH], MAX_BATCH)
    contenders: list[tuple[str, Callable[[], None]]] = [
        (HTTP_PHASE, lambda: http_phase(client, bodies, sizes)),
        (COPY_BATCHED, lambda: copy_phase(conn, rows, MAX_BATCH)),
        (COPY_ALL, lambda: copy_phase(conn, rows, len(rows))),
    ]
    phases = Phases(seconds={name: [] for name, _ in contenders})
    for number in range(rounds):
        shift = number % len(contenders)
        for name, phase in contenders[shift:] + contenders[:shift]:
            truncate(conn)
            cpu = server_cpu()
            started = time.perf_counter()
            phase()
            phases.seconds[name].append(time.perf_counter() - started)
            after = server_cpu()
            if name == HTTP_PHASE and cpu is not None and after is not None:
                phases.server_cpu.append(after - cpu)
            phases.fingerprints.add(fingerprint(conn))
    if len(phases.fingerprints) != 1 or next(iter(phases.fingerprints))[0] != len(events):
        raise SystemExit(f"the phases left different rows: {phases.fingerprints}")
    http = phases.median(HTTP_PHASE)
    for name, seconds in phases.seconds.items():
        median = statistics.median(seconds)
        print(
            f"  {name:<24} {len(events) / median:9,.0f} events/s  "
            f"({median * 1e6 / len(events):6.1f} us per event; "
            f"{', '.join(f'{s:.2f}' for s in seconds)} s)"
            + ("" if name == HTTP_PHASE else f"; HTTP / this {median / http:.2f}")
        )
    print(f"  every phase left the same {len(events):,} rows (md5 of the table's rows)")
    if phases.server_cpu:
        cpu = statistics.median(phases.server_cpu)
        print(
            f"  the ECP server's CPU during the HTTP phase: {cpu * 1e6 / len(events):.1f} us per "
            f"event (median of {len(phases.server_cpu)} rounds; /proc)"
        )
    return phases


STREAMED = "read and stored as read (the route)"
READ_ALONE = "the reader alone (rows, one pass)"
STORE_ALONE = "the adapter alone (COPY, commit)"
GENERIC = "the generic reader, for comparison"
JSON_ALONE = "json.loads alone"
ORJSON_ALONE = "orjson.loads alone (the reader's)"


def replay(store: PostgresStore, tenant: str, body: bytes) -> float:
    """What the server does with one ingestion body (rows COPYed as read); its seconds."""
    began = time.perf_counter()
    with store.unit_of_work() as uow:
        uow.evidence.add_execution_body(tenant, ExecutionBody(body))
        uow.commit()
    return time.perf_counter() - began


def store_read_rows(store: PostgresStore, tenant: str, body: bytes) -> float:
    """The adapter alone: the body's rows read first, then COPYed and committed; its seconds."""
    rows = list(ExecutionBody(body).rows())
    began = time.perf_counter()
    with store.unit_of_work() as uow:
        uow.evidence.add_execution_rows(tenant, rows)
        uow.commit()
    return time.perf_counter() - began


def generic_reader(body: bytes) -> None:
    """The reader every other route uses: I-JSON parse, cattrs, the rules, ``digest_of``."""
    batch = structure(parse_json_text(body), ExecutionBatch, what="the body")
    checked(batch.events, execution_problems)


def readers(bodies: list[bytes], parts: dict[str, list[float]]) -> None:
    """The reader alone, the parsers alone and the generic reader over ``bodies``, timed."""
    for name, read in (
        (READ_ALONE, lambda body: list(ExecutionBody(body).rows())),
        (JSON_ALONE, json.loads),
        (ORJSON_ALONE, orjson.loads),
        (GENERIC, generic_reader),
    ):
        began = time.perf_counter()
        for body in bodies:
            read(body)
        parts.setdefault(name, []).append(time.perf_counter() - began)


def replays(store: PostgresStore, conn: psycopg.Connection[Any], bodies: list[bytes]) -> None:
    """A batch of exact replays, then one half new and half replayed (the staging merge)."""
    if len(bodies) < 2:
        return
    truncate(conn)
    replay(store, TENANT, bodies[0])
    first, second = (json.loads(body)["events"] for body in bodies[:2])
    half = len(first) // 2
    mixed = json.dumps({"events": first[half:] + second[:half]}).encode()
    for label, body, stored in (
        ("exact replay", bodies[0], 0),
        ("half replayed", mixed, len(second[:half])),
    ):
        began = time.perf_counter()
        batch = ExecutionBody(body)
        with store.unit_of_work() as uow:
            replayed = uow.evidence.add_execution_body(TENANT, batch)
            uow.commit()
        seconds = time.perf_counter() - began
        received = batch.received or 0
        if received - replayed != stored:
            raise SystemExit(f"{label}: stored {received - replayed}, expected {stored}")
        print(
            f"    a batch of {received:,}, {label} ({stored:,} new): "
            f"{seconds * 1e6 / received:.1f} us per event"
        )


def ingestion_breakdown(
    store: PostgresStore,
    conn: psycopg.Connection[Any],
    evidence: Evidence,
    http: float,
    rounds: int,
) -> None:
    """The server's request path for the same batches, replayed in this process, by part."""
    bodies = batches(evidence.executions)
    count = len(evidence.executions)
    replay(store, WARM_TENANT, bodies[0])  # warm-up
    print("\n  batches with replays (the staging merge), replayed in this process:")
    replays(store, conn, bodies)
    truncate(conn)
    with cursor_statements_seen() as statements:
        replay(store, TENANT, bodies[0])
    truncate(conn)
    timed: dict[str, list[float]] = {}

    def stored(name: str, store_one: Callable[[PostgresStore, str, bytes], float]) -> None:
        truncate(conn)
        timed.setdefault(name, []).append(sum(store_one(store, TENANT, b) for b in bodies))
        if fingerprint(conn)[0] != count:
            raise SystemExit(f"{name}: not every event was stored")

    contenders: list[Callable[[], None]] = [
        lambda: stored(STREAMED, replay),
        lambda: stored(STORE_ALONE, store_read_rows),
        lambda: readers(bodies, timed),
    ]
    for number in range(rounds):  # interleaved, rotating: medians of a shared machine
        shift = number % len(contenders)
        for contender in contenders[shift:] + contenders[:shift]:
            contender()
    parts = {name: statistics.median(values) for name, values in timed.items()}
    total = parts[STREAMED]
    print(
        f"\n  where the time goes: the request path replayed in this process, "
        f"{total * 1e6 / count:.1f} us per event ({count / total:,.0f} events/s; medians of "
        f"{rounds} interleaved rounds)"
    )
    for name, seconds in parts.items():
        print(f"    {name:<36} {seconds * 1e6 / count:7.1f} us per event")
    overlap = parts[READ_ALONE] + parts[STORE_ALONE] - total
    print(
        f"    {'reading and COPY overlapped':<36} {overlap * 1e6 / count:7.1f} us per event "
        "(reader alone + adapter alone - the route's path)"
    )
    print(
        f"    {'the rest':<36} {(http - total) * 1e6 / count:7.1f} us per event "
        "(HTTP median minus the replay: uvicorn, routing, auth, the client, the response)"
    )
    kinds: dict[str, int] = {}
    for sql in statements:
        kinds[statement_kind(sql)] = kinds.get(statement_kind(sql), 0) + 1
    shown = ", ".join(f"{n} x {kind}" for kind, n in sorted(kinds.items())) or "none seen"
    print(f"    statements of one batch (psycopg cursors; COPY not counted): {shown}")


def ingestion_profile(
    store: PostgresStore, conn: psycopg.Connection[Any], evidence: Evidence, profile: int
) -> str:
    """cProfile of the replayed request path for the first ``profile`` batches, as text."""
    bodies = batches(evidence.executions[: profile * MAX_BATCH])
    if not bodies:
        return ""
    truncate(conn)
    replay(store, WARM_TENANT, bodies[0])  # warm-up
    profiler = cProfile.Profile()
    profiler.enable()
    for body in bodies:
        replay(store, TENANT, body)
    profiler.disable()
    out = io.StringIO()
    pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(PROFILE_LINES)
    listing = out.getvalue()
    table = listing[listing.index("ncalls") :] if "ncalls" in listing else listing
    lines = [f"    {line.rstrip()[:160]}" for line in table.strip().splitlines()]
    title = f"\n  cProfile of the replay ({len(bodies)} batches), top {PROFILE_LINES} by own time:"
    return "\n".join([title, *lines])


# -- 2. the report against hand-written SQL ---------------------------------------------------------


def report_query(evidence: Evidence) -> dict[str, str]:
    return {
        "workflow_id": WORKFLOW,
        "start": format_timestamp(evidence.start),
        "end": format_timestamp(evidence.end),
    }


def hand_sql(conn: psycopg.Connection[Any], evidence: Evidence) -> list[tuple[Any, ...]]:
    params = {
        "tenant": TENANT,
        "workflow": WORKFLOW,
        "start": evidence.start,
        "end": evidence.end,
    }
    rows = conn.execute(HAND_SQL, params).fetchall()
    conn.commit()
    return rows


def bench_report(
    client: httpx.Client,
    ecp: Ecp,
    *,
    store: PostgresStore,
    conn: psycopg.Connection[Any],
    evidence: Evidence,
    repeats: int,
) -> tuple[dict[str, list[float]], httpx.Response, list[tuple[Any, ...]]]:
    params = report_query(evidence)
    query = structure(params, DebuggerQuery)
    answers: dict[str, Any] = {}

    def over_http() -> None:
        answers["http"] = check_report(client.get("/v1/debugger/report", params=params))

    def in_process() -> None:
        ecp.debugger.report(TENANT, query)

    def adapter() -> None:
        tally_query = TallyQuery(
            workflow_id=WORKFLOW,
            workflow_version=None,
            start=evidence.start,
            end=evidence.end,
            as_of=datetime.now(UTC),
            groupings=REPORT,
        )
        with store.unit_of_work() as uow:
            uow.evidence.count_executions(TENANT, tally_query, limit=MAX_WINDOW_EVENTS + 1)
            uow.evidence.tally(TENANT, tally_query)

    def by_hand() -> None:
        answers["hand"] = hand_sql(conn, evidence)

    contenders: list[tuple[str, Callable[[], None]]] = [
        ("GET /v1/debugger/report", over_http),
        ("Ecp.debugger.report", in_process),
        ("adapter count + tally", adapter),
        ("hand-written SQL", by_hand),
    ]
    for _, run in contenders:  # warm-up: plans, pools, caches
        run()
    seconds: dict[str, list[float]] = {name: [] for name, _ in contenders}
    for number in range(repeats):
        shift = number % len(contenders)
        for name, run in contenders[shift:] + contenders[:shift]:
            began = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - began)
    return seconds, answers["http"], answers["hand"]


def check_report(response: httpx.Response) -> httpx.Response:
    if response.status_code != 200:
        raise SystemExit(f"GET /v1/debugger/report: {response.status_code} {response.text[:2000]}")
    return response


def print_report(seconds: dict[str, list[float]], response: httpx.Response) -> float:
    body = response.json()
    print(
        f"  the report: {len(response.content):,} bytes; {len(body['versions'])} versions, "
        f"{len(body['timeline'])} timeline rows, {len(body['cohorts'])} cohort rows, "
        f"{len(body['steps'])} step rows"
    )
    hand = statistics.median(seconds["hand-written SQL"])
    for name, values in seconds.items():
        median = statistics.median(values)
        print(
            f"  {name:<24} median {ms(median)}  (min {min(values) * 1e3:.1f}, "
            f"max {max(values) * 1e3:.1f} ms)"
            + ("" if name == "hand-written SQL" else f"; / hand SQL {median / hand:5.2f}")
        )
    ratio = statistics.median(seconds["GET /v1/debugger/report"]) / hand
    met = "met" if ratio <= REPORT_TARGET else "NOT met"
    print(
        f"  report through HTTP / hand SQL: {ratio:.2f} (medians; target <= {REPORT_TARGET}: {met})"
    )
    return ratio


def figure(value: Any) -> Any:
    return Decimal(value) if isinstance(value, str) else value


def check_answers(
    response: httpx.Response, hand: list[tuple[Any, ...]], evidence: Evidence, now: datetime
) -> None:
    """The report's timeline agrees with the hand SQL; its totals with the reference tally."""
    body = response.json()
    theirs = {
        (row["workflow_version"], row["window_start"]): {
            name: figure({**row["accounting"], **row["accounting"]["incomplete"]}[name])
            for name in HAND_FIGURES
        }
        for row in body["timeline"]
    }
    mine = {
        (row[0], format_timestamp(row[1])): dict(zip(HAND_FIGURES, row[2:], strict=True))
        for row in hand
    }
    if theirs != mine:
        different = sorted(
            key for key in theirs.keys() | mine.keys() if theirs.get(key) != mine.get(key)
        )
        key = different[0]
        raise SystemExit(
            f"the report's timeline and the hand SQL differ in {len(different)} rows, "
            f"first {key}: report {theirs.get(key)}, hand SQL {mine.get(key)}"
        )
    query = TallyQuery(
        workflow_id=WORKFLOW,
        workflow_version=None,
        start=evidence.start,
        end=evidence.end,
        as_of=now,
        groupings=frozenset({Grouping.TOTAL}),
    )
    (total,) = tally(
        query, evidence.executions, evidence.outcomes, evidence.revisions, definitions(now)
    )
    expected = json.loads(json.dumps(unstructure(Accounting.of(total))))
    if body["totals"] != expected:
        raise SystemExit(f"the report's totals differ from the reference tally: {body['totals']}")
    totals = body["totals"]
    print(
        f"  checks: the {len(mine)} timeline rows equal the hand SQL's; the totals equal the "
        f"reference tally's ({totals['events']:,} events, {totals['runs']:,} runs, "
        f"{totals['successful_runs']:,} successful, {totals['failed_runs']:,} failed, "
        f"{totals['incomplete']['unresolved_runs']:,} unresolved, "
        f"{totals['incomplete']['unknown_cost_events']:,} unknown-cost charges, "
        f"known cost {totals['known_cost_usd']} USD)"
    )


# -- main ---------------------------------------------------------------------------------------


def main() -> None:  # noqa: PLR0915 - one linear script
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--events",
        type=int,
        default=MAX_WINDOW_EVENTS,
        help=f"execution events (default and at most {MAX_WINDOW_EVENTS})",
    )
    parser.add_argument("--runs", type=int, default=10_000, help="runs (default 10000)")
    parser.add_argument("--repeats", type=int, default=7, help="timed report rounds (default 7)")
    parser.add_argument(
        "--rounds", type=int, default=3, help="ingestion rounds per contender (default 3)"
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=5,
        help="ingestion batches replayed under cProfile (default 5; 0: none)",
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(ecp_app())
        return
    if not 1 <= args.events <= MAX_WINDOW_EVENTS:
        parser.error(f"--events must be between 1 and {MAX_WINDOW_EVENTS}")
    if not 1 <= args.runs <= args.events:
        parser.error("--runs must be between 1 and --events")

    whole = time.perf_counter()
    now = datetime.now(UTC)
    print(f"debugger benchmark; {load_note()}")
    began = time.perf_counter()
    evidence = make_evidence(args.events, args.runs, now)
    print(
        f"data set: {len(evidence.executions):,} execution events of {args.runs:,} runs, "
        f"{len(evidence.outcomes):,} outcome assertions, {len(evidence.revisions):,} charge "
        f"revisions, {len(DEFINITIONS)} versions, {DAYS} days "
        f"(made in {time.perf_counter() - began:.1f} s)"
    )
    # The data set stays alive all along: keep it out of the cyclic GC's full collections, which
    # would otherwise tax this process's timed work (the server process holds none of it).
    gc.freeze()
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], ttl_seconds=3600)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    with server() as maintenance:
        databases = Databases(maintenance)
        try:
            _, url = databases.fresh("debugger")
            with (
                running_ecp(
                    __file__, database_url=url, jwt_secret=JWT_SECRET, signing_key=SIGNING_KEY
                ) as child,
                httpx.Client(base_url=child.base_url, headers=headers, timeout=120.0) as client,
                psycopg.connect(url) as conn,
                PostgresStore(url, max_size=2) as store,
            ):
                print("\nsetup (not timed as a figure)")
                setup(client, evidence)

                print(
                    f"\n1. ingestion of {len(evidence.executions):,} execution events, "
                    f"{args.rounds} rounds with a rotating order; {load_note()}"
                )
                phases = bench_ingestion(client, conn, evidence, args.rounds, child.cpu_seconds)
                http = phases.median(HTTP_PHASE)
                copy_batched = phases.median(COPY_BATCHED)
                copy_all = phases.median(COPY_ALL)
                ingest_ratio = copy_batched / http
                met = "met" if ingest_ratio >= INGEST_TARGET else "NOT met"
                print(
                    f"  HTTP / COPY: {ingest_ratio:.2f} against a COPY per 1,000 rows "
                    f"(target >= {INGEST_TARGET}: {met}), {copy_all / http:.2f} against one COPY "
                    "of all rows (events/s, medians)"
                )
                profiled = ingestion_profile(store, conn, evidence, args.profile)
                ingestion_breakdown(store, conn, evidence, http, args.rounds)  # leaves all stored
                if profiled:
                    print(profiled)
                conn.autocommit = True
                conn.execute(f"VACUUM ANALYZE {EXECUTIONS}")

                print(
                    f"\n2. report over the whole window ({len(evidence.executions):,} events), "
                    f"{args.repeats} rounds with a rotating order after a warm-up; {load_note()}"
                )
                ecp = Ecp.build(store.unit_of_work, signer=None, clock=SystemClock())
                seconds, response, hand = bench_report(
                    client, ecp, store=store, conn=conn, evidence=evidence, repeats=args.repeats
                )
                report_ratio = print_report(seconds, response)
                check_answers(response, hand, evidence, datetime.now(UTC))
        finally:
            databases.drop_all()

    report = statistics.median(seconds["GET /v1/debugger/report"])
    print("\nsummary")
    print(f"  report through HTTP, median   {ms(report)}")
    print(f"  hand-written SQL, median      {ms(statistics.median(seconds['hand-written SQL']))}")
    print(
        f"  report / hand SQL             {report_ratio:8.2f}     "
        f"(target <= {REPORT_TARGET}: {'met' if report_ratio <= REPORT_TARGET else 'NOT met'})"
    )
    count = len(evidence.executions)
    print(f"  ingestion through HTTP        {count / http:8,.0f} events/s")
    print(f"  COPY, per 1,000 rows          {count / copy_batched:8,.0f} events/s")
    print(f"  COPY, all rows at once        {count / copy_all:8,.0f} events/s")
    print(
        f"  HTTP / COPY per 1,000 rows    {ingest_ratio:8.2f}     "
        f"(target >= {INGEST_TARGET}: {'met' if ingest_ratio >= INGEST_TARGET else 'NOT met'})"
    )
    print(
        f"  ({load_note()} at the end; the whole script took {time.perf_counter() - whole:.0f} s)"
    )


if __name__ == "__main__":
    main()
