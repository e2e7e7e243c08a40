"""Model calls: catalog entries with exact prices, requests, answers, and why a call failed.

A call's cost is exact Decimal arithmetic over the catalog's USD prices per million tokens
(CONTRACT "Model calls and backtests"); nothing is estimated and nothing rounds to zero.
"""

import enum
from decimal import Decimal, localcontext
from typing import Annotated, Literal

import attrs

from ecp_core.constraints import Items, Range, Text, checked
from ecp_core.money import EXACT

MILLION = Decimal(1_000_000)


class ProviderKind(enum.StrEnum):
    """Which wire protocol a provider speaks."""

    OPENAI = "openai"
    """Any OpenAI-compatible chat-completions server (OpenAI, vLLM, Ollama, a LiteLLM proxy)."""
    ANTHROPIC = "anthropic"
    """Anthropic's Messages API."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class CatalogEntry:
    """One model the service may call: where, with which secret, its family and its prices."""

    model_ref: Annotated[str, Text(1, 200)]
    """The name graphs and backtests use."""
    provider: ProviderKind
    model: Annotated[str, Text(1, 200)]
    """The provider's own name for the model."""
    base_url: Annotated[str, Text(1, 2048)]
    secret_name: Annotated[str, Text(1, 200)] | None
    """The secret holding the API key in the secret store (the server's ``ECP_SECRET_<NAME>`` or ``ECP_SECRETS_DIR``); None: none."""
    family: Annotated[str, Text(1, 200)]
    """Models of one family (one vendor's line) judge each other unfairly (backtest rule 3)."""
    input_usd_per_million: Decimal
    output_usd_per_million: Decimal

    def cost(self, usage: "TokenUsage") -> Decimal:
        """The exact USD cost of ``usage`` at this model's prices (raises rather than round)."""
        with localcontext(EXACT):  # the default context keeps 28 digits: a product may need more
            return (
                Decimal(usage.input_tokens) * self.input_usd_per_million
                + Decimal(usage.output_tokens) * self.output_usd_per_million
            ) / MILLION


@attrs.frozen(kw_only=True, field_transformer=checked)
class ChatMessage:
    """One message of a chat request."""

    role: Literal["system", "user", "assistant"]
    content: Annotated[str, Text(0, 1_000_000)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ModelRequest:
    """What to ask a model: the messages and the most output tokens it may produce."""

    model_ref: Annotated[str, Text(1, 200)]
    messages: Annotated[tuple[ChatMessage, ...], Items(1, 1000)]
    max_tokens: Annotated[int, Range(1, 200_000)]
    temperature: Annotated[float, Range(0, 2)] | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class TokenUsage:
    """Tokens a call used, as the provider reported them."""

    input_tokens: Annotated[int, Range(0)]
    output_tokens: Annotated[int, Range(0)]


@attrs.frozen(kw_only=True, field_transformer=checked)
class ModelAnswer:
    """A model's answer: its text, usage, exact cost and the provider's request id."""

    model_ref: str
    text: str
    usage: TokenUsage
    cost_usd: Decimal
    provider_request_id: str | None
    finish_reason: str | None = None


class CallFailure(enum.StrEnum):
    """Why a provider call failed, after its retries (``ModelCallFailed.failure``)."""

    TIMEOUT = "timeout"
    RATE_LIMITED = "rate_limited"
    SERVER_ERROR = "server_error"
    MALFORMED = "malformed"
    REFUSED = "refused"
    """The provider refused the request itself (4xx other than 429): retrying will not help."""
    UNREACHABLE = "unreachable"


__all__ = [
    "CallFailure",
    "CatalogEntry",
    "ChatMessage",
    "ModelAnswer",
    "ModelRequest",
    "ProviderKind",
    "TokenUsage",
]
