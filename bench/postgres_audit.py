"""PostgreSQL adapter throughput: audit appends, and completed approval runs against LangGraph.

Run as ``python bench/postgres_audit.py [--records N] [--runs M]``. It prints figures and checks
only that what it wrote is correct (the chains verify, the runs complete), never anything about
timing. The server is ``ECP_BENCH_DATABASE_URL`` (the URL of a maintenance database on a server
where this user may create databases) when set, else an embedded PostgreSQL in a temporary
directory. Every database it creates is fresh and migrated, and is dropped at the end.

1. Audit appends into one run's chain, one transaction per record:

   - adapter: ``AuditWriter.write``'s calls, each record in its own ``store.unit_of_work()``:
     ``uow.audit.head`` (its own ``SELECT ... FOR UPDATE`` of the head row: in a run's attempt
     the run's lock has read the head already), ``seal`` (SHA-256 commitments, digest, Ed25519
     signature), ``uow.audit.append``, ``uow.commit``.
   - adapter, pre-sealed: the same with the records sealed in advance (no hashing or signing).
   - plain psycopg replaying the adapter's statements: the head's ``SELECT ... FOR UPDATE``, the
     one statement of batched writes ``PostgresAudit.append`` queues (made in advance), ``COMMIT``
     (adapter minus this = its Python and pool cost).
   - plain psycopg, INSERT + UPDATE head: the same rows (``AUDIT.insert_sql()``, ``AUDIT.params``
     made in advance) and a plain ``UPDATE`` of the chain's head row, one commit per record: the
     baseline the adapter is compared with.
   - plain psycopg, INSERT only: what the head row costs.

2. Completed runs of a three-node graph, action ``set`` -> approval -> end: ECP (``Ecp.build``
   over ``PostgresStore``; ``runs.start_and_drive``, or ``runs.start`` then ``runs.drive``, and
   ``Ecp.resolve`` with an approval, which drives to completion; four signed audit records per
   run) against LangGraph with ``PostgresSaver`` on
   its own database of the same server (a node that sets a value, a node that calls
   ``interrupt``, an end node; invoke until the interrupt, then ``Command(resume=...)``), with its
   default durability (``async``) and with ``durability="sync"``. LangGraph is a bench-only
   dependency (``bench/requirements.txt``); without it the comparison is skipped. A fourth
   contender, the floor (``_replay.py``, ADR 0109), sends one ECP run's statements again by plain
   psycopg: what a run costs without ECP's Python. The statements of one ECP run and a cProfile
   of the ECP run path follow.

The contenders of each part run in interleaved rounds (their order rotating), so that table growth
and load from other processes fall on all of them; a ratio is the median over rounds of the two
rates in the same round. Every timed part also stops at its share of ``--budget`` seconds, so the
script ends in bounded time on a slow machine, and then says how many items it measured.
"""

import argparse
import cProfile
import importlib
import pstats
import time
from collections.abc import Callable
from typing import Any, TypedDict

import psycopg
from psycopg.rows import dict_row

from _attempt_appends import bench_attempt_appends
from _cpu import backend_postmaster, metered
from _database import Databases, server
from _replay import Replay, report_floor
from _rounds import Figure, Timing, interleave, load_note, paired_ratio, print_summary, rate_line
from _statements import statement_kind, statements_seen
from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    Ed25519Signer,
    GraphBuilder,
    KeyRing,
    RunStatus,
    StartRunRequest,
)
from ecp_core.audit import verify_chain
from ecp_core.audit.chain import seal
from ecp_core.audit.record import ChainHead, NodeAuditRecord
from ecp_core.errors import ChainConflict
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.types import AttemptStatus
from ecp_postgres import (
    PostgresStore,
)
from ecp_postgres.audit import AUDIT, head_move
from ecp_postgres.session import PendingWrite, combined

TENANT = "bench"
DEPLOYMENT = "approvals"
SIGNER = Ed25519Signer(bytes(range(1, 33)), key_id="bench")
APPEND_ROUNDS = 25
RUN_ROUNDS = 20
APPEND_TARGET = 0.8
RUNS_TARGET = 3.0
CLIENT_CPU_TARGET = 4.0
STATEMENTS_TARGET = 15
COMMITS_TARGET = 3
PG_ATTEMPT_TARGET = 1.0


