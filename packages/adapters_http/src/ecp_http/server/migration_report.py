"""The model-migration report as PDF (``model-migration-v3``, ADR 0039).

Drawing needs fpdf2, which brings Pillow, fontTools and numpy: about a second of imports that
every server start would pay. They load with the first report instead
(:mod:`ecp_http.server.migration_drawing`).
"""

from ecp_core.backtests.migration import ModelMigration

PDF_MEDIA_TYPE = "application/pdf"


def migration_pdf(migration: ModelMigration) -> bytes:
    """The report of ``migration`` as the bytes of a PDF document (the same backtest, the same bytes)."""
    from ecp_http.server.migration_drawing import draw  # noqa: PLC0415 - fpdf2 only when a report is asked for

    return draw(migration)


__all__ = ["PDF_MEDIA_TYPE", "migration_pdf"]
