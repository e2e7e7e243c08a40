"""What one test of each backend type reserves, and the one call it makes (through the ports).

A model test sends :data:`~ecp_core.connectors.rules.TEST_PROMPT` with the largest
``max_tokens`` (at most 16) whose worst case fits the budget, and commits the exact cost of
the answer's usage at the catalog's prices. A call that may have been served without an answer
(a timeout, an unreadable answer) keeps its worst case, ``estimated``; a refused or failed one
(4xx, 5xx, 429, no connection) measured nothing, ``0``. An HTTP test reserves and measures
``0``: a probe of an HTTP endpoint has no price the service can know.
"""

from decimal import Decimal

import attrs

from ecp_core.connectors.model import BackendType, Connector
from ecp_core.connectors.rules import (
    INPUT_TOKEN_BOUND,
    TEST_PROMPT,
    model_plan,
    worst_case,
)
from ecp_core.connectors.service import ConnectorSetup
from ecp_core.errors import ModelCallFailed, NotFound
from ecp_core.models.model import CallFailure, ChatMessage, ModelRequest
from ecp_core.money import ZERO, money_text
from ecp_core.ports.connectors import ProbeTarget
from ecp_core.types import CostMeasurement

MAYBE_SERVED = frozenset({CallFailure.TIMEOUT, CallFailure.MALFORMED})
"""Failures after which the provider may have served (and billed) the call."""


@attrs.frozen
class TrialPlan:
    """What a test reserves and, for a model, its output limit; ``refusal`` says why not."""

    reserve_usd: Decimal
    max_tokens: int | None = None
    refusal: str | None = None


@attrs.frozen
class BackendCall:
    """What the call found: ok or why not, the cost to commit and how it is known."""

    ok: bool
    cost_usd: Decimal
    measurement: CostMeasurement
    detail: str | None = None
    provider_request_id: str | None = None


def _usd(amount: Decimal) -> str:
    return f"{money_text(amount)} USD"


def plan_test(
    connector: Connector, setup: ConnectorSetup, max_cost: Decimal, room: Decimal | None
) -> TrialPlan:
    """The reservation of a test of ``connector`` within ``max_cost`` and the scope's ``room``."""
    if connector.backend_type is BackendType.HTTP:
        return TrialPlan(reserve_usd=ZERO)
    model_ref = str(connector.params["model_ref"])
    entry = None if setup.catalog is None else setup.catalog.get(model_ref)
    if entry is None:
        return TrialPlan(
            reserve_usd=ZERO,
            refusal=f"model {model_ref!r} is not in this server's model catalog: nothing was called",
        )
    budget = max_cost if room is None else min(max_cost, room)
    plan = model_plan(entry, budget)
    if plan is not None:
        return TrialPlan(reserve_usd=plan.reserve_usd, max_tokens=plan.max_tokens)
    smallest = worst_case(entry, 1)
    if smallest > max_cost:
        why = f"max_cost_usd {_usd(max_cost)} is below the smallest test's worst case"
    else:
        why = f"run_cap_usd leaves {_usd(room or ZERO)} in this campaign and run, below the smallest test's worst case"
    return TrialPlan(
        reserve_usd=smallest,
        refusal=f"{why} ({_usd(smallest)}: {INPUT_TOKEN_BOUND} input and 1 output token); "
        "nothing was reserved, called or charged",
    )


def call_backend(connector: Connector, setup: ConnectorSetup, plan: TrialPlan) -> BackendCall:
    """Make the test's one call; every failure is an answer (``ok`` false), never an error."""
    if connector.backend_type is BackendType.HTTP:
        return _probe(connector, setup)
    assert plan.max_tokens is not None  # noqa: S101 - a model plan names its output limit
    models = setup.models
    if models is None:  # pragma: no cover - plan_test refuses without a catalog
        return BackendCall(ok=False, cost_usd=ZERO, measurement=CostMeasurement.MEASURED)
    model_ref = str(connector.params["model_ref"])
    request = ModelRequest(
        model_ref=model_ref,
        messages=(ChatMessage(role="user", content=TEST_PROMPT),),
        max_tokens=plan.max_tokens,
        temperature=0,
    )
    try:
        answer = models.call(request, timeout_seconds=setup.timeout_seconds)
    except ModelCallFailed as exc:
        served = exc.failure in MAYBE_SERVED
        return BackendCall(
            ok=False,
            cost_usd=plan.reserve_usd if served else ZERO,
            measurement=CostMeasurement.ESTIMATED if served else CostMeasurement.MEASURED,
            detail=f"{exc.failure}: {exc.detail}",
        )
    except NotFound as exc:
        return BackendCall(
            ok=False, cost_usd=ZERO, measurement=CostMeasurement.MEASURED, detail=exc.detail
        )
    usage = answer.usage
    overrun = usage.input_tokens > INPUT_TOKEN_BOUND or usage.output_tokens > plan.max_tokens
    return BackendCall(
        ok=not overrun,
        cost_usd=answer.cost_usd,
        measurement=CostMeasurement.MEASURED,
        detail=(
            f"the provider reported {usage.input_tokens} input and {usage.output_tokens} output"
            f" tokens, beyond the bound ({INPUT_TOKEN_BOUND} and {plan.max_tokens}): the measured"
            f" {_usd(answer.cost_usd)} was committed in full"
            if overrun
            else None
        ),
        provider_request_id=answer.provider_request_id,
    )


def _probe(connector: Connector, setup: ConnectorSetup) -> BackendCall:
    params = connector.params
    if setup.probe is None:  # pragma: no cover - the server always has a probe
        return BackendCall(
            ok=False,
            cost_usd=ZERO,
            measurement=CostMeasurement.MEASURED,
            detail="this server cannot call HTTP connectors",
        )
    timeout = min(
        float(params.get("timeout_seconds", setup.timeout_seconds)), setup.timeout_seconds
    )
    secret = params.get("auth_secret_ref")
    target = ProbeTarget(
        url=str(params["base_url"]) + str(params.get("path", "")),
        secret_headers={} if secret is None else {str(params["auth_header"]): str(secret)},
        timeout_seconds=timeout,
    )
    answer = setup.probe.probe(target)
    ok = answer.status is not None and 200 <= answer.status < 300  # noqa: PLR2004 - the 2xx class
    detail: str | None = None
    if not ok:
        detail = answer.failure or f"the endpoint answered {answer.status}"
    return BackendCall(
        ok=ok,
        cost_usd=ZERO,
        measurement=CostMeasurement.MEASURED,
        detail=detail,
        provider_request_id=answer.request_id,
    )


__all__ = ["MAYBE_SERVED", "BackendCall", "TrialPlan", "call_backend", "plan_test"]
