"""Statement digests and the proportional split over random statements and amounts.

The digest of a statement ignores bucket order and how its times are spelt, and changes with any
amount; the split of a bucket's dollars is exact, each part within one quantum of its share, in
the amount's own decimals.
"""

import math
import random
from datetime import datetime, timedelta, timezone
from decimal import Context, Decimal, localcontext
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.money import EXACT, exact_sum
from ecp_core.reconciliation.model import ProviderStatement
from ecp_core.reconciliation.rules import quantum_for, split, statement_digest
from ecp_core.system import FixedClock
from ecp_core.testing.strategies.evidence import exact_amounts
from ecp_core.testing.strategies.statements import (
    END,
    T0,
    billed_amounts,
    layouts,
    statement_data,
    wire_time,
)
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

NOW = T0 + timedelta(days=2)
ADMIN = ActorIdentity(subject="admin", auth_method=AuthMethod.BEARER, tenant_id="t")
amounts = billed_amounts()
statements = layouts(amounts).map(statement_data)


# --- the digest ---------------------------------------------------------------------------------


def respelled(data, rng, offsets):
    """The same statement with buckets shuffled and every time written in another offset."""

    def spell(text):
        moment = datetime.fromisoformat(text)
        return moment.astimezone(timezone(timedelta(minutes=rng.choice(offsets)))).isoformat()

    copy = dict(
        data, period_start=spell(data["period_start"]), period_end=spell(data["period_end"])
    )
    copy["buckets"] = [
        dict(b, period_start=spell(b["period_start"]), period_end=spell(b["period_end"]))
        for b in data["buckets"]
    ]
    rng.shuffle(copy["buckets"])
    return copy


def test_the_respelling_helper_really_respells():
    data = {
        "period_start": wire_time(T0),
        "period_end": wire_time(END),
        "buckets": [
            {"period_start": wire_time(T0), "period_end": wire_time(END)},
            {"period_start": wire_time(T0), "period_end": wire_time(END)},
        ],
    }
    assert respelled(data, random.Random(1), [120])["period_start"] == "2026-11-01T02:00:00+02:00"


@pytest.mark.spec("§9.1 statement-normalized")
@given(
    statements,
    st.randoms(use_true_random=False),
    st.lists(st.integers(-14 * 60 + 1, 14 * 60 - 1), min_size=1, max_size=4),
)
def test_the_digest_ignores_bucket_order_and_time_zone_spelling(data, rng, offsets):
    other = respelled(data, rng, offsets)
    digest = statement_digest(structure(data, ProviderStatement))
    assert statement_digest(structure(other, ProviderStatement)) == digest
    ecp = Ecp.in_memory(clock=FixedClock(NOW))
    first, created = ecp.reconciliation.import_statement(ADMIN, structure(other, ProviderStatement))
    assert (created, first.digest) == (True, digest)
    replay, created = ecp.reconciliation.import_statement(ADMIN, structure(data, ProviderStatement))
    assert (created, replay.digest) == (False, digest)


@pytest.mark.spec("§2.9 statement-digest")
@given(statements, st.integers(0, 20))
def test_the_digest_changes_with_any_amount(data, which):
    with localcontext(EXACT):
        index = which % len(data["buckets"])
        changed = dict(data, buckets=[dict(b) for b in data["buckets"]])
        bump = Decimal("1E-18")
        changed["buckets"][index]["amount_usd"] = str(
            Decimal(changed["buckets"][index]["amount_usd"]) + bump
        )
        changed["billed_total_usd"] = str(Decimal(data["billed_total_usd"]) + bump)
    assert statement_digest(structure(changed, ProviderStatement)) != statement_digest(
        structure(data, ProviderStatement)
    )


# --- split --------------------------------------------------------------------------------------


@st.composite
def weights_lists(draw):
    """One to eight weights of zero or more, at least one above zero."""
    rest = draw(st.lists(exact_amounts(exponents=(-18, 3)), max_size=7))
    rest.insert(
        draw(st.integers(0, len(rest))),
        draw(exact_amounts(mantissas=(1, 10**6), exponents=(-18, 3))),
    )
    return rest


@pytest.mark.spec("§9.1 proportional-split")
@given(amounts, weights_lists())
def test_split_is_exact_and_each_part_within_one_quantum(amount, weights):
    parts = split(amount, weights)
    assert len(parts) == len(weights)
    with localcontext(EXACT):
        assert exact_sum(parts) == amount
    quantum = Fraction(quantum_for(amount))
    assert quantum <= Fraction(1, 10**12)
    weight_sum = sum(Fraction(w) for w in weights)
    shares = [Fraction(amount) * Fraction(w) / weight_sum for w in weights]
    for part, share, weight in zip(parts, shares, weights, strict=True):
        assert part >= 0
        assert abs(Fraction(part) - share) < quantum
        assert (Fraction(part) / quantum).denominator == 1  # a whole number of quanta
        if weight == 0:
            assert part == 0
    # Largest remainder: a part rounded up never has a smaller remainder than one rounded down
    # (on a tie, the earlier part is the one rounded up).
    remainders = [(share / quantum) - math.floor(share / quantum) for share in shares]
    up = [Fraction(p) > s for p, s in zip(parts, shares, strict=True)]
    for i in range(len(parts)):
        for j in range(len(parts)):
            if up[i] and not up[j] and remainders[j] > 0:
                assert (remainders[i], -i) > (remainders[j], -j)


@pytest.mark.spec("§9.1 proportional-split")
@given(amounts, weights_lists())
def test_split_writes_exact_parts_with_the_amounts_own_decimals(amount, weights):
    exponent = min(0, amount.as_tuple().exponent)  # never coarser than units: 5E+2 splits as 500
    for part in split(amount, weights):
        if part == part.quantize(Decimal(1).scaleb(exponent), context=Context(prec=100)):
            assert part.as_tuple().exponent == exponent
