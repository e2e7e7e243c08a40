"""Economic evidence: exact amounts, costs, success predicates, outcome definitions.

The building blocks every evidence property shares. Each suite keeps its own vocabulary (which
workflows, versions, runs and instants it draws from), since that is what makes its edges meet.
"""

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any, TypeVar

import attrs
from hypothesis import strategies as st

from ecp_core.evidence.model import (
    CostRole,
    Digested,
    OutcomeDefinition,
    PredicateKind,
    SuccessPredicate,
    digest_of,
)
from ecp_core.types import CostMeasurement

T = TypeVar("T")

EDGE_AMOUNTS = (Decimal(0), Decimal("0.000"), Decimal("1E-18"), Decimal(999_999_999_999_999))
"""Amounts at the edges: zero with and without decimals, the finest amount, fifteen digits."""

MOSTLY_MEASURED = (CostMeasurement.MEASURED,) * 4 + tuple(CostMeasurement)
"""Cost measurements, measured five times in seven: what most evidence is, the rest occurring."""

ORDER_IDS = ("a", "b", "B", "a1", "é", "Z", "10", "9")
"""Id suffixes whose code-point order differs from numeric and case-blind order (for ties)."""


def digested(item: T) -> Digested[T]:
    """An event with its content digest, as ingestion stores it."""
    return Digested(item, digest_of(item))


def exact_amounts(
    mantissas: tuple[int, int] = (0, 10**6), exponents: tuple[int, int] = (-18, 0)
) -> st.SearchStrategy[Decimal]:
    """Exact amounts ``n * 10**e``: the spelling (the exponent) varies, not only the value."""
    return st.builds(
        lambda n, e: Decimal(n).scaleb(e), st.integers(*mantissas), st.integers(*exponents)
    )


def amounts(
    edges: Sequence[Decimal] = EDGE_AMOUNTS,
    mantissas: tuple[int, int] = (0, 10**6),
    exponents: tuple[int, int] = (-18, 0),
) -> st.SearchStrategy[Decimal]:
    """An edge amount or an exact amount of :func:`exact_amounts`."""
    return st.one_of(st.sampled_from(edges), exact_amounts(mantissas, exponents))


@attrs.frozen
class Cost:
    """An execution event's cost fields."""

    role: CostRole
    cost_usd: Decimal | None
    measurement: CostMeasurement

    @property
    def summary(self) -> bool:
        """A summary event: it carries no charge."""
        return self.role is CostRole.SUMMARY


@st.composite
def costs(
    draw: st.DrawFn,
    money: st.SearchStrategy[Decimal],
    *,
    summary_odds: int = 6,
    measurements: Sequence[CostMeasurement] = tuple(CostMeasurement),
) -> Cost:
    """An execution's cost: one time in ``summary_odds`` a summary, else a charge.

    A charge is measured as drawn from ``measurements``, with an amount of ``money`` unless
    unmeasured.
    """
    if draw(st.integers(0, summary_odds - 1)) == 0:
        return Cost(CostRole.SUMMARY, None, CostMeasurement.UNMEASURED)
    measurement = draw(st.sampled_from(measurements))
    cost = None if measurement is CostMeasurement.UNMEASURED else draw(money)
    return Cost(CostRole.CHARGE, cost, measurement)


@st.composite
def revised_costs(
    draw: st.DrawFn,
    money: st.SearchStrategy[Decimal],
    measurements: Sequence[CostMeasurement] = tuple(CostMeasurement),
) -> tuple[Decimal | None, CostMeasurement]:
    """A charge revision's cost and measurement (no amount when unmeasured)."""
    measurement = draw(st.sampled_from(measurements))
    return (None if measurement is CostMeasurement.UNMEASURED else draw(money)), measurement


def predicates(
    values: st.SearchStrategy[Any], thresholds: st.SearchStrategy[Decimal]
) -> st.SearchStrategy[SuccessPredicate]:
    """Success predicates: equal to one of ``values``, or compared with one of ``thresholds``."""
    return st.one_of(
        st.builds(lambda value: SuccessPredicate(kind=PredicateKind.EQUALS, value=value), values),
        st.builds(
            lambda kind, threshold: SuccessPredicate(kind=kind, threshold=threshold),
            st.sampled_from([k for k in PredicateKind if k is not PredicateKind.EQUALS]),
            thresholds,
        ),
    )


def definition(
    predicate: SuccessPredicate,
    *,
    tenant_id: str,
    workflow_id: str,
    workflow_version: str,
    outcome_type: str,
    created_at: datetime,
    created_by: str = "key-1",
) -> OutcomeDefinition:
    """An outcome definition of ``predicate``, with its digest."""
    return OutcomeDefinition(
        tenant_id=tenant_id,
        workflow_id=workflow_id,
        workflow_version=workflow_version,
        outcome_type=outcome_type,
        predicate=predicate,
        digest=digest_of(predicate),
        created_at=created_at,
        created_by=created_by,
    )
