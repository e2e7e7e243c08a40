"""Reconciliation rules: statement checks, the digest, bucket overlap and exact allocation."""

import bisect
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime  # noqa: TC003 - used at runtime by the index's annotations
from decimal import Context, Decimal

import attrs

from ecp_core.debugger.tally import OutcomeStatus
from ecp_core.errors import FieldError
from ecp_core.evidence.model import digest_of
from ecp_core.money import EXACT, exact_sum
from ecp_core.reconciliation.matching import PricedEvent
from ecp_core.reconciliation.model import (
    AllocationGroup,
    BucketAllocation,
    BucketStatus,
    ClosureState,
    MatchedEvidence,
    ProviderBucket,
    ProviderStatement,
    ReconciliationTotals,
)
from ecp_core.types import CostMeasurement

MIN_QUANTUM_EXPONENT = -12
"""Allocations are made in units of 1E-12 USD, or finer when the bucket amount is finer."""


def statement_problems(statement: ProviderStatement) -> list[FieldError]:
    """Every rule a statement breaks beyond its schema (empty: importable)."""
    problems: list[FieldError] = []
    if statement.period_end <= statement.period_start:
        problems.append(FieldError(loc=("period_end",), msg="must be after period_start"))
    seen: set[str] = set()
    for index, bucket in enumerate(statement.buckets):
        where = ("buckets", index)
        if bucket.bucket_id in seen:
            problems.append(FieldError(loc=(*where, "bucket_id"), msg="must be unique"))
        seen.add(bucket.bucket_id)
        if bucket.period_end <= bucket.period_start:
            problems.append(
                FieldError(loc=(*where, "period_end"), msg="must be after period_start")
            )
        if bucket.period_start < statement.period_start:
            problems.append(
                FieldError(
                    loc=(*where, "period_start"), msg="must not precede the statement period"
                )
            )
        if bucket.period_end > statement.period_end:
            problems.append(
                FieldError(
                    loc=(*where, "period_end"), msg="must not end after the statement period"
                )
            )
    total = exact_sum(bucket.amount_usd for bucket in statement.buckets)
    if total != statement.billed_total_usd:
        problems.append(
            FieldError(
                loc=("billed_total_usd",),
                msg=f"must equal the sum of bucket amounts exactly ({total})",
            )
        )
    return problems


def normalized(statement: ProviderStatement) -> ProviderStatement:
    """The form the digest covers: times in UTC (the wire already makes them so), buckets sorted."""
    return attrs.evolve(
        statement, buckets=tuple(sorted(statement.buckets, key=lambda bucket: bucket.bucket_id))
    )


def statement_digest(statement: ProviderStatement) -> str:
    """``sha256:`` over the RFC 8785 JSON of the normalized statement."""
    return digest_of(normalized(statement))


def _compatible(a: ProviderBucket, b: ProviderBucket) -> bool:
    """Whether one event could fall into both buckets."""
    if a.period_start >= b.period_end or b.period_start >= a.period_end:
        return False
    if a.model is not None and b.model is not None and a.model != b.model:
        return False
    shared = a.provider_dimensions.keys() & b.provider_dimensions.keys()
    return all(a.provider_dimensions[key] == b.provider_dimensions[key] for key in shared)


def overlaps(buckets: Sequence[ProviderBucket]) -> dict[str, list[str]]:
    """For each bucket that overlaps another's scope, the ids it overlaps (sorted)."""
    ordered = sorted(buckets, key=lambda bucket: bucket.period_start)
    found: dict[str, list[str]] = defaultdict(list)
    for index, bucket in enumerate(ordered):
        for other in ordered[index + 1 :]:
            if other.period_start >= bucket.period_end:
                break
            if _compatible(bucket, other):
                found[bucket.bucket_id].append(other.bucket_id)
                found[other.bucket_id].append(bucket.bucket_id)
    return {key: sorted(value) for key, value in found.items()}


def quantum_for(amount: Decimal) -> Decimal:
    """The allocation unit for ``amount``: 1E-12, or the amount's own last digit if finer."""
    return Decimal(1).scaleb(min(MIN_QUANTUM_EXPONENT, _exponent(amount)))


