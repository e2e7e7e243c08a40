"""Server memory at size: the resident set of ``ecp serve`` on a database with 100,000 runs stored
and 10,000 of them waiting for an approval.

Run as ``python bench/memory.py [--runs N] [--waiting N] [--requests N]``. It prints figures and
checks only that the server answered what it should, never anything about timing or size. The
database server is ``ECP_BENCH_DATABASE_URL`` (a maintenance database) when set, else an embedded
PostgreSQL; the database is fresh, migrated and dropped at the end.

A first ``ecp serve`` registers the console bench's graph and makes one run wait for its
approval; it stops, and ``console.py``'s bulk copies (``INSERT ... SELECT`` through the real
schema) make ``--runs`` runs of it, of which exactly ``--waiting`` wait, each with one pending
approval. Then a second, fresh ``ecp serve`` (one process) starts on that database, and its
resident set (``VmRSS``) is read once it has been idle for a few seconds, after it has been
exercised (``--requests`` pages of ``GET /admin/runs`` and of the inbox ``GET /v1/approvals``
followed by their ``next`` links, as many ``GET /runs/{id}`` and ``GET /v1/approvals/{id}`` of
stored runs, the console's run list and inbox, and 20 new runs started and approved), and at its
peak (``VmHWM``). Target: at most 150 MiB after the exercise.
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import tempfile
import time
from typing import Any

import httpx
import psycopg

from _cpu import memory_bytes
from _database import Databases, server
from _rounds import Figure, load_note, print_summary
from _scale_parts import JWT_SECRET, Served
from console import GRAPH, TENANT, _cookie, check, seed
from ecp_core.types import ServiceRole
from ecp_http.server.auth import mint_token

TARGET_MIB = 150.0
SETTLE_SECONDS = 3.0
NEW_RUNS = 20
MIB = 1024 * 1024


def start_and_approve(http: httpx.Client, index: int) -> str:
    """A run of the graph started with ``Prefer: wait`` and approved to its end; its id."""
    started = http.post(
        "/runs",
        json={"deployment_ref": "pay-0", "input": {"amount": index}},
        headers={"Prefer": "wait=10"},
    ).json()
    check(started.get("status") == "waiting_approval", f"POST /runs: {started}")
    approval = started["pending_approval_ids"][0]
    answer = http.post(
        f"/deployments/pay-0/approvals/{approval}/resolve", json={"decision": "approve"}
    )
    check(answer.status_code == 200, f"resolve: {answer.text[:300]}")
    check(answer.json()["run"]["status"] == "completed", f"resolve: {answer.text[:300]}")
    return str(started["run_id"])


def narrow(url: str, waiting: int) -> None:
    """Exactly ``waiting`` of the copied runs wait, each for one of the copied approvals.

    The copies wait for every sixth run (``i % 6 = 4``): the first ``waiting`` of those keep
    waiting for approval ``i`` = (run + 2) / 6, the others are completed.
    """
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE ecp_runs SET status = 'COMPLETED', paused = NULL,"
            " pending_approval_ids = '[]'::jsonb WHERE tenant_id = %s"
            " AND status = 'WAITING_APPROVAL' AND substr(run_id, 2)::int > 6 * %s - 2",
            (TENANT, waiting),
        )
        conn.execute(
            "UPDATE ecp_runs SET pending_approval_ids = jsonb_build_array("
            "'a' || lpad(((substr(run_id, 2)::int + 2) / 6)::text, 9, '0'))"
            " WHERE tenant_id = %s AND status = 'WAITING_APPROVAL'",
            (TENANT,),
        )
        conn.execute(
            "UPDATE ecp_approvals SET run_id ="
            " 'r' || lpad((6 * substr(approval_id, 2)::int - 2)::text, 9, '0')"
            " WHERE tenant_id = %s",
            (TENANT,),
        )
        conn.execute("VACUUM ANALYZE ecp_runs")
        conn.execute("VACUUM ANALYZE ecp_approvals")
        counted = conn.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'WAITING_APPROVAL') FROM ecp_runs"
            " WHERE tenant_id = %s",
            (TENANT,),
        ).fetchone()
    print(f"  stored: {counted[0]:,} runs, {counted[1]:,} of them waiting for an approval")


def walk(http: httpx.Client, path: str, pages: int) -> int:
    """Follow ``path``'s ``next`` links for up to ``pages`` pages; the number of pages read."""
    read = 0
    following: str | None = path
    while following is not None and read < pages:
        answer = http.get(following)
        check(answer.status_code == 200, f"GET {following}: {answer.text[:300]}")
        read += 1
        following = answer.links.get("next", {}).get("url")
    return read


