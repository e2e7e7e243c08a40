"""Offline: one complete page of a provider's organization cost API into a statement.

The page is the shape an organization costs endpoint answers with: ``{"object": "page",
"data": [{"start_time", "end_time", "results": [{"amount": {"value", "currency"},
"line_item", "project_id"}]}], "has_more", "next_page"}`` with Unix-second times. Only one
complete page in USD is accepted (``has_more`` false, no ``next_page``). Line items are
consolidated per time bucket (a day) and project; ``project_id`` becomes the bucket's matching
dimension. Results without a project become a bucket without dimensions, which overlaps the
day's project buckets and so stays unreconciled rather than being guessed at. Results of zero
are dropped (nothing was billed); negative ones (credits) are refused.

Amounts are read exactly from the JSON text (never through binary floats).
"""

import json
from collections import defaultdict
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.money import exact_sum, money_problem
from ecp_core.reconciliation.model import (
    Currency,
    ProviderBucket,
    ProviderStatement,
    SourceKind,
)


def _refuse(where: tuple[str | int, ...], msg: str) -> ValidationFailed:
    return ValidationFailed(
        f"the cost page cannot become a statement: {msg}", errors=[FieldError(loc=where, msg=msg)]
    )


def parse_page(text: str | bytes) -> Any:  # noqa: ANN401 - JSON
    """Parse a cost page keeping every number exact (decimals, not floats)."""
    try:
        return json.loads(text, parse_float=Decimal, parse_int=Decimal)
    except ValueError as exc:
        raise _refuse((), f"not JSON ({exc})") from exc


def _moment(value: Any, where: tuple[str | int, ...]) -> datetime:  # noqa: ANN401
    if not isinstance(value, Decimal) or value != value.to_integral_value():
        raise _refuse(where, "must be whole Unix seconds")
    try:
        return datetime.fromtimestamp(int(value), tz=UTC)
    except (OverflowError, OSError, ValueError) as exc:
        raise _refuse(where, "is outside the representable time range") from exc


def _amount(result: Any, where: tuple[str | int, ...]) -> Decimal:  # noqa: ANN401
    amount = result.get("amount") if isinstance(result, dict) else None
    if not isinstance(amount, dict) or not isinstance(amount.get("value"), Decimal):
        raise _refuse((*where, "amount"), "must be an object with a numeric value")
    if str(amount.get("currency", "")).upper() != Currency.USD:
        raise _refuse((*where, "amount", "currency"), "must be usd")
    value: Decimal = amount["value"]
    if value < 0:
        raise _refuse((*where, "amount", "value"), "credits (negative amounts) are not modelled")
    problem = money_problem(value)
    if problem is not None:
        raise _refuse((*where, "amount", "value"), problem)
    return value


def normalize_cost_page(
    page: Any,  # noqa: ANN401 - parsed JSON
    *,
    provider: str,
    statement_id: str | None = None,
) -> ProviderStatement:
    """Turn a parsed cost page into a statement (raises ValidationFailed when it cannot)."""
    if not isinstance(page, dict) or page.get("object") != "page":
        raise _refuse(("object",), "must be a cost page (object 'page')")
    if page.get("has_more") is not False or page.get("next_page") is not None:
        raise _refuse(("has_more",), "the page says more pages exist; import one complete page")
    data = page.get("data")
    if not isinstance(data, list) or not data:
        raise _refuse(("data",), "must list at least one time bucket")
    sums = _consolidate(data)
    try:
        return _statement(sums, provider, statement_id)
    except ValueError as exc:  # a field the statement schema refuses (an id, a project)
        raise _refuse((), str(exc)) from exc


Sums = dict[tuple[datetime, datetime, str | None], list[Decimal]]


def _consolidate(data: list[Any]) -> Sums:
    """Amounts by (bucket start, bucket end, project)."""
    sums: Sums = defaultdict(list)
    for index, bucket in enumerate(data):
        where: tuple[str | int, ...] = ("data", index)
        if not isinstance(bucket, dict):
            raise _refuse(where, "must be an object")
        start = _moment(bucket.get("start_time"), (*where, "start_time"))
        end = _moment(bucket.get("end_time"), (*where, "end_time"))
        if end <= start:
            raise _refuse((*where, "end_time"), "must be after start_time")
        results = bucket.get("results")
        if not isinstance(results, list):
            raise _refuse((*where, "results"), "must be a list")
        for position, result in enumerate(results):
            value = _amount(result, (*where, "results", position))
            project = result.get("project_id")
            if project is not None and not isinstance(project, str):
                raise _refuse((*where, "results", position, "project_id"), "must be a string")
            sums[(start, end, project)].append(value)
    return sums


def _order(
    start: datetime, end: datetime, project: str | None
) -> tuple[datetime, bool, str, datetime]:
    """Bucket order: start, unscoped before projects, project id by code point, then end."""
    return (start, project is not None, project or "", end)


def _statement(
    sums: Sums,
    provider: str,
    statement_id: str | None,
) -> ProviderStatement:
    buckets = [
        ProviderBucket(
            bucket_id=f"{start:%Y%m%dT%H%M%SZ}-{end:%Y%m%dT%H%M%SZ}"
            + ("" if project is None else f"/{project}"),
            period_start=start,
            period_end=end,
            amount_usd=total,
            provider_dimensions={} if project is None else {"project_id": project},
        )
        for (start, end, project), values in sorted(sums.items(), key=lambda item: _order(*item[0]))
        if (total := exact_sum(values)) > 0
    ]
    if not buckets:
        raise _refuse(("data",), "nothing was billed on this page")
    period_start = min(bucket.period_start for bucket in buckets)
    period_end = max(bucket.period_end for bucket in buckets)
    return ProviderStatement(
        statement_id=statement_id or f"{provider}-{period_start:%Y%m%d}-{period_end:%Y%m%d}",
        provider=provider,
        period_start=period_start,
        period_end=period_end,
        currency=Currency.USD,
        billed_total_usd=exact_sum(bucket.amount_usd for bucket in buckets),
        source_kind=SourceKind.COST_API,
        buckets=tuple(buckets),
    )
