"""How the economics page shows the debugger's figures and the version decisions.

Pure functions of the answers the API's own services give (``DebuggerService.report``,
``DecisionService.history``): rows for the tables and the charts beside them. Money is printed
exactly from its Decimal (never through a float); missing evidence is said, never shown as zero;
an interval is printed as its low and high bound with an en dash between.
"""

from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal, localcontext
from typing import Any

from markupsafe import Markup

from ecp_core.debugger.model import Accounting, DebuggerReport, Incompleteness, TimelineRow
from ecp_core.debugger.tally import Granularity
from ecp_core.decisions.model import ConstraintResult, DecisionArtifact
from ecp_http.server.console import charts
from ecp_http.server.console.views import when

CHARTED = 12
"""Rows a bar chart draws (the most costly first); the table beside it lists them all."""
CENTS = Decimal("0.01")
CENTS_EXPONENT = -2
DASH = "\N{EN DASH}"
MINUS = "\N{MINUS SIGN}"
CONSTRAINTS = {
    "candidate_success_rate": "Candidate success rate",
    "success_rate_change": f"Success-rate change (candidate {MINUS} baseline)",
    "cost_per_accepted_outcome_ratio": "Cost per accepted outcome (candidate ÷ baseline)",
}
"""The constraints of ``interval-policy/1`` in words."""


def money(amount: Decimal | None) -> str:
    """``amount`` in USD, exactly: ``$1,234.50``, ``$0.00000001``; ``unknown`` for None."""
    if amount is None:
        return "unknown"
    digits, exponent = amount.as_tuple()[1:]
    with localcontext() as context:
        context.prec = max(28, len(digits) + 4)
        shown = (
            amount.quantize(CENTS)
            if isinstance(exponent, int) and exponent > CENTS_EXPONENT
            else amount
        )
    sign = MINUS if shown < 0 else ""
    return f"{sign}${shown.copy_abs():,f}"


def share(value: Decimal | None) -> str:
    """A rate as a percentage to one decimal place; ``—`` when there is none."""
    if value is None:
        return "—"
    return f"{(value * 100).quantize(Decimal('0.1')):f} %"


def number(value: float | None) -> str:
    """A decision figure (a rate, a change, a ratio) to three decimal places; ``—`` for none."""
    return "—" if value is None else f"{value:.3f}".replace("-", MINUS)


def evidence(missing: Incompleteness) -> dict[str, Any]:
    """Whether a group's evidence is complete, and what is missing, in words."""
    notes = []
    if missing.unknown_cost_events:
        notes.append(f"{missing.unknown_cost_events} charge(s) of unknown cost")
    if missing.unresolved_runs:
        notes.append(f"{missing.unresolved_runs} run(s) without an outcome")
    if missing.unattributed_events:
        notes.append(f"{missing.unattributed_events} event(s) naming no run")
    shown = []
    if missing.inferred_outcome_runs:
        shown.append(f"{missing.inferred_outcome_runs} inferred outcome(s)")
    if missing.provisional_outcome_runs:
        shown.append(f"{missing.provisional_outcome_runs} provisional outcome(s)")
    return {"complete": missing.complete, "missing": notes, "caveats": shown}


def _known_cost(figures: Accounting) -> str:
    """The known cost, marked as a lower bound when some charge's cost is unknown."""
    known = money(figures.known_cost_usd)
    return f"at least {known}" if figures.incomplete.unknown_cost_events else known


def accounting_row(figures: Accounting) -> dict[str, Any]:
    """The figures of one group as the tables print them."""
    return {
        "runs": figures.runs,
        "successful": figures.successful_runs,
        "failed": figures.failed_runs,
        "known_cost": _known_cost(figures),
        "measured": money(figures.measured_cost_usd),
        "estimated": money(figures.estimated_cost_usd),
        "failure_tax": money(figures.failure_tax_usd),
        "repeated": money(figures.repeated_attempt_usd),
        "per_success": money(figures.cost_per_successful_outcome_usd)
        if figures.cost_per_successful_outcome_usd is not None
        else ("unknown: some costs are missing" if figures.incomplete.unknown_cost_events else "—"),
        "failure_rate": share(figures.failure_rate),
        "evidence": evidence(figures.incomplete),
    }


def _label(name: str, figures: Accounting) -> str:
    """A chart row's label: its name, marked when its evidence is incomplete."""
    return name if figures.incomplete.complete else f"{name} (incomplete)"


def _series(version: str, rows: Iterable[TimelineRow]) -> str:
    """A version's series name, marked when any of its windows lacks evidence."""
    gaps = any(
        not row.accounting.incomplete.complete for row in rows if row.workflow_version == version
    )
    return f"{version} (incomplete)" if gaps else version


def _window(start: datetime, granularity: Granularity) -> str:
    """A timeline window's start as its label (UTC): the day, or the day and hour."""
    return start.strftime("%m-%d %H:00" if granularity is Granularity.HOUR else "%Y-%m-%d")


