"""Provider statements: bucket layouts over a six-hour period, and their wire JSON.

A layout tiles the period (some tiles split by project or by model, some left out) and adds a
few buckets anywhere, which may overlap the others; so every bucket status and closure state
occurs. Amounts are the caller's (:func:`billed_amounts` draws the usual ones).
"""

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

import attrs
from hypothesis import strategies as st

from ecp_core.money import exact_sum
from ecp_core.testing.strategies.evidence import exact_amounts

T0 = datetime(2026, 11, 1, tzinfo=UTC)
"""The start of the statement period."""
MINUTES = 360
"""The statement period's length in minutes: it is ``[T0, T0 + 6h)``."""

MODELS = (None, None, "m1", "m2")
"""A bucket's model: often none (any model matches)."""

dimensions: st.SearchStrategy[dict[str, str]] = st.fixed_dictionaries(
    {},
    optional={"project_id": st.sampled_from(["p1", "p2", "P1"]), "workspace_id": st.just("w1")},
)
"""A bucket's provider dimensions: none, a project (whose case matters), a workspace."""

CUTS = st.integers(1, MINUTES - 1)
"""Where tiles of the period may end: any whole minute inside it."""


def billed_amounts(max_exponent: int = 2) -> st.SearchStrategy[Decimal]:
    """What a statement bills a bucket: 1 to a million units of ``10**e``, ``e`` from -18 up.

    An exponent above zero writes the amount in exponent notation (``5E+2``).
    """
    return exact_amounts(mantissas=(1, 10**6), exponents=(-18, max_exponent))


SHAPES = ("one", "one", "one", "by project", "by model", "none")
"""How a tile of the period is billed: one bucket, one per project or model, or not at all."""


def minute(n: int) -> datetime:
    """``n`` minutes after :data:`T0`."""
    return T0 + timedelta(minutes=n)


END = minute(MINUTES)
"""The exclusive end of the statement period."""


@attrs.frozen
class Bucket:
    """A bucket of a layout: whole minutes of the period, a model, dimensions and an amount."""

    start: int
    end: int
    model: str | None
    dimensions: dict[str, str]
    amount: Decimal

    @property
    def period_start(self) -> datetime:
        """The bucket's first instant."""
        return minute(self.start)

    @property
    def period_end(self) -> datetime:
        """The bucket's exclusive end."""
        return minute(self.end)


@st.composite
def layouts(
    draw: st.DrawFn,
    amounts: st.SearchStrategy[Decimal],
    cuts: st.SearchStrategy[int] = CUTS,
) -> list[Bucket]:
    """Buckets that tile the period at up to four of ``cuts``, plus up to two anywhere in it.

    A layout always has a bucket; each is billed one of ``amounts``.
    """
    tiles: list[tuple[int, int, str | None, dict[str, str]]] = []
    edges = [0, *sorted(draw(st.sets(cuts, max_size=4))), MINUTES]
    for start, end in itertools.pairwise(edges):
        shape = draw(st.sampled_from(SHAPES))
        model = draw(st.sampled_from(MODELS))
        if shape == "one":
            tiles.append((start, end, model, draw(dimensions)))
        elif shape == "by project":
            tiles.extend((start, end, model, {"project_id": p}) for p in ("p1", "p2"))
        elif shape == "by model":
            dims = draw(dimensions)
            tiles.extend((start, end, each, dims) for each in ("m1", "m2"))
    for _ in range(draw(st.sampled_from([0, 0, 0, 0, 1, 2])) or (0 if tiles else 1)):
        start = draw(st.integers(0, MINUTES - 1))
        end = draw(st.integers(start + 1, MINUTES))
        tiles.append((start, end, draw(st.sampled_from(MODELS)), draw(dimensions)))
    return [Bucket(*tile, amount=draw(amounts)) for tile in tiles]


def bucket_id(index: int) -> str:
    """The id of a layout's bucket ``index``: ``b0``, ``B1``, ``b2``... (not the layout's order)."""
    return f"{'bB'[index % 2]}{index}"


def wire_time(moment: datetime, index: int = 0) -> str:
    """An instant as the wire writes it: ``Z`` and ``+00:00`` in turn (``index`` chooses)."""
    text = moment.isoformat()
    return text.replace("+00:00", "Z") if index % 2 == 0 else text


def statement_data(layout: Sequence[Bucket], statement_id: str = "s1") -> dict[str, Any]:
    """The JSON of an ``openai`` statement of the period billing ``layout`` exactly."""
    buckets: list[dict[str, Any]] = []
    for index, bucket in enumerate(layout):
        item: dict[str, Any] = {
            "bucket_id": bucket_id(index),
            "period_start": wire_time(bucket.period_start, index),
            "period_end": wire_time(bucket.period_end, index + 1),
            "amount_usd": str(bucket.amount),
        }
        if bucket.model is not None:
            item["model"] = bucket.model
        if bucket.dimensions:
            item["provider_dimensions"] = bucket.dimensions
        buckets.append(item)
    return {
        "statement_id": statement_id,
        "provider": "openai",
        "period_start": wire_time(T0),
        "period_end": wire_time(END, 1),
        "currency": "USD",
        "billed_total_usd": str(exact_sum(bucket.amount for bucket in layout)),
        "source_kind": "manual",
        "buckets": buckets,
    }
