"""Economic evidence for console tests, posted through the API as any client would.

Two versions of a workflow over the last days: ``v1`` runs cost 1.00 (one of them 1E-8), half
succeed, one charge of ``v1`` has an unknown cost (so ``v1`` is incomplete); ``v2`` runs cost 1.20
and all succeed. Steps ``draft`` and ``send`` carry the money, a ``plan`` dimension splits cohorts,
and a retry of ``send`` is repeated-attempt spend. Then ``v2`` is compared with ``v1``.
"""

from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

RUNS = 40


class Api(Protocol):
    """A test client of the API (Starlette's TestClient or httpx.Client)."""

    def post(self, url: str, *, json: Any, headers: dict[str, str]) -> Any: ...


def iso(moment: datetime) -> str:
    """RFC 3339 with a Z."""
    return moment.isoformat().replace("+00:00", "Z")


def _post(client: Api, path: str, body: Any, headers: dict[str, str]) -> Any:
    answer = client.post(path, json=body, headers=headers)
    assert answer.status_code in (200, 201), answer.text
    return answer.json()


def seed(client: Api, admin: dict[str, str], workflow: str = "claims") -> dict[str, Any]:
    """Post the evidence of :mod:`this module <tests.support.economics>`; the decision made."""
    start = (datetime.now(UTC) - timedelta(days=3)).replace(minute=0, second=0, microsecond=0)
    for version in ("v1", "v2"):
        rule = {
            "workflow_id": workflow,
            "workflow_version": version,
            "outcome_type": "done",
            "predicate": {"kind": "equals", "value": True},
        }
        _post(client, "/v1/debugger/outcome-definitions", rule, admin)
        events, outcomes = [], []
        for i in range(RUNS):
            run, at = f"{workflow}-{version}-r{i:03d}", start + timedelta(hours=i)
            cost = "1E-8" if (version, i) == ("v1", 0) else ("1.00" if version == "v1" else "1.20")
            common = {
                "workflow_id": workflow,
                "workflow_version": version,
                "run_id": run,
                "dimensions": {"plan": "pro" if i % 3 else "free"},
                "subject_id": f"acct-{i % 4}",
            }
            events.append(
                {
                    **common,
                    "event_id": f"{run}-draft",
                    "occurred_at": iso(at),
                    "step_id": "draft",
                    "cost_usd": cost,
                    "cost_measurement": "measured",
                    "charge_id": f"{run}-c1",
                }
            )
            if i % 5 == 1:  # a retry of send: repeated-attempt spend
                events.append(
                    {
                        **common,
                        "event_id": f"{run}-send-2",
                        "occurred_at": iso(at + timedelta(minutes=2)),
                        "step_id": "send",
                        "attempt": 2,
                        "cost_usd": "0.25",
                        "cost_measurement": "estimated",
                        "charge_id": f"{run}-c2",
                    }
                )
            outcomes.append(
                {
                    "event_id": f"{run}-o",
                    "workflow_id": workflow,
                    "workflow_version": version,
                    "run_id": run,
                    "outcome_type": "done",
                    "asserted_at": iso(at + timedelta(minutes=30)),
                    "value": version == "v2" or i % 2 == 0,
                }
            )
        if version == "v1":  # a charge whose cost nobody knows: v1's figures are incomplete
            events.append(
                {
                    "event_id": f"{workflow}-v1-unknown",
                    "workflow_id": workflow,
                    "workflow_version": "v1",
                    "run_id": f"{workflow}-v1-r001",
                    "occurred_at": iso(start + timedelta(hours=1, minutes=5)),
                    "step_id": "send",
                    "charge_id": f"{workflow}-v1-unknown",
                    "cost_measurement": "unmeasured",
                }
            )
        _post(client, "/v1/evidence/executions", {"events": events}, admin)
        _post(client, "/v1/evidence/outcomes", {"events": outcomes}, admin)
    compare = {
        "workflow_id": workflow,
        "baseline_version": "v1",
        "candidate_version": "v2",
        "start": iso(start - timedelta(days=1)),
        "end": iso(start + timedelta(days=3)),
        "policy": {"min_success_rate": 0.5, "allow_estimated_cost": True},
    }
    return dict(_post(client, "/v1/decisions/compare", compare, admin))


__all__ = ["RUNS", "iso", "seed"]