def debugger_view(report: DebuggerReport) -> dict[str, Any]:
    """The debugger's report as the page's tables and charts."""
    versions = [
        {
            "version": row.workflow_version,
            "outcome_definition": row.outcome_definition,
            **accounting_row(row.accounting),
        }
        for row in report.versions
    ]
    by_version = sorted(report.versions, key=lambda row: -row.accounting.known_cost_usd)
    version_chart = charts.bars(
        "Known cost by workflow version, USD (measured and estimated)",
        [_label(row.workflow_version, row.accounting) for row in by_version[:CHARTED]],
        {
            "measured": [row.accounting.measured_cost_usd for row in by_version[:CHARTED]],
            "estimated": [row.accounting.estimated_cost_usd for row in by_version[:CHARTED]],
        },
    )
    windows = sorted({row.window_start for row in report.timeline})
    names = sorted({row.workflow_version for row in report.timeline})
    cell = {(row.window_start, row.workflow_version): row for row in report.timeline}
    timeline_chart = charts.columns(
        f"Known cost by {report.granularity.value}, USD, one colour a version",
        [_window(start, report.granularity) for start in windows],
        {
            _series(name, report.timeline): [
                found.accounting.known_cost_usd if (found := cell.get((start, name))) else None
                for start in windows
            ]
            for name in names
        },
    )
    timeline = [
        {
            "window": _window(row.window_start, report.granularity),
            "version": row.workflow_version,
            **accounting_row(row.accounting),
        }
        for row in report.timeline
    ]
    steps = [
        {"version": row.workflow_version, "step": row.step_id, **accounting_row(row.accounting)}
        for row in report.steps
    ]
    step_chart = charts.bars(
        "Where failed runs spent: failure tax and repeated attempts by step, USD",
        [
            _label(f"{row.step_id or '(no step)'} · {row.workflow_version}", row.accounting)
            for row in report.steps[:CHARTED]
        ],
        {
            "failure tax": [row.accounting.failure_tax_usd for row in report.steps[:CHARTED]],
            "repeated attempts": [
                row.accounting.repeated_attempt_usd for row in report.steps[:CHARTED]
            ],
        },
    )
    cohort_order = sorted(report.cohorts, key=lambda row: -row.accounting.known_cost_usd)
    cohorts = [
        {
            "version": row.workflow_version,
            "cohort": "(none)" if row.cohort is None else str(row.cohort),
            **accounting_row(row.accounting),
        }
        for row in cohort_order
    ]
    cohort_chart = charts.bars(
        f"Known cost by {report.cohort}, USD (the most costly {CHARTED})",
        [
            _label(
                f"{row.cohort if row.cohort is not None else '(none)'} · {row.workflow_version}",
                row.accounting,
            )
            for row in cohort_order[:CHARTED]
        ],
        {"known cost": [row.accounting.known_cost_usd for row in cohort_order[:CHARTED]]},
    )
    return {
        "totals": accounting_row(report.totals),
        "as_of": when(report.scope.as_of),
        "method": report.method_version,
        "cohort": report.cohort,
        "versions": versions,
        "version_chart": version_chart,
        "timeline": timeline,
        "timeline_chart": timeline_chart,
        "steps": steps,
        "step_chart": step_chart,
        "cohorts": cohorts,
        "cohort_chart": cohort_chart,
    }


def interval_text(found: ConstraintResult) -> str:
    """A constraint's interval as its bounds with an en dash between, or why there is none."""
    if found.interval is None:
        return "no interval: not enough evidence"
    low, high = found.interval
    return f"{number(low)} {DASH} {number(high)}"


def decision_row(artifact: DecisionArtifact) -> dict[str, Any]:
    """One retained decision as the page shows it."""
    return {
        "decision_id": artifact.decision_id,
        "revision": artifact.revision,
        "workflow_id": artifact.workflow_id,
        "baseline": artifact.baseline_version,
        "candidate": artifact.candidate_version,
        "verdict": artifact.verdict.value,
        "action": artifact.recommended_action.value.replace("_", " "),
        "window": f"{when(artifact.start)} {DASH} {when(artifact.end)}",
        "created_at": when(artifact.created_at),
        "requested_by": artifact.requested_by,
        "confidence": f"{artifact.policy.confidence_level:.0%}",
        "abstain_reasons": [reason.replace("_", " ") for reason in artifact.abstain_reasons],
        "more_runs": artifact.additional_runs_required,
        "rollout_id": artifact.rollout_id,
        "rollout_recommendation": (
            None
            if artifact.rollout_recommendation is None
            else artifact.rollout_recommendation.value.replace("_", " ")
        ),
        "constraints": [
            {
                "name": CONSTRAINTS.get(found.name, found.name.replace("_", " ")),
                "method": found.method.replace("_", " "),
                "estimate": number(found.estimate),
                "interval": interval_text(found),
                "limit": number(found.limit),
                "status": found.status.value,
                "more_runs": found.additional_runs_required,
            }
            for found in artifact.constraints
        ],
    }


def decision_charts(artifacts: Sequence[DecisionArtifact]) -> list[Markup]:
    """One forest plot per constraint: each decision's interval, estimate and limit."""
    names: list[str] = []
    for artifact in artifacts:
        names += [c.name for c in artifact.constraints if c.name not in names]
    several = len({artifact.workflow_id for artifact in artifacts}) > 1
    drawn = []
    for name in names:
        rows = [
            charts.Interval(
                label=_decision_label(a, with_workflow=several),
                estimate=found.estimate,
                low=None if found.interval is None else found.interval[0],
                high=None if found.interval is None else found.interval[1],
                limit=found.limit,
            )
            for a in artifacts
            for found in _named(a.constraints, name)
        ]
        title = CONSTRAINTS.get(name, name.replace("_", " "))
        drawn.append(charts.intervals(title, rows))
    return drawn


def _decision_label(artifact: DecisionArtifact, *, with_workflow: bool) -> str:
    """A decision's row label: the versions compared and its revision (and its workflow)."""
    versions = f"{artifact.baseline_version} → {artifact.candidate_version}"
    label = f"{versions} · rev {artifact.revision}"
    return f"{artifact.workflow_id}: {label}" if with_workflow else label


def _named(found: Iterable[ConstraintResult], name: str) -> list[ConstraintResult]:
    return [result for result in found if result.name == name]


__all__ = [
    "CHARTED",
    "accounting_row",
    "debugger_view",
    "decision_charts",
    "decision_row",
    "evidence",
    "interval_text",
    "money",
    "number",
    "share",
]
