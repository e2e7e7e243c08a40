"""A sample statement the reconciliation suites store: exact amounts of every shape, every scope."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs

from ecp_core.money import money_text
from ecp_core.reconciliation.model import (
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
    StoredStatement,
)
from ecp_core.reconciliation.rules import normalized, statement_digest
from ecp_core.testing.strategies.statements import END, T0, minute

IMPORTED_AT = datetime(2026, 12, 1, 8, 30, 15, 123456, tzinfo=UTC)


def stored_statement(
    tenant: str = "t1",
    provider: str = "openai",
    statement_id: str = "openai-2026-11",
    **changes: Any,
) -> StoredStatement:
    """A normalized statement with exact amounts of every shape and every scope identifier."""
    buckets = (
        ProviderBucket(
            bucket_id="B",
            period_start=T0,
            period_end=minute(60),
            amount_usd=Decimal("0.60"),  # trailing zero kept
            model="gpt-x",
            provider_dimensions={
                "project_id": "proj_a",
                "workspace_id": "ws-1",
                "organization_id": "org:1",
                "region": "eu-west-1",
            },
        ),
        ProviderBucket(
            bucket_id="b10",
            period_start=minute(60),
            period_end=minute(61),
            amount_usd=Decimal("0.000000000000000001"),  # 1E-18: the finest amount
            model=None,
            provider_dimensions={},
        ),
        ProviderBucket(
            bucket_id="b2",
            period_start=minute(59) + timedelta(microseconds=999_999),
            period_end=END,
            amount_usd=Decimal("123456789012345.123456789012345678"),  # 15 + 18 digits
            model="modèle",
            provider_dimensions={"project_id": "projé"},
        ),
    )
    statement = ProviderStatement(
        statement_id=statement_id,
        provider=provider,
        period_start=T0,
        period_end=END,
        currency=Currency.USD,
        billed_total_usd=Decimal("123456789012345.723456789012345679"),
        source_kind=SourceKind.COST_API,
        buckets=buckets,
    )
    statement = normalized(attrs.evolve(statement, **changes))
    return StoredStatement(
        tenant_id=tenant,
        statement=statement,
        digest=statement_digest(statement),
        imported_at=IMPORTED_AT,
        imported_by="key-1",
    )


def spelled(stored: StoredStatement) -> tuple[Any, ...]:
    """Every amount as the wire writes it, and each time with its offset."""
    statement = stored.statement
    return (
        money_text(statement.billed_total_usd),
        [money_text(bucket.amount_usd) for bucket in statement.buckets],
        [
            (bucket.period_start.utcoffset(), bucket.period_end.utcoffset())
            for bucket in statement.buckets
        ],
        (statement.period_start.utcoffset(), stored.imported_at.utcoffset()),
    )
