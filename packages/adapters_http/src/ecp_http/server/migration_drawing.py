"""Drawing the model-migration report with fpdf2 (``model-migration-v3``, ADR 0039).

One A4 page (more only if the gaps run long) in the PDF core font Helvetica: the method and its
abstain verdict, the compared models, what the paired observations show, and each evidence gap.
It prints numbers, model refs and stable codes only; a backtest keeps no case text to print.
The document is dated when the backtest finished, so the same backtest gives the same bytes.
"""

from fpdf import FPDF
from fpdf.enums import XPos, YPos

from ecp_core.backtests.migration import ModelMigration, PairedSummary
from ecp_core.backtests.model import ResolvedModel
from ecp_core.money import money_text

_LINE = 6.0
_LABEL_WIDTH = 70.0


def _latin1(text: str) -> str:
    """``text`` in what the core fonts can draw (latin-1); anything else becomes ``?``."""
    return text.encode("latin-1", "replace").decode("latin-1")


def _rate(value: float | None) -> str:
    return "none (no pair)" if value is None else f"{value:.4f}"


def _model(model: ResolvedModel) -> str:
    return f"{model.model_ref} ({model.provider} {model.model}, family {model.family})"


def _observed_rows(observed: PairedSummary) -> list[tuple[str, str]]:
    interval = observed.difference_interval
    cost = observed.mean_cost_difference_usd
    return [
        ("Paired cases", str(observed.paired_cases)),
        ("Unpaired cases", str(observed.unpaired_cases)),
        ("Months observed", str(observed.months_observed)),
        ("Pairs a decision needs", str(observed.pairs_needed)),
        ("Incumbent success rate", _rate(observed.incumbent_success_rate)),
        ("Candidate success rate", _rate(observed.candidate_success_rate)),
        ("Difference (candidate - incumbent)", _rate(observed.success_rate_difference)),
        (
            "Hoeffding 99% interval",
            "none (no pair)"
            if interval is None
            else f"[{interval.lower:.4f}, {interval.upper:.4f}] "
            f"(half-width {interval.half_width:.4f})",
        ),
        ("Pairs with measured costs", str(observed.cost_pairs)),
        (
            "Mean replay-cost difference",
            "none (no costed pair)" if cost is None else f"USD {money_text(cost)} per case",
        ),
    ]


class _Report(FPDF):
    """An A4 page with headings, label/value rows and code/detail entries."""

    def heading(self, text: str) -> None:
        self.ln(3)
        self.set_font("Helvetica", "B", 12)
        self.cell(0, 8, _latin1(text), new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def row(self, label: str, value: str) -> None:
        self.set_font("Helvetica", "B", 10)
        self.cell(_LABEL_WIDTH, _LINE, _latin1(label))
        self.set_font("Helvetica", "", 10)
        self.multi_cell(0, _LINE, _latin1(value), new_x=XPos.LMARGIN, new_y=YPos.NEXT)

    def entry(self, code: str, detail: str) -> None:
        self.set_font("Helvetica", "B", 10)
        self.cell(0, _LINE, _latin1(code), new_x=XPos.LMARGIN, new_y=YPos.NEXT)
        self.set_font("Helvetica", "", 10)
        self.multi_cell(0, _LINE, _latin1(detail), new_x=XPos.LMARGIN, new_y=YPos.NEXT)


def draw(migration: ModelMigration) -> bytes:
    """The report of ``migration`` as PDF bytes, dated when its backtest finished."""
    pdf = _Report(orientation="portrait", unit="mm", format="A4")
    if migration.finished_at is not None:
        pdf.set_creation_date(migration.finished_at)
    pdf.set_title(f"Model-migration report {migration.report_format}")
    pdf.set_subject(migration.method_version)
    pdf.set_creator("ECP")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 16)
    pdf.cell(0, 10, "Model-migration report", new_x=XPos.LMARGIN, new_y=YPos.NEXT)
    pdf.row("Report format", migration.report_format)
    pdf.row("Method", migration.method_version)
    pdf.row("Experimental", "yes" if migration.experimental else "no")
    pdf.row("Verdict", str(migration.verdict))
    pdf.row("Backtest", migration.backtest_id)
    if migration.finished_at is not None:
        pdf.row("Backtest finished", migration.finished_at.isoformat())
    pdf.row("Incumbent", _model(migration.incumbent))
    pdf.row("Candidate", _model(migration.candidate))
    pdf.heading("Paired case-level observations")
    for label, value in _observed_rows(migration.observed):
        pdf.row(label, value)
    pdf.heading("Evidence this result lacks")
    for gap in migration.evidence_gaps:
        pdf.entry(str(gap.code), gap.detail)
    pdf.heading("About this report")
    pdf.set_font("Helvetica", "", 9)
    pdf.multi_cell(
        0,
        5,
        "The method always abstains: it says what paired evidence exists and what a migration "
        "decision would still need. It is computed from numeric verdicts and measured costs "
        "only; no case input, output, reference or rationale is stored or printed.",
        new_x=XPos.LMARGIN,
        new_y=YPos.NEXT,
    )
    return bytes(pdf.output())


__all__ = ["draw"]
