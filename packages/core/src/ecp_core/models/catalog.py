"""The model catalog's rules: one table per model ref, exact prices, and problems named by field.

The catalog file (TOML; the server's ``ECP_MODEL_CATALOG``) is read by the HTTP adapter; this module turns the
parsed document into :class:`~ecp_core.models.model.CatalogEntry` values (ADR 0037)::

    [models."fast"]
    provider = "openai"                 # or "anthropic"
    model = "gpt-4o-mini"               # the provider's own name
    base_url = "https://api.openai.com/v1"
    secret_name = "OPENAI_API_KEY"      # optional: a server without a key leaves it out
    family = "openai"
    input_usd_per_million = "0.15"      # a string, an integer, or a TOML float read exactly
    output_usd_per_million = "0.60"

Prices are exact: a binary float is refused (the reader passes ``parse_float=Decimal``, so a
TOML float arrives as the decimal it spells). A price has at most :data:`PRICE_PLACES` decimal
places and is below :data:`PRICE_LIMIT`, so that any call's cost is an exact amount of money.
"""

import re
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from ecp_core.models.model import CatalogEntry, ProviderKind

PRICE_PLACES = 12
"""Decimal places a price per million tokens may have: a cost then has at most 18 (money's)."""

PRICE_LIMIT = Decimal(1_000_000)
"""Prices are below a million USD per million tokens."""

MAX_TOKENS = 10**9
"""The most tokens of one kind a provider may report for a call (more is a malformed answer)."""

_REQUIRED = ("provider", "model", "base_url", "family")
_PRICES = ("input_usd_per_million", "output_usd_per_million")
FIELDS = frozenset({*_REQUIRED, *_PRICES, "secret_name"})
"""Every key a model's table may have."""

_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
_SECRET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


class CatalogProblem(ValueError):
    """The catalog is invalid; the message names the model ref and the field."""

    def __init__(self, model_ref: str | None, field: str | None, problem: str) -> None:
        """``model ref``, ``field`` (either may be None for the whole document) and why."""
        where = ": ".join(
            part
            for part in (
                None if model_ref is None else f"model {model_ref!r}",
                field,
            )
            if part
        )
        super().__init__(f"{where}: {problem}" if where else problem)
        self.model_ref = model_ref
        self.field = field


def _decimal(value: object) -> Decimal:
    """``value`` as the decimal it spells; ValueError for a float, a boolean or other types."""
    if isinstance(value, bool):
        msg = "must be a decimal number, not a boolean"
        raise ValueError(msg)  # noqa: TRY004 - one error kind for every bad price
    if isinstance(value, float):
        msg = "must be written as a string or read exactly (a binary float is not exact)"
        raise ValueError(msg)  # noqa: TRY004
    if isinstance(value, int | Decimal):
        return Decimal(value)
    if not isinstance(value, str):
        msg = f"must be a decimal number, not {type(value).__name__}"
        raise ValueError(msg)  # noqa: TRY004
    try:
        return Decimal(value.strip())
    except InvalidOperation:
        msg = f"{value!r} is not a decimal number"
        raise ValueError(msg) from None


def price_problem(price: Decimal) -> str | None:
    """Why ``price`` is not a price per million tokens, or None."""
    if not price.is_finite():
        return "must be a finite decimal number"
    if price < 0:
        return "must not be negative"
    if price >= PRICE_LIMIT:
        return f"must be below {PRICE_LIMIT} USD per million tokens"
    exponent = price.as_tuple().exponent
    assert isinstance(exponent, int)  # noqa: S101 - finite
    if -exponent > PRICE_PLACES:
        return f"must have at most {PRICE_PLACES} decimal places"
    return None


def exact_price(value: object) -> Decimal:
    """A price per million tokens, exactly as written; ValueError saying why it is not one."""
    price = _decimal(value)
    problem = price_problem(price)
    if problem is not None:
        raise ValueError(problem)
    return price


def _text(model_ref: str, table: Mapping[str, Any], field: str, *, required: bool) -> str | None:
    value = table.get(field)
    if value is None:
        if required:
            raise CatalogProblem(model_ref, field, "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        raise CatalogProblem(model_ref, field, "must be non-empty text")
    if len(value) > 2048:  # noqa: PLR2004 - the longest base URL a CatalogEntry takes
        raise CatalogProblem(model_ref, field, "is too long")
    return value.strip()


def catalog_entry(model_ref: str, table: object) -> CatalogEntry:
    """One model's table as an entry; CatalogProblem naming the field that is wrong."""
    if not isinstance(table, Mapping):
        raise CatalogProblem(model_ref, None, "must be a table of its settings")
    if not 1 <= len(model_ref) <= 200 or model_ref != model_ref.strip():  # noqa: PLR2004
        raise CatalogProblem(model_ref, None, "a model ref is 1 to 200 characters, not padded")
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise CatalogProblem(
            model_ref, unknown[0], f"is not a setting ({', '.join(sorted(FIELDS))})"
        )
    texts = {field: _text(model_ref, table, field, required=True) for field in _REQUIRED}
    secret = _text(model_ref, table, "secret_name", required=False)
    if secret is not None and _SECRET_NAME.fullmatch(secret) is None:
        raise CatalogProblem(model_ref, "secret_name", f"{secret!r} is not a secret name")
    try:
        provider = ProviderKind(str(texts["provider"]))
    except ValueError:
        kinds = " or ".join(kind.value for kind in ProviderKind)
        raise CatalogProblem(model_ref, "provider", f"must be {kinds}") from None
    base_url = str(texts["base_url"]).rstrip("/")
    if _URL.fullmatch(base_url) is None:
        raise CatalogProblem(model_ref, "base_url", "must be an http:// or https:// URL")
    prices = {}
    for field in _PRICES:
        if field not in table:
            raise CatalogProblem(model_ref, field, "is required")
        try:
            prices[field] = exact_price(table[field])
        except ValueError as exc:
            raise CatalogProblem(model_ref, field, str(exc)) from None
    return CatalogEntry(
        model_ref=model_ref,
        provider=provider,
        model=str(texts["model"]),
        base_url=base_url,
        secret_name=secret,
        family=str(texts["family"]),
        input_usd_per_million=prices["input_usd_per_million"],
        output_usd_per_million=prices["output_usd_per_million"],
    )


def parse_catalog(document: Mapping[str, Any]) -> dict[str, CatalogEntry]:
    """Every model of a parsed catalog document, by model ref; CatalogProblem at the first fault."""
    unknown = sorted(set(document) - {"models"})
    if unknown:
        raise CatalogProblem(None, unknown[0], "is not a catalog section (only [models.<ref>])")
    models = document.get("models")
    if not isinstance(models, Mapping) or not models:
        raise CatalogProblem(None, "models", "the catalog names no model ([models.<ref>])")
    return {str(ref): catalog_entry(str(ref), table) for ref, table in models.items()}


__all__ = [
    "FIELDS",
    "MAX_TOKENS",
    "PRICE_LIMIT",
    "PRICE_PLACES",
    "CatalogProblem",
    "catalog_entry",
    "exact_price",
    "parse_catalog",
    "price_problem",
]
