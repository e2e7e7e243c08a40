"""The debugger report as Markdown; it names its method_version like the JSON does."""

import json
from collections.abc import Iterable, Sequence
from decimal import Decimal

from ecp_core.debugger.model import Accounting, DebuggerReport
from ecp_core.markdown import table_cell
from ecp_core.money import money_text
from ecp_core.wire import format_timestamp

MARKDOWN_ROWS = 50
"""Rows shown per table; the JSON report has them all, and the totals never omit any."""

_HEADER = (
    "runs",
    "success",
    "failed",
    "known cost USD",
    "failure tax USD",
    "repeat USD",
    "cost/success USD",
    "failure rate",
    "incomplete",
)


def _amount(value: Decimal | None) -> str:
    return "n/a" if value is None else money_text(value)


def _incomplete(figures: Accounting) -> str:
    gaps = figures.incomplete
    if gaps.complete:
        return "none"
    parts = [
        f"{gaps.unknown_cost_events} unknown-cost events" if gaps.unknown_cost_events else "",
        f"{gaps.unresolved_runs} runs without outcome" if gaps.unresolved_runs else "",
        f"{gaps.unattributed_events} unattributed events" if gaps.unattributed_events else "",
    ]
    return "; ".join(part for part in parts if part)


def _cells(figures: Accounting) -> list[str]:
    return [
        str(figures.runs),
        str(figures.successful_runs),
        str(figures.failed_runs),
        money_text(figures.known_cost_usd),
        money_text(figures.failure_tax_usd),
        money_text(figures.repeated_attempt_usd),
        _amount(figures.cost_per_successful_outcome_usd),
        _amount(figures.failure_rate),
        _incomplete(figures),
    ]


def _table(keys: Sequence[str], rows: Sequence[tuple[Sequence[str], Accounting]]) -> Iterable[str]:
    header = [*keys, *_HEADER]
    yield "| " + " | ".join(header) + " |"
    yield "|" + "---|" * len(header)
    for key, figures in rows[:MARKDOWN_ROWS]:
        yield "| " + " | ".join(table_cell(part) for part in [*key, *_cells(figures)]) + " |"
    if len(rows) > MARKDOWN_ROWS:
        yield ""
        yield f"{len(rows) - MARKDOWN_ROWS} more rows are in the JSON report."


def render_markdown(report: DebuggerReport) -> str:
    """Render ``report`` as a Markdown document."""
    scope = report.scope
    version = scope.workflow_version or "all versions"
    lines = [
        f"# Economic debugger report: {table_cell(scope.workflow_id)} ({table_cell(version)})",
        "",
        f"- method_version: `{report.method_version}`",
        f"- window: {format_timestamp(scope.start)} to {format_timestamp(scope.end)} (half-open)",
        f"- outcomes as of: {format_timestamp(scope.as_of)}",
        "",
        "## Totals",
        "",
        *_table(["scope"], [(["all"], report.totals)]),
        "",
        "## Versions",
        "",
        *_table(
            ["version", "outcome definition"],
            [
                (
                    [row.workflow_version, "yes" if row.outcome_definition else "missing"],
                    row.accounting,
                )
                for row in report.versions
            ],
        ),
        "",
        f"## Timeline ({report.granularity})",
        "",
        *_table(
            ["version", "window start"],
            [
                ([row.workflow_version, format_timestamp(row.window_start)], row.accounting)
                for row in report.timeline
            ],
        ),
        "",
        f"## Cohorts by {report.cohort}",
        "",
        *_table(
            ["version", "cohort"],
            [
                (
                    [
                        row.workflow_version,
                        "(none)" if row.cohort is None else json.dumps(row.cohort),
                    ],
                    row.accounting,
                )
                for row in report.cohorts
            ],
        ),
        "",
        "## Breakage by step",
        "",
        *_table(
            ["version", "step"],
            [
                ([row.workflow_version, row.step_id or "(none)"], row.accounting)
                for row in report.steps
            ],
        ),
        "",
    ]
    return "\n".join(lines)