def exercise(http: httpx.Client, requests: int) -> None:
    """Lists, reads by id, the console's pages, and new runs to their end."""
    runs_pages = walk(http, "/admin/runs?limit=100", requests)
    inbox_pages = walk(http, "/v1/approvals?limit=100", requests)
    for index in range(requests):
        number = 1 + (index * 7919) % (requests * 100)
        answer = http.get(f"/runs/r{number:09d}")
        check(answer.status_code == 200, f"GET /runs: {answer.text[:300]}")
        answer = http.get(f"/v1/approvals/a{1 + index:09d}")
        check(answer.status_code == 200, f"GET /v1/approvals: {answer.text[:300]}")
    cookie = _cookie(ServiceRole.ADMIN, JWT_SECRET)
    for path in ("/console/runs", "/console/inbox", "/console/runs/r000000004"):
        for _ in range(max(1, requests // 10)):
            answer = http.get(path, headers={"cookie": cookie})
            check(answer.status_code == 200, f"GET {path}: {answer.status_code}")
    for index in range(NEW_RUNS):
        start_and_approve(http, index)
    print(
        f"  exercised: {runs_pages} pages of runs, {inbox_pages} of the inbox, {requests} runs and"
        f" approvals by id, the console's lists, {NEW_RUNS} new runs to their end"
    )


def resident(served: Served, when: str) -> tuple[float, float]:
    """Print and return the server's resident set now and at its peak, in MiB."""
    found = memory_bytes(served.pids[0])
    check(found is not None, "the server's /proc/<pid>/status cannot be read")
    now, peak = (value / MIB for value in found or (0, 0))
    print(f"  server resident set {when:<28} {now:6.1f} MiB (peak so far {peak:6.1f} MiB)")
    return now, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--waiting", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=50)
    args = parser.parse_args()
    check(0 < args.waiting <= args.runs // 6, "--waiting is at most a sixth of --runs")
    print(load_note())
    token = mint_token(JWT_SECRET, tenant=TENANT, roles=["admin"], subject="bench")
    headers: dict[str, Any] = {"Authorization": f"Bearer {token}"}
    data = pathlib.Path(tempfile.mkdtemp(prefix="ecp-memory-"))
    with server() as url:
        databases = Databases(url)
        try:
            _, database = databases.fresh("memory")
            served = Served(1, database, data)
            try:
                with httpx.Client(base_url=served.base_url, headers=headers, timeout=60) as http:
                    made = http.post("/v1/graphs", json=GRAPH)
                    check(made.status_code == 201, made.text)
                    body = {"deployment_ref": "pay-0", "graph_id": "pay"}
                    made = http.post("/v1/deployments", json=body)
                    check(made.status_code == 201, made.text)
                    template = http.post(
                        "/runs",
                        json={"deployment_ref": "pay-0", "input": {"amount": 1200}},
                        headers={"Prefer": "wait=10"},
                    ).json()
                    check(template.get("status") == "waiting_approval", str(template))
            finally:
                served.stop()
            seed(database, args.runs, args.waiting)
            narrow(database, args.waiting)
            began = time.perf_counter()
            served = Served(1, database, data)
            try:
                print(f"  ecp serve started in {time.perf_counter() - began:.1f} s")
                time.sleep(SETTLE_SECONDS)
                idle, _ = resident(served, "idle after start")
                with httpx.Client(base_url=served.base_url, headers=headers, timeout=60) as http:
                    exercise(http, args.requests)
                time.sleep(SETTLE_SECONDS)
                used, peak = resident(served, "after the exercise")
            finally:
                served.stop()
            print_summary(
                [
                    Figure("server RSS idle after start, MiB", idle, "MiB"),
                    Figure(
                        "server RSS after the exercise, MiB", used, "MiB", TARGET_MIB, at_most=True
                    ),
                    Figure("server RSS at its peak, MiB", peak, "MiB"),
                ]
            )
        finally:
            databases.drop_all()
            shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
