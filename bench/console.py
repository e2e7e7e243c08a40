"""The console's lists on PostgreSQL: the inbox with 10,000 pending approvals, the run list with
100,000 runs; how long the server takes for a first page and for the next pages (keyset).

Run as ``python bench/console.py [--approvals N] [--runs N] [--requests N]``. It prints figures
and checks only that what it got is right (full pages, each row once across the pages walked),
never anything about timing. The database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance
database) when set, else an embedded PostgreSQL; the database is fresh, migrated and dropped at
the end.

One run waiting for its approval is made through the API; the rest are bulk copies of its rows
made by SQL (``INSERT ... SELECT`` over ``generate_series``): ``--runs`` runs over four
deployments and every public status, started a second apart, and ``--approvals`` pending
approvals with SLA deadlines spread over a week (a tenth without one). Then the page handlers
are called in this process as the server calls them (the session cookie opened, the page read
and rendered), ``--requests`` times for each figure: the first page, and next pages following
each page's cursor (25 rows a page). Printed: the median and p99 of the server time per page,
against the target of 50 ms at the median.
"""

from __future__ import annotations

import argparse
import base64
import html as markup
import re
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import psycopg
from starlette.responses import Response
from starlette.testclient import TestClient

from _database import Databases, server
from _rounds import Figure, load_note, percentile, print_summary
from ecp_core.identity import ActorIdentity
from ecp_core.system import SystemClock
from ecp_core.types import AuthMethod, ServiceRole
from ecp_http.config.settings import Settings
from ecp_http.server.auth import mint_token
from ecp_http.server.console import approvals, runs
from ecp_http.server.console_sessions import CONSOLE_COOKIE, ConsoleSessions
from ecp_http.server.routing import Call
from ecp_http.startup.app import create_app
from ecp_http.wire.models import ConsoleInboxQuery, ConsoleRunsQuery

if TYPE_CHECKING:
    from collections.abc import Callable

TENANT = "bench-console"
JWT_SECRET = "bench-" + "c" * 40
SIGNING_KEY = base64.b64encode(bytes(range(7, 39))).decode("ascii")
TARGET_MS = 50.0
PAGE = 25
STATUSES = ("COMPLETED", "COMPLETED", "COMPLETED", "FAILED", "WAITING_APPROVAL", "CANCELED")
"""The stored statuses of the copied runs, in turn (most runs have ended)."""

GRAPH = {
    "graph_id": "pay",
    "entry": "review",
    "nodes": [
        {"id": "review", "kind": "approval", "summary": "Pay", "rationale": "Over the limit"},
        {"id": "done", "kind": "end"},
    ],
    "edges": [{"source": "review", "target": "done"}],
}


def check(condition: object, problem: str) -> None:
    """Stop the benchmark when what it got is wrong."""
    if not condition:
        raise SystemExit(problem)


def _columns(conn: psycopg.Connection[Any], table: str) -> list[str]:
    rows = conn.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_name = %s"
        " ORDER BY ordinal_position",
        (table,),
    ).fetchall()
    return [row[0] for row in rows]


def _copy(
    conn: psycopg.Connection[Any], table: str, key: str, count: int, changed: dict[str, str]
) -> None:
    """``count`` copies of the table's one row whose ``key`` is the template's, with ``changed``
    columns computed from ``i`` (1 to count)."""
    columns = _columns(conn, table)
    chosen = ", ".join(changed.get(column, column).replace("%", "%%") for column in columns)
    conn.execute(
        f"INSERT INTO {table} ({', '.join(columns)})"  # noqa: S608 - names are the table's own
        f" SELECT {chosen} FROM {table} t, generate_series(1, %s) AS i WHERE t.{key} = %s",
        (count, "template"),
    )


