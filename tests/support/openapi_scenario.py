"""The quickstart part of the scenario the OpenAPI examples are recorded from (ADR 0055)."""

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

GRAPH = {
    "graph_id": "refund-triage",
    "entry": "classify",
    "nodes": [
        {
            "id": "classify",
            "kind": "action",
            "action": {
                "name": "set",
                "fingerprint": "set/1",
                "arguments": {"values": {"category": "refund"}},
            },
        },
        {
            "id": "review",
            "kind": "approval",
            "summary": "Approve the refund",
            "rationale": "Refunds need a person",
        },
        {"id": "done", "kind": "end"},
    ],
    "edges": [
        {"source": "classify", "target": "review"},
        {
            "source": "review",
            "target": "done",
            "condition": {"expression": "state.category == 'refund'"},
        },
    ],
}

GRAPH_V2 = {
    **GRAPH,
    "nodes": [
        {**node, "summary": "Approve the refund (checked twice)"}
        if node["id"] == "review"
        else node
        for node in GRAPH["nodes"]
    ],
}
"""The graph's second version, to which waiting runs are moved."""


@dataclass(frozen=True)
class Step:
    """One call of the scenario: the operation, who calls, and what it sends."""

    operation_id: str
    body: Any = None
    path: Callable[[Mapping[str, Any]], Mapping[str, str]] = lambda _: {}
    query: Mapping[str, str] | Callable[[Mapping[str, Any]], Mapping[str, str]] = field(
        default_factory=dict
    )
    role: str | None = "admin"
    """Whose token the call carries; None sends none (public, or the session cookie speaks)."""
    headers: Mapping[str, str] = field(default_factory=dict)
    keep: Callable[[Any], Mapping[str, Any]] = lambda _: {}
    """What later steps need of the answer (ids), by name."""
    record: bool = True
    """Whether the call is an example (set up calls of an operation already shown are not)."""
    until: Callable[[Any], bool] | None = None
    """When set, the call is made again until its answer satisfies it (a worker's result)."""
    redirected: Callable[[str], Mapping[str, Any]] | None = None
    """For a redirect: what later steps need of where it sends the browser (its Location)."""
    signed: Callable[[bytes], Mapping[str, str]] | None = None
    """For a raw body (a merchant's event): the headers that sign the bytes sent."""

    def sent(self, ids: Mapping[str, Any]) -> Any:
        """The body, built from the ids kept so far when it depends on them."""
        return self.body(ids) if callable(self.body) else self.body

    def params(self, ids: Mapping[str, Any]) -> Mapping[str, str]:
        """The query, built from the ids kept so far when it depends on them."""
        return self.query(ids) if callable(self.query) else self.query