# -- the server and its databases ---------------------------------------------------------------


def describe_server(url: str) -> None:
    """Version, durability settings, and the cost of a round trip and of a commit."""
    with psycopg.connect(url, autocommit=True) as conn:
        settings = {
            name: conn.execute(f"SHOW {name}").fetchone()[0]  # type: ignore[index]
            for name in ("server_version", "fsync", "synchronous_commit", "shared_buffers")
        }
        count = 2000
        started = time.perf_counter()
        for _ in range(count):
            conn.execute("SELECT 1")
        select_ms = (time.perf_counter() - started) * 1e3 / count
        conn.execute("CREATE TEMP TABLE bench_commit (n int)")
        conn.autocommit = False
        started = time.perf_counter()
        for n in range(count // 4):
            conn.execute("INSERT INTO bench_commit VALUES (%s)", (n,))
            conn.commit()
        commit_ms = (time.perf_counter() - started) * 1e3 / (count // 4)
    print(
        f"PostgreSQL {settings['server_version']}, fsync={settings['fsync']}, "
        f"synchronous_commit={settings['synchronous_commit']}, "
        f"shared_buffers={settings['shared_buffers']}; {load_note()}"
    )
    print(f"round trip (SELECT 1): {select_ms:.3f} ms; INSERT + COMMIT: {commit_ms:.3f} ms")


# -- 1. audit appends ---------------------------------------------------------------------------


def attempt_fields(attempt: int) -> dict[str, Any]:
    """A node attempt like the engine's: small snapshots holding personal data, and metadata."""
    order = f"A-{100000 + attempt}"
    return {
        "node_id": ("classify", "review", "notify")[attempt % 3],
        "status": AttemptStatus.SUCCEEDED,
        "input_snapshot": {
            "order": order,
            "customer": {"name": "Zoë Ândersen", "email": f"c{attempt}@example.com"},
            "items": [{"sku": f"SKU-{attempt % 997}", "qty": 1 + attempt % 4, "price_cents": 1299}],
        },
        "output_snapshot": {"category": "refund", "order": order, "approved": attempt % 2 == 0},
        "execution_metadata": {
            "node_kind": "action",
            "step": attempt,
            "action": "classify",
            "fingerprint": "classify/1",
            "capabilities": [],
            "side_effect": "none",
            "next_node_id": "review",
        },
    }


class Chain:
    """One run's chain: seals its records (with the writer's clock and ids) and counts them."""

    def __init__(self, run_id: str) -> None:
        self.run_id = run_id
        self.length = 0
        self.seal_seconds = 0.0  # time spent sealing inside adapter_sealed's transactions
        self._clock = SystemClock()
        self._ids = UuidV7Factory()

    def seal_next(self, previous: str | None, attempt: int) -> NodeAuditRecord:
        return seal(
            previous_record_digest=previous,
            signer=SIGNER,
            created_at=self._clock.now(),
            audit_id=self._ids.new_id(),
            run_id=self.run_id,
            tenant_id=TENANT,
            deployment_ref=DEPLOYMENT,
            graph_version_ref="bench@1",
            attempt=attempt,
            **attempt_fields(attempt),
        )

    def presealed(self, count: int) -> list[NodeAuditRecord]:
        records: list[NodeAuditRecord] = []
        for attempt in range(1, count + 1):
            records.append(self.seal_next(records[-1].record_digest if records else None, attempt))
        return records


def adapter_sealed(store: PostgresStore, chain: Chain, count: int) -> None:
    """The per-attempt transaction: lock the head, seal on it, append, commit."""
    for _ in range(count):
        with store.unit_of_work() as uow:
            head = uow.audit.head(chain.run_id)
            began = time.perf_counter()
            record = chain.seal_next(
                None if head is None else head.record_digest,
                1 if head is None else head.attempt + 1,
            )
            chain.seal_seconds += time.perf_counter() - began
            uow.audit.append(record)
            uow.commit()
        chain.length += 1


def adapter_presealed(store: PostgresStore, chain: Chain, records: list[NodeAuditRecord]) -> None:
    """The same transaction with the record sealed in advance."""
    for record in records:
        with store.unit_of_work() as uow:
            uow.audit.head(chain.run_id)
            uow.audit.append(record)
            uow.commit()
        chain.length += 1


HEAD_LOCK = (
    "SELECT run_id, attempt, record_digest FROM ecp_audit_heads WHERE run_id = %s FOR UPDATE"
)


def replayed(record: NodeAuditRecord) -> tuple[str, list[Any]]:
    """The statement of batched writes ``PostgresAudit.append`` queues for ``record``, and its
    parameters: the conditional head move (an insert for the first record) and the record."""
    head = ChainHead(
        run_id=record.run_id, attempt=record.attempt, record_digest=record.record_digest
    )
    since = (record.attempt - 1, record.previous_record_digest)
    writes = [
        head_move(head, (0, None) if record.previous_record_digest is None else since, record),
        PendingWrite(
            AUDIT.insert_sql(on_conflict_nothing=True),
            AUDIT.params(record),
            expected=1,
            error=lambda: ChainConflict("exists"),
        ),
    ]
    return combined(writes)


def replay_rows(
    conn: psycopg.Connection[Any], chain: Chain, statements: list[tuple[str, list[Any]]]
) -> None:
    """Each record in its own transaction, as the adapter sends it: the head's ``SELECT ... FOR
    UPDATE``, the one statement of batched writes (through a raw cursor), ``COMMIT``."""
    for sql, params in statements:
        conn.execute(HEAD_LOCK, (chain.run_id,))
        with psycopg.RawCursor(conn) as cursor:
            cursor.execute(sql, params)
        conn.commit()
        chain.length += 1


def plain_rows(
    conn: psycopg.Connection[Any], chain: Chain, rows: list[dict[str, Any]], *, mode: str
) -> None:
    """Write each row in its own transaction with plain psycopg.

    ``insert``: the record only. ``head``: the record and a plain ``UPDATE`` of the head row.
    """
    insert = AUDIT.insert_sql()
    for params in rows:
        if mode == "head" and chain.length == 0:
            conn.execute(
                "INSERT INTO ecp_audit_heads (run_id, attempt, record_digest) VALUES (%s, %s, %s)",
                (chain.run_id, params["attempt"], params["record_digest"]),
            )
        elif mode == "head":
            conn.execute(
                "UPDATE ecp_audit_heads SET attempt = %s, record_digest = %s WHERE run_id = %s",
                (params["attempt"], params["record_digest"], chain.run_id),
            )
        conn.execute(insert, params)
        conn.commit()
        chain.length += 1


APPEND_METHODS = {
    "sealed": "adapter: head + seal + append + commit",
    "presealed": "adapter, pre-sealed: head + append + commit",
    "replay": "plain psycopg replaying the adapter's statements",
    "head": "plain psycopg: INSERT + UPDATE head + COMMIT",
    "insert": "plain psycopg: INSERT + COMMIT (no head row)",
}
PLAIN_MODES = ("head", "insert")


def bench_appends(databases: Databases, count: int, deadline: float) -> list[Figure]:
    _, url = databases.fresh("audit")
    chains = {name: Chain(f"bench-{name}") for name in APPEND_METHODS}
    started = time.perf_counter()
    presealed = {name: chains[name].presealed(count) for name in APPEND_METHODS if name != "sealed"}
    seal_ms = (time.perf_counter() - started) * 1e3 / (len(presealed) * count)
    params = {name: [AUDIT.params(r) for r in presealed[name]] for name in PLAIN_MODES}
    statements = [replayed(r) for r in presealed["replay"]]

    with PostgresStore(url, max_size=2) as store, psycopg.connect(url) as conn:
        # Warm up (pool, prepared statements) on chains of their own.
        adapter_sealed(store, Chain("bench-warm-up"), 50)
        for mode in PLAIN_MODES:
            warm_up = Chain(f"bench-warm-up-{mode}")
            plain_rows(conn, warm_up, [AUDIT.params(r) for r in warm_up.presealed(50)], mode=mode)
        warm_up = Chain("bench-warm-up-replay")
        replay_rows(conn, warm_up, [replayed(r) for r in warm_up.presealed(50)])

        def step(name: str) -> Callable[[int, int], None]:
            if name == "sealed":
                return lambda lo, hi: adapter_sealed(store, chains[name], hi - lo)
            if name == "presealed":
                return lambda lo, hi: adapter_presealed(store, chains[name], presealed[name][lo:hi])
            if name == "replay":
                return lambda lo, hi: replay_rows(conn, chains[name], statements[lo:hi])
            return lambda lo, hi: plain_rows(conn, chains[name], params[name][lo:hi], mode=name)

        steps = {name: step(name) for name in APPEND_METHODS}
        timings = interleave(steps, count, APPEND_ROUNDS, deadline, "records")

        with store.unit_of_work() as uow:
            records = uow.audit.for_run(TENANT, chains["sealed"].run_id)
            head = uow.audit.head(chains["sealed"].run_id)
    result = verify_chain(records, KeyRing.of([SIGNER]), scope="bench", head=head)
    if (
        not (result.verified and result.signature_verified)
        or len(records) != chains["sealed"].length
    ):
        raise SystemExit(f"the adapter's chain does not verify: {result}")

    for name, label in APPEND_METHODS.items():
        print(rate_line(label, timings[name], "records"))
    ratio = paired_ratio(timings["sealed"], timings["head"])
    ratio_db = paired_ratio(timings["presealed"], timings["head"])
    overall = timings["sealed"].rate / timings["head"].rate
    print(
        f"  adapter / plain INSERT + UPDATE head: {ratio:.2f} (median of paired rounds; "
        f"{overall:.2f} overall; target >= {APPEND_TARGET})"
    )
    print(f"  adapter pre-sealed / plain INSERT + UPDATE head: {ratio_db:.2f}")
    wall = {name: timing.median_ms for name, timing in timings.items()}
    cpu = {name: timing.cpu_ms for name, timing in timings.items()}
    print(f"  per record, ms: {'wall (median)':>52} {'client CPU':>11}")
    for label, first, second in (
        ("plain INSERT + UPDATE head + COMMIT", "head", None),
        ("+ the adapter's extra SQL (replay - plain)", "replay", "head"),
        ("+ the adapter's Python and pool (pre-sealed - replay)", "presealed", "replay"),
        ("+ sealing in the transaction (adapter - pre-sealed)", "sealed", "presealed"),
    ):
        w = wall[first] - (wall[second] if second else 0.0)
        c = cpu[first] - (cpu[second] if second else 0.0)
        print(f"    {label:<56} {w:11.3f} {c:11.3f}")
    inside = chains["sealed"].seal_seconds * 1e3 / max(chains["sealed"].length, 1)
    print(f"    {'  (seal measured inside those transactions)':<56} {inside:11.3f}")
    print(f"    {'  (seal measured alone, in a loop)':<56} {seal_ms:11.3f}")
    return [
        Figure("audit appends/s, adapter (real pattern)", timings["sealed"].rate, "/s"),
        Figure("audit appends/s, adapter, pre-sealed", timings["presealed"].rate, "/s"),
        Figure("audit appends/s, plain INSERT + UPDATE head", timings["head"].rate, "/s"),
        Figure("adapter / plain psycopg", ratio, "x", APPEND_TARGET),
        Figure("adapter pre-sealed / plain psycopg", ratio_db, "x"),
    ]


# -- 2. completed runs ---------------------------------------------------------------------------

REVIEWER = ActorIdentity(subject="reviewer", auth_method=AuthMethod.BEARER, tenant_id=TENANT)


def ecp_service(store: PostgresStore) -> Ecp:
    ecp = Ecp.build(store.unit_of_work, signer=SIGNER)
    graph = (
        GraphBuilder("approve-then-end")
        .action("set_value", "set", arguments={"values": {"amount_cents": 4200}})
        .approval("review", summary="Approve the amount", rationale="Payments need a person")
        .end("done")
        .chain("set_value", "review", "done")
        .build()
    )
    ecp.graphs.register(TENANT, graph)
    ecp.graphs.deploy(
        TENANT, CreateDeploymentRequest(deployment_ref=DEPLOYMENT, graph_id="approve-then-end")
    )
    return ecp


def ecp_run(ecp: Ecp, index: int, *, together: bool = True) -> str:
    """Start and drive to the approval, approve (which drives to the end); return the run id.

    ``together``: ``runs.start_and_drive`` (the start and the first attempts share a commit,
    ADR 0067); otherwise ``runs.start`` then ``runs.drive``, a commit each.
    """
    request = StartRunRequest(deployment_ref=DEPLOYMENT, input={"order": f"A-{index}"})
    if together:
        run, _ = ecp.runs.start_and_drive(TENANT, request)
    else:
        run, _ = ecp.runs.start(TENANT, request)
        run = ecp.runs.drive(TENANT, run.run_id)
    if run.status is not RunStatus.WAITING_APPROVAL:
        raise SystemExit(f"ECP run {run.run_id} is {run.status}, not waiting for approval")
    answer = ecp.resolve(
        REVIEWER,
        DEPLOYMENT,
        run.pending_approval_ids[0],
        ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE),
    )
    if answer.run.status.value != "completed":
        raise SystemExit(f"ECP run {run.run_id} ended {answer.run.status.value}")
    return run.run_id


LANGGRAPH_MODULES = ("langgraph.checkpoint.postgres", "langgraph.graph", "langgraph.types")


def langgraph_missing() -> str | None:
    """None when LangGraph and its Postgres checkpointer import, else why they do not."""
    try:
        for module in LANGGRAPH_MODULES:
            importlib.import_module(module)
    except ImportError as exc:
        return str(exc)
    return None


class LangGraphState(TypedDict, total=False):
    order: str
    amount_cents: int
    decision: str
    done: bool


def lg_set_value(_: LangGraphState) -> LangGraphState:
    return {"amount_cents": 4200}


def lg_review(state: LangGraphState) -> LangGraphState:
    interrupt = importlib.import_module("langgraph.types").interrupt
    decision = interrupt({"summary": "Approve the amount", "amount_cents": state["amount_cents"]})
    return {"decision": decision}


def lg_done(_: LangGraphState) -> LangGraphState:
    return {"done": True}


class LangGraphContender:
    """set -> interrupt -> end, compiled with a PostgresSaver on its own connection."""

    def __init__(self, url: str) -> None:
        saver_module = importlib.import_module("langgraph.checkpoint.postgres")
        graph_module = importlib.import_module("langgraph.graph")
        self._command = importlib.import_module("langgraph.types").Command
        # The connection settings of PostgresSaver.from_conn_string.
        self.conn = psycopg.Connection.connect(
            url, autocommit=True, prepare_threshold=0, row_factory=dict_row
        )
        saver = saver_module.PostgresSaver(self.conn)
        saver.setup()
        builder = graph_module.StateGraph(LangGraphState)
        builder.add_node("set_value", lg_set_value)
        builder.add_node("review", lg_review)
        builder.add_node("done", lg_done)
        builder.add_edge(graph_module.START, "set_value")
        builder.add_edge("set_value", "review")
        builder.add_edge("review", "done")
        builder.add_edge("done", graph_module.END)
        self.graph = builder.compile(checkpointer=saver)

    def run(self, index: int, durability: str | None) -> None:
        """Invoke until the interrupt, resume with an approval, check that it completed."""
        config = {"configurable": {"thread_id": f"bench-{durability or 'default'}-{index}"}}
        options = {} if durability is None else {"durability": durability}
        paused = self.graph.invoke({"order": f"A-{index}"}, config, **options)
        if "__interrupt__" not in paused:
            raise SystemExit(f"LangGraph run {index} did not stop at the interrupt: {paused}")
        final = self.graph.invoke(self._command(resume="approve"), config, **options)
        if not final.get("done") or final.get("decision") != "approve":
            raise SystemExit(f"LangGraph run {index} did not complete: {final}")


def each(run: Callable[[int], object]) -> Callable[[int, int], None]:
    def runs(lo: int, hi: int) -> None:
        for index in range(lo, hi):
            run(index)

    return runs


def bench_runs(databases: Databases, count: int, deadline: float, *, profile: int) -> list[Figure]:
    ecp_url = databases.fresh("ecp")[1]
    store = PostgresStore(ecp_url, max_size=2)
    postmaster = backend_postmaster(ecp_url)
    langgraph = replay = None
    try:
        ecp = ecp_service(store)
        contenders: dict[str, Callable[[int], object]] = {
            "ecp": lambda i: ecp_run(ecp, i),
            "ecp_separate": lambda i: ecp_run(ecp, i, together=False),
        }
        missing = langgraph_missing()
        if missing is None:
            langgraph = LangGraphContender(databases.fresh("langgraph", migrate=False)[1])
            contenders["langgraph"] = lambda i: langgraph.run(i, None)
            contenders["langgraph_sync"] = lambda i: langgraph.run(i, "sync")
        else:
            print(f"  LangGraph comparison skipped: langgraph is not importable ({missing})")
            print("  (bench-only dependencies: .venv/bin/pip install -r bench/requirements.txt)")
        for run in contenders.values():  # warm up: pool, prepared statements, imports
            each(run)(1_000_000, 1_000_005)
        replay = Replay.of(ecp_url, lambda: ecp_run(ecp, 1_500_000))
        contenders["floor"] = replay.run
        each(replay.run)(1_000_000, 1_000_005)
        replay.count_completed()
        postgres: dict[str, float] = {}
        steps = {
            name: metered(each(run), postmaster, postgres, name) for name, run in contenders.items()
        }
        timings = interleave(steps, count, RUN_ROUNDS, deadline, "runs")
        replay.check(timings["floor"].count, timings["ecp"].count + timings["ecp_separate"].count)
        figures = report_runs(timings)
        figures += report_floor(timings, replay)

        run_id = ecp_run(ecp, 2_000_000)
        result = ecp.audit.verify_run(TENANT, run_id)
        if not (result.verified and result.signature_verified and result.record_count == 4):
            raise SystemExit(f"an ECP run's audit chain does not verify: {result}")
        attempts = ecp.runs.get(TENANT, run_id).attempts
        figures += report_postgres(timings, postgres, attempts, postmaster)
        figures += ecp_statements(ecp, 2_000_001)
        if profile:
            profile_ecp(ecp, profile, 3_000_000)
    finally:
        store.close()
        if replay is not None:
            replay.close()
        if langgraph is not None:
            langgraph.conn.close()
    return figures


def report_runs(timings: dict[str, Timing]) -> list[Figure]:
    ecp, separate = timings["ecp"], timings["ecp_separate"]
    print(rate_line("ECP, start_and_drive (4 signed records)", ecp, "runs"))
    print(rate_line("ECP, start then drive (4 signed records)", separate, "runs"))
    figures = [
        Figure(
            "ECP client CPU per completed run, ms",
            ecp.cpu_ms,
            "ms",
            CLIENT_CPU_TARGET,
            at_most=True,
        ),
        Figure("ECP completed runs/s (start_and_drive)", ecp.rate, "/s"),
        Figure("ECP completed runs/s (start, then drive)", separate.rate, "/s"),
    ]
    if "langgraph" not in timings:
        return [*figures, Figure("ECP / LangGraph", None, "x", RUNS_TARGET)]
    default, sync = timings["langgraph"], timings["langgraph_sync"]
    print(rate_line("LangGraph + PostgresSaver (durability async)", default, "runs"))
    print(rate_line("LangGraph + PostgresSaver (durability sync)", sync, "runs"))
    ratio, ratio_sync = paired_ratio(ecp, default), paired_ratio(ecp, sync)
    ratio_separate = paired_ratio(separate, default)
    print(
        f"  ECP / LangGraph (async, its default): {ratio:.2f} (median of paired rounds; "
        f"{ecp.rate / default.rate:.2f} overall; target >= {RUNS_TARGET})"
    )
    print(f"  ECP / LangGraph (sync): {ratio_sync:.2f} ({ecp.rate / sync.rate:.2f} overall)")
    print(f"  ECP start then drive / LangGraph (async): {ratio_separate:.2f}")
    return [
        *figures,
        Figure("LangGraph completed runs/s (async)", default.rate, "/s"),
        Figure("LangGraph completed runs/s (sync)", sync.rate, "/s"),
        Figure("ECP / LangGraph (async, its default)", ratio, "x", RUNS_TARGET),
        Figure("ECP / LangGraph (sync)", ratio_sync, "x"),
        Figure("ECP start then drive / LangGraph (async)", ratio_separate, "x"),
    ]


def report_postgres(
    timings: dict[str, Timing], postgres: dict[str, float], attempts: int, postmaster: int | None
) -> list[Figure]:
    """PostgreSQL's CPU per run of each contender, and per node attempt of ECP's runs.

    All of the server's processes count (the postmaster, its backends and background workers,
    and the backends that exited), while each contender ran; DBOS publishes about 1,000
    workflow steps per second per PostgreSQL vCPU, 1 ms of its CPU per step.
    """
    if postmaster is None:
        print("  PostgreSQL CPU: n/a (the server does not run on this machine)")
        return [Figure("PostgreSQL CPU per node attempt, ms", None, "ms", PG_ATTEMPT_TARGET)]
    per_run = {name: postgres[name] * 1e3 / max(timings[name].count, 1) for name in timings}
    shown = ", ".join(f"{name} {ms:.2f}" for name, ms in per_run.items())
    per_attempt = per_run["ecp"] / max(attempts, 1)
    print(f"  PostgreSQL CPU per completed run (all its processes), ms: {shown}")
    print(
        f"  PostgreSQL CPU per ECP node attempt ({attempts} a run): {per_attempt:.3f} ms"
        f" (DBOS: about 1,000 steps/s per PostgreSQL vCPU, 1 ms a step; target"
        f" <= {PG_ATTEMPT_TARGET} ms)"
    )
    return [
        Figure("PostgreSQL CPU per ECP run, ms", per_run["ecp"], "ms"),
        Figure(
            "PostgreSQL CPU per node attempt, ms",
            per_attempt,
            "ms",
            PG_ATTEMPT_TARGET,
            at_most=True,
        ),
    ]


# -- diagnostics of the ECP run path -------------------------------------------------------------


def ecp_statements(ecp: Ecp, index: int) -> list[Figure]:
    """Print the statements one ECP run sends, by kind; the counts as figures.

    Every statement through any cursor is counted (the adapter's one statement of batched
    writes as one), each COMMIT, and the implicit ``BEGIN`` psycopg sends before each
    transaction's first statement (one per commit here: every transaction of the run commits).
    """
    with statements_seen() as seen:
        ecp_run(ecp, index)
    kinds: dict[str, int] = {}
    for sql in seen:
        kinds[statement_kind(sql)] = kinds.get(statement_kind(sql), 0) + 1
    commits = kinds.get("COMMIT", 0)
    total = len(seen) + commits  # the BEGINs
    print(
        f"\nstatements of one ECP run: {total} in all: {len(seen) - commits} statements,"
        f" {commits} BEGIN and {commits} COMMIT"
    )
    for kind, number in sorted(kinds.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {number:3d}  {kind}")
    return [
        Figure(
            "SQL statements per run (BEGIN, COMMIT in)", total, "", STATEMENTS_TARGET, at_most=True
        ),
        Figure("commits per run", commits, "", COMMITS_TARGET, at_most=True),
    ]


PROFILE_ROWS = (
    ("Connection.execute (SQL statements)", "psycopg/connection.py", "execute"),
    ("Connection.commit", "psycopg/connection.py", "commit"),
    ("Connection.wait (all round trips)", "psycopg/connection.py", "wait"),
    ("Table.load (rows -> models, cattrs)", "ecp_postgres/rows.py", "load"),
    ("require_graph (SELECT + GraphDefinition)", "ecp_core/graphs/catalog.py", "require_graph"),
    ("Table.params (models -> parameters)", "ecp_postgres/rows.py", "params"),
    ("seal (commitments, digest, Ed25519)", "ecp_core/audit/chain.py", "seal"),
    ("ConnectionPool.getconn", "psycopg_pool/pool.py", "getconn"),
    ("ConnectionPool.putconn", "psycopg_pool/pool.py", "putconn"),
)


def profile_ecp(ecp: Ecp, count: int, offset: int) -> None:
    """cProfile ``count`` ECP runs; print where the time goes and the top functions."""
    profiler = cProfile.Profile()
    started = time.perf_counter()
    profiler.enable()
    for index in range(offset, offset + count):
        ecp_run(ecp, index)
    profiler.disable()
    wall = time.perf_counter() - started
    raw: dict[tuple[str, int, str], tuple[int, int, float, float, Any]]
    raw = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(own for _, _, own, _, _ in raw.values())
    per = 1e3 / count

    def cumulative(path_part: str, function: str) -> float:
        return sum(
            cum
            for (path, _, name), (_, _, _, cum, _) in raw.items()
            if path_part in path and name == function
        )

    print(f"\ncProfile of {count} ECP runs ({wall * per:.2f} ms/run under the profiler)")
    print(f"  {'where the time goes (cumulative, overlapping)':<48} {'ms/run':>7} {'share':>6}")
    for label, path, function in PROFILE_ROWS:
        seconds = cumulative(path, function)
        print(f"  {label:<48} {seconds * per:7.3f} {seconds / total:6.1%}")
    print("  top 12 functions by own time:")
    ranked = sorted(raw.items(), key=lambda item: item[1][2], reverse=True)[:12]
    for (path, line, name), (_, calls, own, cum, _) in ranked:
        where = "/".join(path.split("/")[-2:])
        print(
            f"    {own * per:6.3f} ms own {cum * per:7.3f} ms cum {calls / count:6.1f} calls/run"
            f"  {where}:{line}({name})"
        )


# -- main ---------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", type=int, default=5_000, help="audit records per method (default 5000)"
    )
    parser.add_argument(
        "--runs", type=int, default=200, help="completed runs per contender (default 200)"
    )
    parser.add_argument(
        "--profile", type=int, default=40, help="ECP runs to profile (default 40; 0: none)"
    )
    parser.add_argument(
        "--budget", type=float, default=150.0, help="seconds for the timed parts (default 150)"
    )
    args = parser.parse_args()
    figures: list[Figure] = []

    with server() as url:
        databases = Databases(url)
        try:
            describe_server(databases.fresh("scratch", migrate=False)[1])
            print(
                f"\n1. audit appends: {args.records:,} records per method into one run's chain, "
                "one transaction each"
            )
            started = time.perf_counter()
            if args.records > 0:
                figures += bench_appends(databases, args.records, started + 0.3 * args.budget)
            print(
                f"\n2. audit appends inside attempts: {args.records:,} attempts per method, each "
                "locking its run, writing one record and the run's state, and committing"
            )
            started = time.perf_counter()
            if args.records > 0:
                figures += bench_attempt_appends(
                    databases,
                    args.records,
                    started + 0.2 * args.budget,
                    tenant_id=TENANT,
                    signer=SIGNER,
                    fields=attempt_fields,
                )
            print(
                f"\n3. completed runs (set -> approval -> end): {args.runs:,} per contender; "
                f"{load_note()}"
            )
            started = time.perf_counter()
            if args.runs > 0:
                figures += bench_runs(
                    databases, args.runs, started + 0.4 * args.budget, profile=args.profile
                )
            if figures:
                print_summary(figures)
            print(f"  ({load_note()} at the end: other processes' load makes the figures noisy)")
        finally:
            databases.drop_all()


if __name__ == "__main__":
    main()