def split(amount: Decimal, weights: Sequence[Decimal]) -> list[Decimal]:
    """Split ``amount`` in proportion to ``weights`` (summing above zero), exactly.

    Largest remainder: each part is floored to :func:`quantum_for`, then the units left over go
    one each to the parts with the largest remainders (ties: the earlier part). The parts sum
    to ``amount`` to the last digit.
    """
    quantum = quantum_for(amount)
    scale = max((_fraction_digits(weight) for weight in weights), default=0)
    integral = [
        int(weight.scaleb(scale, EXACT)) for weight in weights
    ]  # exact: scale covers every digit
    total = sum(integral)
    units = int(amount.scaleb(-_exponent(quantum), EXACT))
    floors = [units * weight // total for weight in integral]
    remainders = [units * weight % total for weight in integral]
    left = units - sum(floors)
    for index in sorted(range(len(weights)), key=lambda i: (-remainders[i], i))[:left]:
        floors[index] += 1
    parts = [Decimal(count).scaleb(_exponent(quantum), EXACT) for count in floors]
    # Trim to the amount's decimals, never to tens or hundreds: "5E+2" and "500" split alike.
    return [_trimmed(part, min(0, _exponent(amount))) for part in parts]


def _trimmed(part: Decimal, exponent: int) -> Decimal:
    """``part`` with the amount's own decimals when that loses nothing (0.12, not 0.12000…)."""
    shorter = part.quantize(Decimal(1).scaleb(exponent), context=Context(prec=200))
    return shorter if shorter == part else part


def _exponent(value: Decimal) -> int:
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)  # noqa: S101 - amounts are finite
    return exponent


def _fraction_digits(value: Decimal) -> int:
    return max(0, -_exponent(value))


class EventIndex:
    """Events indexed by (model, scope values) and time, so each bucket finds its matches fast."""

    def __init__(self, events: Sequence[PricedEvent], buckets: Sequence[ProviderBucket]) -> None:
        """Index ``events`` for every scope shape the ``buckets`` use."""
        ordered = sorted(events, key=lambda event: event.occurred_at)
        self._index: dict[tuple[object, ...], tuple[list[datetime], list[PricedEvent]]] = {}
        shapes = {(b.model is not None, tuple(sorted(b.provider_dimensions))) for b in buckets}
        for with_model, keys in shapes:
            for event in ordered:
                key = self._key(with_model, keys, event.model, [event.scope.get(k) for k in keys])
                times, found = self._index.setdefault(key, ([], []))
                times.append(event.occurred_at)
                found.append(event)

    @staticmethod
    def _key(
        with_model: bool,  # noqa: FBT001 - part of a key, not a switch
        keys: tuple[str, ...],
        model: str | None,
        values: Sequence[object],
    ) -> tuple[object, ...]:
        return (with_model, keys, model if with_model else None, *values)

    def matches(self, bucket: ProviderBucket) -> list[PricedEvent]:
        """Events in the bucket's half-open period, model and exact scope identifiers."""
        keys = tuple(sorted(bucket.provider_dimensions))
        key = self._key(
            bucket.model is not None,
            keys,
            bucket.model,
            [bucket.provider_dimensions[k] for k in keys],
        )
        times, found = self._index.get(key, ([], []))
        low = bisect.bisect_left(times, bucket.period_start)
        high = bisect.bisect_left(times, bucket.period_end)
        return found[low:high]


def _tallied(
    events: Sequence[PricedEvent],
) -> tuple[MatchedEvidence, dict[tuple[str, str, OutcomeStatus], Decimal]]:
    """What a bucket matched by how costs are known, and measured cost per allocation group."""
    counts: dict[CostMeasurement, int] = dict.fromkeys(CostMeasurement, 0)
    estimated: list[Decimal] = []
    measured: dict[tuple[str, str, OutcomeStatus], list[Decimal]] = defaultdict(list)
    for event in events:
        counts[event.cost_measurement] += 1
        if event.cost_usd is None:
            continue
        if event.cost_measurement is CostMeasurement.MEASURED:
            key = (event.workflow_id, event.workflow_version, event.outcome_status)
            measured[key].append(event.cost_usd)
        elif event.cost_measurement is CostMeasurement.ESTIMATED:
            estimated.append(event.cost_usd)
    telemetry = {key: exact_sum(costs) for key, costs in measured.items()}
    matched = MatchedEvidence(
        measured_events=counts[CostMeasurement.MEASURED],
        estimated_events=counts[CostMeasurement.ESTIMATED],
        unmeasured_events=counts[CostMeasurement.UNMEASURED],
        measured_usd=exact_sum(telemetry.values()),
        estimated_usd=exact_sum(estimated),
    )
    return matched, telemetry


