"""Exact money: Decimal arithmetic that never rounds silently.

Sums run in a context that traps every rounding, so a total is the exact sum of its parts or an
error. Ratios (cost per outcome, rates) are the one place a value is rounded, to a documented
quantum with banker's rounding.
"""

from collections.abc import Iterable
from decimal import (
    ROUND_HALF_EVEN,
    Context,
    Decimal,
    DivisionByZero,
    Inexact,
    InvalidOperation,
    Overflow,
    Rounded,
    localcontext,
)

EXACT = Context(prec=200, traps=[InvalidOperation, DivisionByZero, Overflow, Inexact, Rounded])
"""Arithmetic that raises instead of rounding."""

RATIO_QUANTUM = Decimal("1E-12")
"""Derived ratios are rounded half-even to 12 decimal places."""

MAX_INTEGER_DIGITS = 15
MAX_FRACTION_DIGITS = 18

ZERO = Decimal(0)


def money_problem(amount: Decimal) -> str | None:
    """Why ``amount`` is not an acceptable amount of USD, or ``None``."""
    if not amount.is_finite():
        return "must be a finite decimal"
    if amount < 0:
        return "must not be negative"
    sign_digits_exponent = amount.as_tuple()
    exponent = sign_digits_exponent.exponent
    assert isinstance(exponent, int)  # noqa: S101 - finite decimals have an integer exponent
    fraction = max(0, -exponent)
    integer = max(0, len(sign_digits_exponent.digits) + exponent)
    if fraction > MAX_FRACTION_DIGITS:
        return f"must have at most {MAX_FRACTION_DIGITS} decimal places"
    if integer > MAX_INTEGER_DIGITS:
        return f"must be below 10^{MAX_INTEGER_DIGITS}"
    return None


def exact_sum(amounts: Iterable[Decimal]) -> Decimal:
    """The exact sum (``0`` for none); raises rather than round."""
    with localcontext(EXACT):  # every addition traps instead of rounding
        return sum(amounts, ZERO)


def ratio(numerator: Decimal | int, denominator: Decimal | int) -> Decimal | None:
    """``numerator / denominator`` rounded to :data:`RATIO_QUANTUM`; ``None`` when dividing by 0."""
    if denominator == 0:
        return None
    context = Context(prec=200, rounding=ROUND_HALF_EVEN)
    quotient = context.divide(Decimal(numerator), Decimal(denominator))
    rounded = quotient.quantize(RATIO_QUANTUM, rounding=ROUND_HALF_EVEN, context=context)
    return rounded.normalize(context)  # no trailing zeros: 0.5, not 0.500000000000


def money_text(amount: Decimal) -> str:
    """The wire spelling of a decimal: plain notation (``1E-8`` → ``0.00000001``), exact."""
    return format(amount, "f")
