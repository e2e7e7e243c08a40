"""Completed runs through HTTP for the bench scripts: the example graph (``ecp_core.demo``) deployed,
each run started with ``Prefer: wait`` and approved, by several clients at once; or the same graph
without its approval (``STRAIGHT``), each run completed by its start. Imported by the bench
scripts; not run."""

from __future__ import annotations

import concurrent.futures
import statistics
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from ecp_core.demo import EXAMPLE_GRAPH

DEPLOYMENT = "refunds"
STRAIGHT = "refunds-straight"
"""The deployment of the example graph without its approval: a start completes the run."""


def straight_graph() -> dict[str, Any]:
    """The example graph with its approval node left out (classify -> notify -> done)."""
    nodes = [node for node in EXAMPLE_GRAPH["nodes"] if node["kind"] != "approval"]
    approval = next(node["id"] for node in EXAMPLE_GRAPH["nodes"] if node["kind"] == "approval")
    after = next(edge["target"] for edge in EXAMPLE_GRAPH["edges"] if edge["source"] == approval)
    edges = [
        {**edge, "target": after} if edge["target"] == approval else edge
        for edge in EXAMPLE_GRAPH["edges"]
        if edge["source"] != approval
    ]
    graph_id = f"{EXAMPLE_GRAPH['graph_id']}-straight"
    return {**EXAMPLE_GRAPH, "graph_id": graph_id, "nodes": nodes, "edges": edges}


def median_ms(values: list[float]) -> str:
    return f"{statistics.median(values) * 1e3:.1f} ms" if values else "n/a"


@dataclass
class RunLoop:
    """Runs a client loop completed, with the latency of each of its two requests."""

    completed: int = 0
    seconds: float = 0.0
    start_latency: list[float] = field(default_factory=list)
    resolve_latency: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def approve_runs(
    base_url: str,
    headers: dict[str, str],
    count: int,
    deadline: float,
    loop: RunLoop,
    *,
    deployment: str = DEPLOYMENT,
) -> None:
    """Start and approve up to ``count`` runs, one after the other, until ``deadline``; on the
    ``STRAIGHT`` deployment each start's answer is the completed run."""
    straight = deployment == STRAIGHT
    awaited = "completed" if straight else "waiting_approval"
    with httpx.Client(base_url=base_url, headers=headers, timeout=60.0) as http:
        for index in range(count):
            if time.perf_counter() > deadline:
                return
            began = time.perf_counter()
            started = http.post(
                "/runs",
                json={"deployment_ref": deployment, "input": {"order": f"B-{index}"}},
                headers={"Prefer": "wait=10"},
            )
            loop.start_latency.append(time.perf_counter() - began)
            run = started.json()
            if started.status_code != 201 or run.get("status") != awaited:
                loop.problems.append(f"POST /runs: {started.status_code} {started.text[:200]}")
                continue
            if straight:
                loop.completed += 1
                continue
            began = time.perf_counter()
            resolved = http.post(
                f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
                json={"decision": "approve"},
            )
            loop.resolve_latency.append(time.perf_counter() - began)
            status = resolved.json().get("run", {}).get("status")
            if resolved.status_code != 200 or status != "completed":
                loop.problems.append(f"resolve: {resolved.status_code} {resolved.text[:200]}")
                continue
            loop.completed += 1


def bench_runs(
    base_url: str,
    headers: dict[str, str],
    clients: int,
    count: int,
    seconds: float,
    *,
    deployment: str = DEPLOYMENT,
) -> RunLoop:
    """``clients`` client loops at once, ``count`` runs in all, for at most ``seconds``, on
    ``deployment`` (the example graph's, or ``STRAIGHT``)."""
    loop = RunLoop()
    deadline = time.perf_counter() + seconds
    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        share = -(-count // clients)
        futures = [
            pool.submit(
                approve_runs, base_url, headers, share, deadline, loop, deployment=deployment
            )
            for _ in range(clients)
        ]
        for future in futures:
            future.result()
    loop.seconds = time.perf_counter() - began
    return loop


def print_runs(label: str, loop: RunLoop, server_cpu: float | None = None) -> float:
    """Print a loop's rate, latencies and the server's CPU per run (when given); return the rate."""
    rate = loop.completed / loop.seconds if loop.seconds > 0 else 0.0
    cpu = (
        ""
        if server_cpu is None
        else f"; server CPU {server_cpu / max(loop.completed, 1) * 1e3:.1f} ms/run"
    )
    print(
        f"  {label:<26} {rate:7.1f} runs/s  ({loop.completed} runs in {loop.seconds:.1f} s; "
        f"median POST /runs with wait {median_ms(loop.start_latency)}, "
        f"resolve {median_ms(loop.resolve_latency)}{cpu})"
    )
    for problem in loop.problems[:5]:
        print(f"    unexpected answer: {problem}")
    return rate


def check(response: httpx.Response, status: int) -> dict[str, Any]:
    if response.status_code != status:
        raise RuntimeError(
            f"{response.request.method} {response.request.url.path}: "
            f"{response.status_code} {response.text}"
        )
    return response.json()


def prepare(client: httpx.Client) -> str:
    """Register and deploy the example graph; complete one run; return its id."""
    check(client.post("/v1/graphs", json=EXAMPLE_GRAPH), 201)
    check(
        client.post(
            "/v1/deployments",
            json={"deployment_ref": DEPLOYMENT, "graph_id": EXAMPLE_GRAPH["graph_id"]},
        ),
        201,
    )
    run = check(
        client.post(
            "/runs",
            json={"deployment_ref": DEPLOYMENT, "input": {"order": "A-1001"}},
            headers={"Prefer": "wait=10"},
        ),
        201,
    )
    answer = check(
        client.post(
            f"/deployments/{DEPLOYMENT}/approvals/{run['pending_approval_ids'][0]}/resolve",
            json={"decision": "approve"},
        ),
        200,
    )
    if answer["run"]["status"] != "completed":
        raise RuntimeError(f"the first run did not complete: {answer['run']}")
    return run["run_id"]


def prepare_straight(client: httpx.Client) -> None:
    """Register and deploy the example graph without its approval (``STRAIGHT``)."""
    graph = straight_graph()
    check(client.post("/v1/graphs", json=graph), 201)
    check(
        client.post(
            "/v1/deployments", json={"deployment_ref": STRAIGHT, "graph_id": graph["graph_id"]}
        ),
        201,
    )