def allocate(
    bucket: ProviderBucket, events: Sequence[PricedEvent], overlapping: Sequence[str]
) -> BucketAllocation:
    """One bucket's allocation: refused when it overlaps or has no measured cost to split by."""
    matched, telemetry = _tallied(events)
    status = BucketStatus.ALLOCATED
    if overlapping:
        status = BucketStatus.OVERLAPPING
    elif matched.measured_usd == 0:
        status = BucketStatus.NO_MEASURED_MATCH
    groups: tuple[AllocationGroup, ...] = ()
    if status is BucketStatus.ALLOCATED:
        keys = sorted(telemetry)
        parts = split(bucket.amount_usd, [telemetry[key] for key in keys])
        groups = tuple(
            AllocationGroup(
                workflow_id=key[0],
                workflow_version=key[1],
                outcome_status=key[2],
                billed_usd=part,
                telemetry_usd=telemetry[key],
            )
            for key, part in zip(keys, parts, strict=True)
        )
    return BucketAllocation(
        bucket_id=bucket.bucket_id,
        period_start=bucket.period_start,
        period_end=bucket.period_end,
        model=bucket.model,
        provider_dimensions=dict(bucket.provider_dimensions),
        amount_usd=bucket.amount_usd,
        status=status,
        overlaps_with=tuple(overlapping),
        matched=matched,
        groups=groups,
    )


def allocations(
    statement: ProviderStatement, events: Sequence[PricedEvent]
) -> tuple[list[BucketAllocation], ReconciliationTotals]:
    """Every bucket's allocation (in bucket id order) and the report's totals."""
    index = EventIndex(events, statement.buckets)
    overlapping = overlaps(statement.buckets)
    matched_ids: set[int] = set()
    result = []
    for bucket in sorted(statement.buckets, key=lambda b: b.bucket_id):
        found = index.matches(bucket)
        matched_ids.update(id(event) for event in found)
        result.append(allocate(bucket, found, overlapping.get(bucket.bucket_id, [])))
    measured = [
        e
        for e in events
        if e.cost_measurement is CostMeasurement.MEASURED and e.cost_usd is not None
    ]
    telemetry = exact_sum(e.cost_usd for e in measured if e.cost_usd is not None)
    allocated = exact_sum(a.amount_usd for a in result if a.status is BucketStatus.ALLOCATED)
    totals = ReconciliationTotals(
        billed_total_usd=statement.billed_total_usd,
        allocated_billed_usd=allocated,
        unreconciled_billed_usd=EXACT.subtract(statement.billed_total_usd, allocated),
        telemetry_measured_usd=telemetry,
        telemetry_variance_usd=EXACT.subtract(statement.billed_total_usd, telemetry),
        unbilled_telemetry_usd=exact_sum(
            e.cost_usd for e in measured if id(e) not in matched_ids and e.cost_usd is not None
        ),
        outcome_unresolved_usd=exact_sum(
            group.billed_usd
            for allocation in result
            for group in allocation.groups
            if group.outcome_status is OutcomeStatus.UNRESOLVED
        ),
    )
    return result, totals


def closure_state(
    allocations: Sequence[BucketAllocation], totals: ReconciliationTotals
) -> ClosureState:
    """Classify a report (``docs/reconciliation.md``).

    Checked in order: unreconciled, outcomes_unresolved, allocated_with_variance, reconciled.
    """
    if any(a.status is not BucketStatus.ALLOCATED for a in allocations):
        return ClosureState.UNRECONCILED
    if totals.outcome_unresolved_usd > 0:
        return ClosureState.OUTCOMES_UNRESOLVED
    if totals.telemetry_variance_usd != 0:
        return ClosureState.ALLOCATED_WITH_VARIANCE
    return ClosureState.RECONCILED
