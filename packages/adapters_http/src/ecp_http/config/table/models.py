"""Models, backtests and connectors: the catalog, the digest keys and caps, the connectors file.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

import pathlib

from ecp_http.config.table.parsers import digest_key, key_id, retired_keys
from ecp_http.config.values import Setting, flag, number, path, whole

MODEL_CATALOG: Setting[pathlib.Path | None] = Setting(
    name="ECP_MODEL_CATALOG",
    parse=path,
    default=None,
    description=(
        'path of the model catalog (TOML, one `[models."<ref>"]` table per model: `provider` `openai` '
        "or `anthropic`, `model`, `base_url`, optional `secret_name`, `family`, exact "
        "`input_usd_per_million` and `output_usd_per_million`); set, the `model_call` action is "
        "registered and backtests can call its models; a bad file, or a named secret that is not set, "
        "refuses start-up with one line naming the model and field (ADR 0037)"
    ),
)

MODEL_CALL_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_MODEL_CALL_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=60.0,
    description=(
        "bound on each try of a model-provider call; 429, 5xx and lost connections are retried (3 "
        "tries, jittered backoff), a timeout is not (ADR 0037)"
    ),
    shown_default="`60`",
)

BACKTEST_DIGEST_KEY: Setting[str | None] = Setting(
    name="ECP_BACKTEST_DIGEST_KEY",
    parse=digest_key,
    default=None,
    description=(
        "HMAC key (at least 32 characters) of backtest request digests; it also seals a request's text"
        " while its backtest waits or runs. Unset, or without `ECP_MODEL_CATALOG`, backtests are off: "
        "`POST /v1/backtests` answers 422 naming both settings (ADR 0038)"
    ),
)

BACKTEST_DIGEST_KEY_ID: Setting[str | None] = Setting(
    name="ECP_BACKTEST_DIGEST_KEY_ID",
    parse=key_id,
    default=None,
    description="id recorded with each digest (default `k-` + 12 hex digits of the key's SHA-256)",
    shown_default="derived",
)

BACKTEST_DIGEST_KEYS_RETIRED: Setting[dict[str, str]] = Setting(
    name="ECP_BACKTEST_DIGEST_KEYS_RETIRED",
    parse=retired_keys,
    default={},
    description=(
        "earlier keys as comma-separated `id:key` pairs: exact retries digested under them still "
        "return the stored result with no call and no charge; a queued backtest sealed under one still"
        " runs"
    ),
)

BACKTEST_DEADLINE_SECONDS: Setting[float] = Setting(
    name="ECP_BACKTEST_DEADLINE_SECONDS",
    parse=number(1),
    default=600.0,
    description=(
        "whole-backtest deadline from its start; a call it cuts is `replay_error`/`judge_error` "
        "(failure `deadline`), cases not reached are `not_run`, unused calls are returned"
    ),
    shown_default="`600`",
)

BACKTEST_MAX_CALLS: Setting[int | None] = Setting(
    name="ECP_BACKTEST_MAX_CALLS",
    parse=whole(4),
    default=None,
    description=(
        "self-hosting cap on one backtest's provider calls (4 per case are reserved); a larger request"
        " is 422"
    ),
)

BACKTEST_MAX_CALLS_PER_DAY: Setting[int | None] = Setting(
    name="ECP_BACKTEST_MAX_CALLS_PER_DAY",
    parse=whole(4),
    default=None,
    description=(
        "self-hosting cap on a tenant's backtest provider calls per UTC day (reserved, or used once "
        "finished); past it 429 with `Retry-After` to midnight UTC"
    ),
)

CONNECTORS_FILE: Setting[pathlib.Path | None] = Setting(
    name="ECP_CONNECTORS_FILE",
    parse=path,
    default=None,
    description=(
        'path of the settings-defined connectors (TOML, one `[connectors."<ref>"]` table each: '
        "`backend_type` `model` or `http`, `params` with secret names only); every tenant sees them as"
        ' `source: "env"` and the API cannot change them; a bad entry or a secret value refuses '
        "start-up with one line naming the connector and field (ADR 0044, `docs/connectors.md`)"
    ),
)

CONNECTOR_ALLOW_PRIVATE_TARGETS: Setting[bool] = Setting(
    name="ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS",
    parse=flag,
    default=False,
    description="lets HTTP connector tests reach loopback and private addresses (the outbound guard, ADR 0016)",
    shown_default="`false`",
)

CONNECTOR_TEST_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_CONNECTOR_TEST_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=10.0,
    description=(
        "bound on the one call of a connector test (an HTTP connector's `timeout_seconds` may lower "
        "it); a model test that times out keeps its worst case as committed cost"
    ),
    shown_default="`10`",
)
