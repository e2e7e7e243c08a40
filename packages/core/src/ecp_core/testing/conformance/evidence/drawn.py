"""Random evidence for the tally and provider events: values whose types and spellings collide.

Scalars that compare equal across types (``True``, ``1``, ``1.0``), instants on and beside hour
boundaries, ids whose code-point order is not their numeric or case-blind order.
"""

from datetime import timedelta
from decimal import Decimal
from typing import Any

from hypothesis import strategies as st

from ecp_core.evidence.model import (
    ChargeRevision,
    ExecutionEvent,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
)
from ecp_core.testing.conformance._evidence import TenantEvidence
from ecp_core.testing.conformance.evidence.samples import DAY
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import ORDER_IDS, amounts, costs, revised_costs
from ecp_core.testing.strategies.evidence import definition as outcome_definition
from ecp_core.testing.strategies.evidence import predicates as evidence_predicates
from ecp_core.testing.strategies.text import text

text_values = text(max_size=3)

common_scalars = st.sampled_from([True, False, 1, 1.0, 0, 0.0, -0.0, 0.5, "1", "a", "true"])

scalars = st.one_of(
    common_scalars,
    common_scalars,
    st.sampled_from([2.5, 1e20, 1e300, 1.5e300, -1, 3, "b", "B", "é", ""]),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False),
    text_values,
)

money = amounts(mantissas=(0, 10**12), exponents=(-18, 0))

versions = st.sampled_from(["v1", "v1", "v2", "v2", "V10"])

moments = st.builds(
    lambda hours, seconds: (
        NOW.replace(minute=0, second=0, microsecond=0) + timedelta(hours=hours, seconds=seconds)
    ),
    st.integers(-30, 30),
    st.sampled_from([0, 0, 1, 1799, 3599]),
)

ids = st.sampled_from(ORDER_IDS)

OUTCOME_IDS = 8

metadata = st.fixed_dictionaries(
    {},
    optional={
        "provider": st.sampled_from(["openai", "openai", "anthropic", 1]),
        "model": st.sampled_from(["gpt", "claude", 2.5]),
        "project_id": st.sampled_from(["p1", "p2", 3]),
        "region": st.just("eu"),
        "other": scalars,
    },
)


@st.composite
def executions(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an execution event but its id."""
    version = draw(versions)
    cost = draw(costs(money, summary_odds=6))
    dimensions = draw(st.dictionaries(st.sampled_from(["k", "other"]), scalars, max_size=2))
    return {
        "workflow_id": draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
        "workflow_version": version,
        "occurred_at": draw(moments),
        # Run ids may repeat across versions: a run is a (version, run id) pair.
        "run_id": draw(st.one_of(st.none(), st.integers(1, 2).map(lambda n: f"r{n}"))),
        "step_id": draw(st.one_of(st.none(), ids)),
        "attempt": draw(st.sampled_from([1, 1, 2, 3])),
        "subject_id": draw(st.one_of(st.none(), st.sampled_from(["s1", "s2", "S1"]))),
        "dimensions": dimensions,
        "cost_usd": cost.cost_usd,
        "cost_measurement": cost.measurement,
        "cost_role": cost.role,
        "charge_id": None if cost.summary else "charge",
        "metadata": draw(metadata),
    }


@st.composite
def outcomes(draw: st.DrawFn) -> dict[str, Any]:
    """The fields of an outcome event but its id."""
    version = draw(versions)
    return {
        "workflow_id": draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
        "workflow_version": version,
        "run_id": f"r{draw(st.integers(1, 2))}",
        "outcome_type": draw(st.sampled_from(["done", "done", "done", "score"])),
        "asserted_at": draw(moments),
        "value": draw(st.one_of(st.just(True), common_scalars, scalars)),
        "outcome_measurement": draw(st.sampled_from(OutcomeMeasurement)),
        "maturity": draw(st.sampled_from(OutcomeMaturity)),
    }


@st.composite
def revisions(draw: st.DrawFn, charges: list[str]) -> dict[str, Any]:
    """The fields of a revision of one of ``charges`` (or of an unknown one) but its id."""
    cost, measurement = draw(revised_costs(money))
    return {
        "charge_id": draw(st.sampled_from([*charges, "unknown-charge"])),
        "revised_at": draw(moments),
        "cost_usd": cost,
        "cost_measurement": measurement,
    }


predicates = evidence_predicates(
    st.one_of(st.just(True), common_scalars, scalars),
    st.one_of(
        st.sampled_from([Decimal(0), Decimal("0.5"), Decimal(1), Decimal(-1)]),
        st.decimals(
            allow_nan=False, allow_infinity=False, places=3, max_value=10**6, min_value=-(10**6)
        ),
    ),
)


@st.composite
def evidence(
    draw: st.DrawFn,
) -> TenantEvidence:
    """A tenant's evidence with unique event ids (ids drawn to make tie-breaks matter)."""
    rows = draw(st.lists(executions(), min_size=4, max_size=25))
    events: list[ExecutionEvent] = []
    for index, fields in enumerate(rows):
        event_id = f"e{index:02d}"
        if fields["charge_id"] is not None:
            fields["charge_id"] = f"c{index}"
        events.append(ExecutionEvent(event_id=event_id, **fields))
    charges = [e.charge_id for e in events if e.charge_id is not None] or ["c0"]
    outcome_ids = draw(st.lists(ids, unique=True, min_size=2, max_size=OUTCOME_IDS))
    asserted = [OutcomeEvent(event_id=f"o{i}", **draw(outcomes())) for i in outcome_ids]
    revision_ids = draw(st.lists(ids, unique=True, max_size=6))
    revised = [ChargeRevision(event_id=f"r{i}", **draw(revisions(charges))) for i in revision_ids]
    definitions = [
        outcome_definition(
            tenant_id="?",
            workflow_id=draw(st.sampled_from(["wf", "wf", "wf", "wf2"])),
            workflow_version=version,
            outcome_type=draw(st.sampled_from(["done", "done", "done", "score"])),
            predicate=draw(predicates),
            created_at=NOW,
        )
        for version in ("v1", "v2", "V10")
        if draw(st.integers(0, 3)) > 0
    ]
    return events, asserted, revised, definitions


tally_windows = st.builds(
    lambda start, hours, as_of, version: {
        "start": start,
        "end": start + timedelta(hours=hours),
        "as_of": as_of,
        "workflow_version": version,
    },
    moments.filter(lambda moment: moment <= NOW),
    st.integers(0, 72),
    st.one_of(moments, st.just(NOW + 2 * DAY)),
    st.one_of(st.none(), st.none(), versions),
)
