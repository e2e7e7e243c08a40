"""The cost discipline of connector tests, as pure functions over exact Decimals (ADR 0044).

A test reserves its worst case before calling, within two caps: ``max_cost_usd`` (this test)
and ``run_cap_usd`` minus what its (tenant, campaign, run) scope has committed and reserved.
After the call it commits the measured cost and releases the rest of its reservation. So for
one cap, at every moment: committed + reserved <= cap, and committed <= the sum of the
reservations, as long as no call costs more than it reserved (a model call is bounded: a fixed
tiny prompt and ``max_tokens``; an HTTP probe costs nothing measurable).
"""

from decimal import Decimal, localcontext

import attrs

from ecp_core.connectors.model import CostScope
from ecp_core.models.model import CatalogEntry, TokenUsage
from ecp_core.money import EXACT, ZERO
from ecp_core.wire import canonical_decimal

TEST_PROMPT = "Reply with the single word OK."
"""The one message a model test sends."""

INPUT_TOKEN_BOUND = 64
"""An upper bound of the tokens the prompt counts as input, chat template included.

The prompt is 30 ASCII bytes; no tokenizer in use spends more than one token per byte, and chat
templates add well under 34 tokens to one short user message.
"""

TEST_MAX_TOKENS = 16
"""The most output tokens a model test asks for (fewer when the budget is smaller)."""


def room(scope: CostScope, cap: Decimal | None) -> Decimal | None:
    """What the scope may still reserve under ``cap`` (None: no cap; never below zero)."""
    if cap is None:
        return None
    with localcontext(EXACT):
        return canonical_decimal(max(ZERO, cap - scope.committed_usd - scope.reserved_usd))


def reserve(scope: CostScope, amount: Decimal, cap: Decimal | None) -> CostScope | None:
    """The scope with ``amount`` reserved, or None when it does not fit under ``cap``."""
    left = room(scope, cap)
    if amount < 0 or (left is not None and amount > left):
        return None
    with localcontext(EXACT):
        return attrs.evolve(scope, reserved_usd=canonical_decimal(scope.reserved_usd + amount))


def settle(scope: CostScope, reserved: Decimal, measured: Decimal) -> CostScope:
    """The scope with ``measured`` committed and the whole reservation ``reserved`` released.

    A measured cost above its reservation (a provider that broke the bound) is committed in
    full: the ledger never understates money spent.
    """
    if measured < 0 or reserved < 0 or reserved > scope.reserved_usd:
        msg = "a settlement must release a reservation the scope holds, and commit >= 0"
        raise ValueError(msg)
    with localcontext(EXACT):
        return attrs.evolve(
            scope,
            committed_usd=canonical_decimal(scope.committed_usd + measured),
            reserved_usd=canonical_decimal(scope.reserved_usd - reserved),
        )


def worst_case(entry: CatalogEntry, max_tokens: int) -> Decimal:
    """The most a model test with ``max_tokens`` can cost at ``entry``'s prices (canonical)."""
    return canonical_decimal(
        entry.cost(TokenUsage(input_tokens=INPUT_TOKEN_BOUND, output_tokens=max_tokens))
    )


@attrs.frozen
class ModelPlan:
    """A bounded model call: its output limit and the worst case it reserves."""

    max_tokens: int
    reserve_usd: Decimal


def model_plan(entry: CatalogEntry, budget: Decimal) -> ModelPlan | None:
    """The largest test call (at most :data:`TEST_MAX_TOKENS`) whose worst case fits ``budget``.

    None when not even a one-token answer fits.
    """
    if worst_case(entry, 1) > budget:
        return None
    with localcontext(EXACT):
        per_token = entry.output_usd_per_million / Decimal(1_000_000)
        if per_token == 0:
            tokens = TEST_MAX_TOKENS
        else:
            spare = budget - worst_case(entry, 0)
            tokens = min(TEST_MAX_TOKENS, int(spare // per_token))
    return ModelPlan(max_tokens=tokens, reserve_usd=worst_case(entry, tokens))


__all__ = [
    "INPUT_TOKEN_BOUND",
    "TEST_MAX_TOKENS",
    "TEST_PROMPT",
    "ModelPlan",
    "model_plan",
    "reserve",
    "room",
    "settle",
    "worst_case",
]
