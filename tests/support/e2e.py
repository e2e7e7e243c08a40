"""Graphs and small steps the end-to-end tests share."""

import copy
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ecp_core.demo import EXAMPLE_GRAPH
from ecp_http.server.auth import mint_token

PROBLEM_JSON = "application/problem+json"
WAIT = {"Prefer": "wait=10"}


@dataclass
class EcpServer:
    """A running server: its address, the client every test shares, and how to mint tokens."""

    base_url: str
    client: httpx.Client
    jwt_secret: str
    signing_seed: bytes

    def token(self, tenant: str, *roles: str, subject: str = "e2e", ttl: int = 600) -> str:
        """A bearer token for ``tenant`` with ``roles``."""
        return mint_token(
            self.jwt_secret, tenant=tenant, roles=list(roles), subject=subject, ttl_seconds=ttl
        )

    def caller(self, tenant: str, *roles: str, subject: str = "e2e") -> "Caller":
        """Requests as a user of ``tenant`` holding ``roles``."""
        token = self.token(tenant, *roles, subject=subject)
        return Caller(self.client, {"Authorization": f"Bearer {token}"})


@dataclass
class Caller:
    """The shared client with one caller's credentials on every request."""

    client: httpx.Client
    headers: Mapping[str, str]

    def request(
        self, method: str, path: str, *, headers: Mapping[str, str] | None = None, **kwargs: Any
    ) -> httpx.Response:
        return self.client.request(
            method, path, headers={**self.headers, **(headers or {})}, **kwargs
        )

    def get(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", path, **kwargs)

    def put(self, path: str, **kwargs: Any) -> httpx.Response:
        return self.request("PUT", path, **kwargs)


def example_graph() -> dict[str, Any]:
    """The example graph (classify -> review -> notify -> done), a fresh copy."""
    return copy.deepcopy(EXAMPLE_GRAPH)


def gated_action_graph() -> dict[str, Any]:
    """An action that requires approval: the approval's payload is the action's arguments."""
    return {
        "graph_id": "gated-refund",
        "entry": "pay",
        "nodes": [
            {
                "id": "pay",
                "kind": "action",
                "action": {
                    "name": "echo",
                    "fingerprint": "echo/1",
                    "arguments": {"amount": 100, "currency": "EUR", "to": "A-1"},
                    "requires_approval": True,
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "pay", "target": "done"}],
    }


def interrupt_graph() -> dict[str, Any]:
    """set -> interrupt (answer lands at ``customer.answer``) -> end."""
    return {
        "graph_id": "ask-customer",
        "entry": "prepare",
        "nodes": [
            {
                "id": "prepare",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"prepared": True}},
                },
            },
            {
                "id": "ask",
                "kind": "interrupt",
                "prompt": "Which address?",
                "target_path": "customer.answer",
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "prepare", "target": "ask"}, {"source": "ask", "target": "done"}],
    }


def check(response: httpx.Response, status: int) -> dict[str, Any]:
    """Assert the status (showing the body when it differs) and return the JSON body."""
    assert response.status_code == status, (
        f"{response.request.method} {response.request.url.path}: "
        f"{response.status_code} {response.text}"
    )
    return response.json()


def problem(response: httpx.Response, status: int, code: str | None = None) -> dict[str, Any]:
    """Assert an RFC 9457 problem response with ``status`` (and ``code``); return its body."""
    body = check(response, status)
    assert response.headers["content-type"].startswith(PROBLEM_JSON)
    assert body["status"] == status
    assert body["type"] == f"urn:ecp:error:{body['code']}"
    assert {"title", "detail", "code"} <= body.keys()
    if code is not None:
        assert body["code"] == code
    return body


def deploy(caller: Caller, graph: dict[str, Any], ref: str) -> dict[str, Any]:
    """Register ``graph`` and deploy its latest version under ``ref``."""
    registered = check(caller.post("/v1/graphs", json=graph), 201)
    assert registered["graph_id"] == graph["graph_id"]
    deployment = check(
        caller.post("/v1/deployments", json={"deployment_ref": ref, "graph_id": graph["graph_id"]}),
        201,
    )
    assert deployment["graph_version_ref"] == f"{graph['graph_id']}@{registered['version']}"
    return deployment


def start(
    caller: Caller, ref: str, body: dict[str, Any] | None = None, *, wait: bool = True
) -> dict[str, Any]:
    """Start a run of ``ref`` (with ``Prefer: wait=10`` unless ``wait`` is false)."""
    request = {"deployment_ref": ref, "input": {"order": "A-1"}, **(body or {})}
    return check(caller.post("/runs", json=request, headers=WAIT if wait else None), 201)


def only_pending_approval(caller: Caller, run_id: str) -> dict[str, Any]:
    """The run's one pending approval, from ``GET /runs/{id}/approvals?status=pending``."""
    approvals = check(caller.get(f"/runs/{run_id}/approvals", params={"status": "pending"}), 200)
    assert len(approvals["approvals"]) == 1, approvals
    return approvals["approvals"][0]


def resolve(
    caller: Caller, ref: str, approval_id: str, body: dict[str, Any], status: int = 200
) -> dict[str, Any]:
    """POST the resolution; return the body."""
    return check(
        caller.post(f"/deployments/{ref}/approvals/{approval_id}/resolve", json=body), status
    )


def steps(caller: Caller, run_id: str) -> list[tuple[str, str]]:
    """The run's timeline as (node_id, status) pairs, in chain order."""
    timeline = check(caller.get(f"/runs/{run_id}/timeline"), 200)
    return [(entry["node_id"], entry["status"]) for entry in timeline["entries"]]


def poll_until(
    caller: Caller, run_id: str, statuses: set[str], seconds: float = 15.0
) -> dict[str, Any]:
    """GET the run until its status is one of ``statuses``; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    seen = []
    while True:
        run = check(caller.get(f"/runs/{run_id}"), 200)
        if not seen or seen[-1] != run["status"]:
            seen.append(run["status"])
        if run["status"] in statuses:
            return run
        assert time.monotonic() < deadline, f"run {run_id} went through {seen}, never {statuses}"
        time.sleep(0.05)