QUICKSTART = [
    Step("health_live"),
    Step("graphs_register", GRAPH),
    Step("graphs_list"),
    Step("graphs_list_versions", path=lambda _: {"graph_id": "refund-triage"}),
    Step("graphs_get", path=lambda _: {"graph_id": "refund-triage"}, query={"version": "1"}),
    Step("graphs_create_contract", {"name": "refund", "json_schema": {"type": "object"}}),
    Step("graphs_get_contract", path=lambda _: {"name": "refund"}),
    Step("graphs_create_deployment", {"deployment_ref": "refunds", "graph_id": "refund-triage"}),
    Step("graphs_list_deployments"),
    Step("graphs_get_deployment", path=lambda _: {"ref": "refunds"}),
    Step(
        "graphs_put_policy",
        {"deny_capabilities": ["process_spawn"]},
        path=lambda _: {"ref": "refunds"},
    ),
    Step("graphs_get_policy", path=lambda _: {"ref": "refunds"}),
    Step("actions_list"),
    Step(
        "runs_start",
        {"deployment_ref": "refunds", "input": {"order_id": "A-1001", "amount": "42.50"}},
        headers={"Prefer": "wait=10"},
        keep=lambda run: {"run_id": run["run_id"]},
    ),
    Step("runs_get", path=lambda ids: {"run_id": ids["run_id"]}),
    Step(
        "approvals_list",
        role="approver",
        query={"status": "pending"},
        keep=lambda page: {"approval_id": page["approvals"][0]["approval_id"]},
    ),
    Step(
        "approvals_list_for_run",
        path=lambda ids: {"run_id": ids["run_id"]},
        query={"status": "pending"},
    ),
    Step(
        "approvals_get",
        role="approver",
        path=lambda ids: {"approval_id": ids["approval_id"]},
        keep=lambda approval: {"action_digest": approval["action_digest"]},
    ),
    Step(
        "approvals_resolve",
        lambda ids: {
            "decision": "approve",
            "reason": "Within policy",
            "action_digest": ids["action_digest"],
        },
        role="approver",
        path=lambda ids: {"ref": "refunds", "approval_id": ids["approval_id"]},
    ),
    Step(
        "approvals_list_actions",
        role="approver",
        path=lambda ids: {"approval_id": ids["approval_id"]},
    ),
    Step("runs_list_children", path=lambda ids: {"run_id": ids["run_id"]}),
    Step("admin_list_runs", query={"limit": "1"}),
    Step(
        "runs_start",
        {"deployment_ref": "refunds", "input": {"order_id": "A-1002", "amount": "18.00"}},
        headers={"Prefer": "wait=10"},
        keep=lambda run: {"mistaken_run_id": run["run_id"]},
        record=False,
    ),
    Step(
        "runs_cancel",
        {"reason": "The customer withdrew the order"},
        role="operator",
        path=lambda ids: {"run_id": ids["mistaken_run_id"]},
    ),
    Step(
        "runs_start",
        {"deployment_ref": "refunds", "input": {"order_id": "A-1003", "amount": "9.99"}},
        keep=lambda run: {"paused_run_id": run["run_id"]},
        record=False,
    ),
    Step(
        "runs_pause",
        {"reason": "Checking the amount with the customer first"},
        role="operator",
        path=lambda ids: {"run_id": ids["paused_run_id"]},
    ),
    Step(
        "runs_unpause",
        {"reason": "The customer confirmed"},
        role="operator",
        path=lambda ids: {"run_id": ids["paused_run_id"]},
    ),
    Step(
        "graphs_pause_deployment",
        {"reason": "Incident 42: the payment provider is down"},
        role="operator",
        path=lambda _: {"ref": "refunds"},
    ),
    Step(
        "graphs_unpause_deployment",
        {"reason": "Incident 42 resolved"},
        role="operator",
        path=lambda _: {"ref": "refunds"},
    ),
    Step(
        "graphs_put_deployment_limits",
        {"max_concurrent_runs": 5},
        role="operator",
        path=lambda _: {"ref": "refunds"},
    ),
    Step("runs_put_limits", {"max_concurrent_runs": 20}),
    Step("runs_get_limits"),
    Step("runs_put_limits", {"max_concurrent_runs": None}, record=False),
    Step(
        "graphs_put_deployment_limits",
        {"max_concurrent_runs": None},
        role="operator",
        path=lambda _: {"ref": "refunds"},
        record=False,
    ),
    Step("audit_timeline", path=lambda ids: {"run_id": ids["run_id"]}),
    Step("audit_verify_run", path=lambda ids: {"run_id": ids["run_id"]}),
    Step(
        "audit_list_deployment_records",
        path=lambda _: {"ref": "refunds"},
        query={"limit": "1"},
    ),
    Step("audit_verify_deployment", path=lambda _: {"ref": "refunds"}),
    Step("audit_signing_keys"),
    Step(
        "audit_bundle",
        path=lambda ids: {"run_id": ids["run_id"]},
        keep=lambda bundle: {
            "logged_audit_id": bundle["records"][0]["audit_id"],
            "tree_size": bundle["tree_size"],
        },
    ),
    Step("log_keys"),
    Step(
        "log_inclusion_proof",
        query=lambda ids: {"audit_id": ids["logged_audit_id"], "tree_size": str(ids["tree_size"])},
    ),
    Step("log_consistency_proof", query=lambda ids: {"from": "1", "to": str(ids["tree_size"])}),
    Step(
        "audit_export",
        query={
            "deployment_ref": "refunds",
            "since": "2026-01-01T00:00:00+00:00",
            "until": "2026-01-01T00:00:01+00:00",
        },
    ),
    Step("audit_get_settings"),
    Step("audit_put_settings", {"digest_version": 3}),
    Step("audit_readiness"),
    Step("audit_delivery_health"),
    Step(
        "api_keys_create",
        {"name": "ci", "role": "operator"},
        keep=lambda key: {"key_id": key["key_id"]},
    ),
    Step("api_keys_list"),
    Step("api_keys_revoke", path=lambda ids: {"key_id": ids["key_id"]}),
    Step("retention_put_policy", {"audit_ttl_seconds": 31_536_000, "run_ttl_seconds": 2_592_000}),
    Step("retention_get_policy"),
    Step(
        "retention_place_legal_hold",
        {"reason": "Dispute 42", "run_id": None},
        keep=lambda hold: {"hold_id": hold["hold_id"]},
    ),
    Step("retention_list_legal_holds"),
    Step("retention_release_legal_hold", path=lambda ids: {"hold_id": ids["hold_id"]}),
    Step("retention_audit_log"),
    *[
        Step(
            "runs_start",
            {"deployment_ref": "refunds", "input": {"order_id": f"A-20{n}", "amount": "5.00"}},
            headers={"Prefer": "wait=10"},
            keep=lambda run, n=n: {f"moving_run_{n}": run["run_id"]},
            record=False,
        )
        for n in (1, 2)
    ],
    Step("graphs_register", GRAPH_V2, record=False),
    Step(
        "runs_migrate",
        {"graph_version_ref": "refund-triage@2"},
        role="operator",
        path=lambda ids: {"run_id": ids["moving_run_1"]},
    ),
    Step(
        "runs_migrate_version",
        {"from_version": "refund-triage@1", "to_version": "refund-triage@2", "limit": 10},
        role="operator",
    ),
    Step(
        "graphs_create_deployment",
        {"deployment_ref": "refunds-canary", "graph_id": "refund-triage"},
        record=False,
    ),
    Step(
        "rollouts_create",
        {
            "deployment_ref": "refunds-canary",
            "arms": [
                {"graph_version_ref": "refund-triage@1", "weight": 90},
                {"graph_version_ref": "refund-triage@2", "weight": 10},
            ],
            "unit": "subject",
        },
        keep=lambda rollout: {"rollout_id": rollout["rollout_id"]},
    ),
    Step("rollouts_list"),
    Step("rollouts_get", path=lambda ids: {"rollout_id": ids["rollout_id"]}),
    Step(
        "rollouts_assign",
        {"unit_id": "customer-42"},
        path=lambda ids: {"rollout_id": ids["rollout_id"]},
    ),
    Step(
        "rollouts_update",
        {
            "arms": [
                {"graph_version_ref": "refund-triage@1", "weight": 80},
                {"graph_version_ref": "refund-triage@2", "weight": 20},
            ]
        },
        path=lambda ids: {"rollout_id": ids["rollout_id"]},
    ),
    Step("rollouts_verify", path=lambda ids: {"rollout_id": ids["rollout_id"]}),
    Step(
        "rollouts_end",
        {"graph_version_ref": "refund-triage@2"},
        path=lambda ids: {"rollout_id": ids["rollout_id"]},
    ),
]
"""The quickstart and the reads and writes around it, in an order that works."""