def seed(url: str, runs_count: int, approvals_count: int) -> None:
    """Bulk copies of the template run (renamed ``template``) and of its approval."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE ecp_runs SET run_id = 'template' WHERE tenant_id = %s", (TENANT,))
        conn.execute(
            "UPDATE ecp_approvals SET approval_id = 'template' WHERE tenant_id = %s", (TENANT,)
        )
        began = time.perf_counter()
        statuses = "ARRAY[" + ", ".join(f"'{s}'" for s in STATUSES) + "]"
        _copy(
            conn,
            "ecp_runs",
            "run_id",
            runs_count,
            {
                "run_id": "'r' || lpad(i::text, 9, '0')",
                "thread_id": "'r' || lpad(i::text, 9, '0')",
                "deployment_ref": "'pay-' || (i % 4)",
                "status": f"({statuses})[1 + i % {len(STATUSES)}]",
                "idempotency_key": "'order-' || i",
                "paused": "CASE WHEN i % 6 = 4 THEN t.paused END",
                "pending_approval_ids": "CASE WHEN i % 6 = 4 THEN t.pending_approval_ids"
                " ELSE '[]'::jsonb END",
                "created_at": "timestamptz '2026-01-01' + i * interval '1 second'",
                "updated_at": "timestamptz '2026-01-01' + (i + 30) * interval '1 second'",
            },
        )
        conn.execute("DELETE FROM ecp_runs WHERE run_id = 'template'")
        _copy(
            conn,
            "ecp_approvals",
            "approval_id",
            approvals_count,
            {
                "approval_id": "'a' || lpad(i::text, 9, '0')",
                "run_id": "'r' || lpad(i::text, 9, '0')",
                "deployment_ref": "'pay-' || (i % 4)",
                "sla_deadline": "CASE WHEN i % 10 = 0 THEN NULL ELSE timestamptz '2027-01-01'"
                " + ((i * 7919) % 604800) * interval '1 second' END",
            },
        )
        conn.execute("DELETE FROM ecp_approvals WHERE approval_id = 'template'")
        conn.execute("ANALYZE ecp_runs")
        conn.execute("ANALYZE ecp_approvals")
        print(
            f"seeded {runs_count:,} runs and {approvals_count:,} pending approvals"
            f" in {time.perf_counter() - began:.1f} s"
        )


def _cookie(role: ServiceRole, secret: str = JWT_SECRET) -> str:
    """A console session cookie for ``role`` in the bench tenant, signed with ``secret``."""
    sessions = ConsoleSessions(secret, hours=1, secure=False, clock=SystemClock())
    actor = ActorIdentity(
        subject="bench", auth_method=AuthMethod.BEARER, roles=(role,), tenant_id=TENANT
    )
    response = Response()
    sessions.start(response, actor, key_id=None, until=None)
    return f"{CONSOLE_COOKIE}={response.headers['set-cookie'].split(';')[0].split('=', 1)[1]}"


def _timed(
    services: Any, handler: Callable[..., Response], params: Any, cookie: str
) -> tuple[float, str]:
    call = Call(actor=None, path={}, params=params, headers={"cookie": cookie})
    began = time.perf_counter()
    answer = handler(call, services)
    spent = time.perf_counter() - began
    check(answer.status_code == 200, bytes(answer.body[:500]).decode())
    return spent, bytes(answer.body).decode()


def _cursor(html: str) -> str | None:
    found = re.search(r'href="([^"]*cursor=[^"]+)">Next page', html)
    if found is None:
        return None
    return parse_qs(urlsplit(markup.unescape(found.group(1))).query)["cursor"][0]


@dataclass(frozen=True)
class Listing:
    """One list page to measure: its handler, query model, filters, role and row link."""

    label: str
    handler: Callable[..., Response]
    query: type
    role: ServiceRole
    row: str
    filters: dict[str, str] = field(default_factory=dict)


INBOX_ROW = 'href="/console/approvals/'
RUN_ROW = 'class="strong mono" href="/console/runs/'


def measure(services: Any, listing: Listing, requests: int) -> list[Figure]:
    """The first page ``requests`` times, then up to ``requests`` next pages by their cursors."""
    cookie, label, row = _cookie(listing.role), listing.label, listing.row

    def page(**more: str) -> tuple[float, str]:
        return _timed(services, listing.handler, listing.query(**listing.filters, **more), cookie)

    first = []
    html = ""
    for _ in range(requests):
        spent, html = page()
        first.append(spent)
    check(html.count(row) == PAGE, f"{label}: not a full page")
    following: list[float] = []
    seen, cursor = _rows(html, row), _cursor(html)
    while len(following) < requests and cursor is not None:
        spent, html = page(cursor=cursor)
        following.append(spent)
        rows = _rows(html, row)
        check(not seen & rows, f"{label}: a row came twice")
        seen |= rows
        cursor = _cursor(html)
    for name, values in (("first page", first), ("next pages", following)):
        print(
            f"  {label + ', ' + name:<44} median {percentile(values, 0.5) * 1e3:6.1f} ms,"
            f" p99 {percentile(values, 0.99) * 1e3:6.1f} ms ({len(values)} requests)"
        )
    return [
        Figure(
            f"{label}: {name}, median",
            percentile(values, 0.5) * 1e3,
            "ms",
            TARGET_MS,
            at_most=True,
        )
        for name, values in (("first page", first), ("next pages", following))
    ]


def _rows(html: str, row: str) -> set[str]:
    return set(re.findall(re.escape(row) + r'([^"]+)"', html))


LISTINGS = (
    Listing("inbox", approvals.inbox, ConsoleInboxQuery, ServiceRole.APPROVER, INBOX_ROW),
    Listing("runs", runs.runs_page, ConsoleRunsQuery, ServiceRole.ADMIN, RUN_ROW),
    Listing(
        "runs, failed in one deployment",
        runs.runs_page,
        ConsoleRunsQuery,
        ServiceRole.ADMIN,
        RUN_ROW,
        {"deployment": "pay-1", "status": "failed"},
    ),
    Listing(
        "runs, one day",
        runs.runs_page,
        ConsoleRunsQuery,
        ServiceRole.ADMIN,
        RUN_ROW,
        {"started_from": "2026-01-01", "started_to": "2026-01-01"},
    ),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--approvals", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=200)
    args = parser.parse_args()
    print(load_note())
    databases = None
    with server() as url:
        databases = Databases(url)
        try:
            _, database = databases.fresh("console")
            settings = Settings(
                database_url=database,
                jwt_secret=JWT_SECRET,
                audit_signing_key=SIGNING_KEY,
                insecure_cookies=True,
            )
            app = create_app(settings)
            with TestClient(app) as client:
                admin = {
                    "Authorization": "Bearer "
                    + mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], subject="bench")
                }
                made = client.post("/v1/graphs", json=GRAPH, headers=admin)
                check(made.status_code == 201, made.text)
                body = {"deployment_ref": "pay-0", "graph_id": "pay"}
                made = client.post("/v1/deployments", json=body, headers=admin)
                check(made.status_code == 201, made.text)
                started = client.post(
                    "/runs",
                    json={"deployment_ref": "pay-0", "input": {"amount": 1200}},
                    headers={**admin, "Prefer": "wait=10"},
                ).json()
                check(started["status"] == "waiting_approval", str(started))
                seed(database, args.runs, args.approvals)
                services = app.state.runtime.services
                figures = [
                    figure
                    for listing in LISTINGS
                    for figure in measure(services, listing, args.requests)
                ]
                found = _timed(
                    services,
                    runs.runs_page,
                    ConsoleRunsQuery(find=f"order-{args.runs // 2}"),
                    _cookie(ServiceRole.ADMIN),
                )
                print(f"  runs, by idempotency key (one request)       {found[0] * 1e3:6.1f} ms")
            print_summary(figures)
        finally:
            databases.drop_all()


if __name__ == "__main__":
    main()
