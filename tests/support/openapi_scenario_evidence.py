"""The scenario's evidence calls: ingest, the debugger, decisions and reconciliation (ADR 0055).

One workflow, ``support``, in two versions over one day of March 2026: priced work and
outcomes of a few runs each, read back by the debugger, compared, and set against a bill.
"""

from typing import Any

from tests.support.openapi_scenario import Step

WORKFLOW = {"workflow_id": "support"}
DAY = {**WORKFLOW, "start": "2026-03-01T00:00:00Z", "end": "2026-03-02T00:00:00Z"}


def _execution(event_id: str, run_id: str, version: str, cost: str) -> dict[str, Any]:
    """A measured model call of ``run_id``."""
    return {
        **WORKFLOW,
        "event_id": event_id,
        "workflow_version": version,
        "occurred_at": "2026-03-01T09:15:00Z",
        "run_id": run_id,
        "step_id": "draft",
        "subject_id": "acct-1",
        "dimensions": {"plan": "pro"},
        "charge_id": f"charge-{event_id}",
        "cost_usd": cost,
        "cost_measurement": "measured",
        "metadata": {"provider": "openai", "model": "gpt-x"},
    }


def _outcome(event_id: str, run_id: str, version: str, value: bool) -> dict[str, Any]:
    """Whether the ticket of ``run_id`` was closed."""
    return {
        **WORKFLOW,
        "event_id": event_id,
        "workflow_version": version,
        "run_id": run_id,
        "outcome_type": "ticket_closed",
        "value": value,
        "asserted_at": "2026-03-01T13:00:00Z",
    }


EXECUTIONS = [
    _execution("e1", "r1", "v1", "0.10"),
    _execution("e2", "r2", "v1", "0.12"),
    _execution("e3", "r3", "v2", "0.06"),
]
OUTCOMES = [
    _outcome("o1", "r1", "v1", True),
    _outcome("o2", "r2", "v1", False),
    _outcome("o3", "r3", "v2", True),
]
REVISION = {
    "event_id": "rev1",
    "charge_id": "charge-e2",
    "revised_at": "2026-03-02T08:00:00Z",
    "cost_usd": "0.11",
    "cost_measurement": "measured",
}
INVENTORY = {
    **WORKFLOW,
    "event_id": "inv1",
    "workflow_version": "v1",
    "capture_start": "2026-03-01T00:00:00Z",
    "capture_end": "2026-03-01T23:59:59Z",
    "terminal_run_ids": ["r1", "r2"],
    "windows": [
        {"source_window_id": "sw1", "expected_events": 2, "event_ids_digest": "sha256:" + "a" * 64}
    ],
}
DEFINITIONS = [
    {
        **WORKFLOW,
        "workflow_version": version,
        "outcome_type": "ticket_closed",
        "predicate": {"kind": "equals", "value": True},
    }
    for version in ("v1", "v2")
]
VERSIONS = {"baseline_version": "v1", "candidate_version": "v2"}
POLICY = {"min_success_rate": 0.5, "min_runs": 2}
BILL = {
    "statement_id": "openai-2026-03",
    "provider": "openai",
    "period_start": "2026-03-01T00:00:00Z",
    "period_end": "2026-04-01T00:00:00Z",
    "currency": "USD",
    "billed_total_usd": "0.30",
    "source_kind": "manual",
    "buckets": [
        {
            "bucket_id": "2026-03-01/gpt-x",
            "period_start": "2026-03-01T00:00:00Z",
            "period_end": "2026-03-02T00:00:00Z",
            "amount_usd": "0.30",
            "model": "gpt-x",
        }
    ],
}
STATEMENT = {"provider": "openai", "statement_id": "openai-2026-03"}

EVIDENCE = [
    Step("evidence_ingest_executions", {"events": EXECUTIONS}),
    Step("evidence_ingest_outcomes", {"events": OUTCOMES}),
    Step("evidence_ingest_charge_revisions", {"events": [REVISION]}),
    Step("evidence_ingest_source_inventories", {"events": [INVENTORY]}),
    Step("debugger_define_outcome", DEFINITIONS[0]),
    Step("debugger_define_outcome", DEFINITIONS[1], record=False),
    Step("debugger_timeline", query={**DAY, "granularity": "hour"}),
    Step("debugger_cohorts", query={**DAY, "cohort": "dimension:plan"}),
    Step("debugger_breakage", query=DAY),
    Step("debugger_report", query=DAY),
    Step("decisions_compare", {**DAY, **VERSIONS, "policy": POLICY}),
    Step("decisions_list", query=WORKFLOW),
    Step(
        "decisions_create_schedule",
        {
            **WORKFLOW,
            **VERSIONS,
            "interval_seconds": 86_400,
            "window_seconds": 604_800,
            "policy": POLICY,
            "name": "Nightly v1 against v2",
        },
    ),
    Step("decisions_list_schedules"),
    Step("reconciliation_import_bill", BILL),
    Step("reconciliation_report", path=lambda _: STATEMENT),
    Step("connectors_get_costs", query={"campaign_id": "launch"}),
]
"""Evidence in, then every read of it, in an order that works."""
