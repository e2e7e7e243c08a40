"""The scenario's calls beyond the quickstart, area by area (ADR 0055).

Each area sets up what it needs (a graph with a task or an interrupt node, evidence of a
workflow) with calls that are not recorded, then calls each of its operations once.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from tests.support.openapi_scenario import Step

TOMORROW = (datetime.now(UTC) + timedelta(days=1)).isoformat()


def _graph(graph_id: str, first: dict[str, Any]) -> dict[str, Any]:
    """A graph of one node, ``first``, then its end."""
    nodes = [first, {"id": "done", "kind": "end"}]
    return {
        "graph_id": graph_id,
        "entry": first["id"],
        "nodes": nodes,
        "edges": [{"source": first["id"], "target": "done"}],
    }


def _deployed(graph: dict[str, Any], ref: str, run_input: dict[str, Any], keep: str) -> list[Step]:
    """Register ``graph``, deploy it as ``ref`` and start a run, keeping its id as ``keep``."""
    return [
        Step("graphs_register", graph, record=False),
        Step(
            "graphs_create_deployment",
            {"deployment_ref": ref, "graph_id": graph["graph_id"]},
            record=False,
        ),
        Step(
            "runs_start",
            {"deployment_ref": ref, "input": run_input},
            headers={"Prefer": "wait=10"},
            keep=lambda run: {keep: run["run_id"]},
            record=False,
        ),
    ]


CHARGE = {
    "id": "charge",
    "kind": "task",
    "action": {
        "name": "payments.charge",
        "fingerprint": "payments.charge/1",
        "arguments": {"amount": "42.50"},
        "side_effect": "idempotent",
    },
}
ASK = {"id": "ask", "kind": "interrupt", "prompt": "Refund in cash?", "target_path": "cash"}
CLAIM = {"worker_id": "worker-1", "topics": ["payments.charge"], "wait_seconds": 10}


def _claimed(page: Any) -> dict[str, Any]:
    task = page["tasks"][0]
    return {"task_id": task["task_id"], "lock_token": task["lock_token"]}


def _task(ids: Any) -> dict[str, str]:
    return {"task_id": ids["task_id"]}


TASKS = [
    *_deployed(_graph("charge-order", CHARGE), "charges", {"order_id": "A-1001"}, "task_run"),
    Step("tasks_claim", CLAIM, role="worker", keep=_claimed),
    Step(
        "tasks_heartbeat",
        lambda ids: {"lock_token": ids["lock_token"], "lock_seconds": 60},
        role="worker",
        path=_task,
    ),
    Step("tasks_get", path=_task),
    Step(
        "tasks_complete",
        lambda ids: {"lock_token": ids["lock_token"], "output": {"charge_id": "ch-1"}},
        role="worker",
        path=_task,
    ),
    Step(
        "runs_start",
        {"deployment_ref": "charges", "input": {"order_id": "A-1002"}},
        record=False,
    ),
    Step("tasks_claim", CLAIM, role="worker", keep=_claimed, record=False),
    Step(
        "tasks_fail",
        lambda ids: {
            "lock_token": ids["lock_token"],
            "error": "Card declined",
            "retry_after_seconds": 60,
        },
        role="worker",
        path=_task,
    ),
    Step("tasks_list"),
]

INTERRUPTS = [
    *_deployed(_graph("cash-or-credit", ASK), "cash-or-credit", {}, "asked_run"),
    Step(
        "runs_resume",
        {"value": True},
        path=lambda ids: {"run_id": ids["asked_run"]},
        headers={"Prefer": "wait=10"},
    ),
    Step(
        "retention_request_erasure",
        # the quickstart's run: finished, so nothing still writes to it
        lambda ids: {"run_id": ids["run_id"], "reason": "Customer asked to be forgotten"},
    ),
]

TEMPLATE = {
    "name": "set-category",
    "description": "Set a category, then end",
    "parameters": {
        "type": "object",
        "properties": {"category": {"type": "string", "default": "refund"}},
    },
    "graph": {
        "entry": "classify",
        "nodes": [
            {
                "id": "classify",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"category": {"$param": "category"}}},
                },
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [{"source": "classify", "target": "done"}],
    },
}
NAMED = {"name": "set-category"}

TEMPLATES = [
    Step("templates_create", TEMPLATE),
    Step("templates_list"),
    Step("templates_get", path=lambda _: NAMED),
    Step("templates_get_version", path=lambda _: {**NAMED, "version": "1"}),
    Step(
        "templates_instantiate",
        {"graph_id": "complaints", "arguments": {"category": "complaint"}},
        path=lambda _: NAMED,
    ),
]

ATTESTATION = {
    "correlation_id": "trace-7f3a",
    "deployment_ref": "refunds",
    "graph_version": "refund-triage@1",
    "adapter_version": "langgraph-adapter/0.9",
    "inventory_fingerprint": "sha256:" + "0f" * 32,
    "claimed_level": "L2",
}
TRACE = {"correlation_id": "trace-7f3a"}

ATTESTATIONS = [
    Step("attestations_submit", ATTESTATION, keep=lambda ack: {"digest": ack["digest"]}),
    Step("attestations_get", path=lambda _: TRACE),
    Step("attestations_verify", path=lambda _: TRACE, query=ATTESTATION),
]


def _certification(ids: Any) -> dict[str, str]:
    return {"certification_id": ids["certification_id"]}


CERTIFICATIONS = [
    Step(
        "certifications_create",
        {
            "app_name": "refund-service",
            "app_commit": "4f2c9e1",
            "image_digest": "sha256:" + "a" * 64,
            "deployment_ref": "refunds",
        },
        keep=lambda made: {"certification_id": made["certification_id"]},
    ),
    Step("certifications_list"),
    Step("certifications_get", path=_certification),
    Step(
        "certifications_grant_override",
        {"scopes": ["policy_missing"], "reason": "Pilot with one team", "expires_at": TOMORROW},
        path=_certification,
    ),
    Step("certifications_withdraw_override", path=_certification),
    Step(
        "certifications_transition",
        {"to": "revoked", "reason": "Superseded by a new build"},
        path=_certification,
    ),
]

CONNECTOR = {"ref": "crm", "backend_type": "http", "params": {"base_url": "https://crm.example"}}

CONNECTORS = [
    Step("connectors_create", CONNECTOR),
    Step("connectors_list"),
    Step("connectors_get", path=lambda _: {"ref": "crm"}),
    Step(
        "connectors_update",
        {"backend_type": "http", "params": {"base_url": "https://crm.example/v2"}},
        path=lambda _: {"ref": "crm"},
    ),
    Step("health_ready"),
]

AREAS = [*TASKS, *INTERRUPTS, *TEMPLATES, *ATTESTATIONS, *CERTIFICATIONS, *CONNECTORS]
"""The areas the scenario covers after the quickstart, in an order that works."""
