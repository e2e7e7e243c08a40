"""A reconciliation report as Markdown; it names its method_version like the JSON does."""

from ecp_core.markdown import table_cell
from ecp_core.money import money_text
from ecp_core.reconciliation.model import ReconciliationReport
from ecp_core.wire import format_timestamp


def render_markdown(report: ReconciliationReport) -> str:
    """Render ``report`` as a Markdown document (every bucket and group; nothing is cut)."""
    totals = report.totals
    lines = [
        f"# Reconciliation: {table_cell(report.provider)} statement {table_cell(report.statement_id)}",
        "",
        f"- method_version: `{report.method_version}`",
        f"- closure state: **{report.closure_state}**",
        (
            f"- period: {format_timestamp(report.period_start)} to "
            f"{format_timestamp(report.period_end)} (half-open)"
        ),
        f"- statement digest: `{report.statement_digest}`",
        f"- outcomes as of: {format_timestamp(report.as_of)}",
        "",
        "## Totals (USD)",
        "",
        "| total | USD |",
        "|---|---|",
        *(
            f"| {name} | {money_text(value)} |"
            for name, value in (
                ("billed_total_usd", totals.billed_total_usd),
                ("allocated_billed_usd", totals.allocated_billed_usd),
                ("unreconciled_billed_usd", totals.unreconciled_billed_usd),
                ("telemetry_measured_usd", totals.telemetry_measured_usd),
                ("telemetry_variance_usd", totals.telemetry_variance_usd),
                ("unbilled_telemetry_usd", totals.unbilled_telemetry_usd),
                ("outcome_unresolved_usd", totals.outcome_unresolved_usd),
            )
        ),
        "",
        "## Buckets",
        "",
        (
            "| bucket | model | dimensions | amount USD | status | workflow | version | outcome "
            "| billed USD | telemetry USD |"
        ),
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for allocation in report.allocations:
        dimensions = ", ".join(
            f"{k}={v}" for k, v in sorted(allocation.provider_dimensions.items())
        )
        head = [
            table_cell(allocation.bucket_id),
            table_cell(allocation.model or "any"),
            table_cell(dimensions or "any"),
            money_text(allocation.amount_usd),
            str(allocation.status),
        ]
        if not allocation.groups:
            lines.append("| " + " | ".join([*head, "", "", "", "", ""]) + " |")
        for group in allocation.groups:
            cells = [
                *head,
                table_cell(group.workflow_id),
                table_cell(group.workflow_version),
                str(group.outcome_status),
                money_text(group.billed_usd),
                money_text(group.telemetry_usd),
            ]
            lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)
