"""Every setting of the server and the client commands, declared once: the one table.

Each :class:`~ecp_http.config.values.Setting` gives the variable's name, its parser, its
default and its description; :meth:`ecp_http.config.settings.Settings.from_mapping` (and the client
commands, and ``ecp migrate``) read each through its declaration, and the settings tables of
docs/operations.md and docs/hosted.md are rendered from :data:`SETTINGS`
(:mod:`ecp_http.openapi.settings_doc`). No other module names a variable (ADR 0072).
"""

import pathlib
import re
from typing import Any

from ecp_core.backtests.digest import MIN_KEY_LENGTH
from ecp_core.retention.model import MAX_TTL_SECONDS
from ecp_http.config.values import (
    Setting,
    SettingFamily,
    SettingsError,
    at_least,
    choice,
    flag,
    number,
    stripped,
    text,
    url,
    whole,
)
from ecp_http.logs import FORMATS, LEVELS

JWT_SECRET_MIN = 32
"""The fewest characters ``ECP_JWT_SECRET`` may have (HS256 wants 256 bits)."""

COOKIE_PASSWORD_MIN = 32
"""The fewest characters ``ECP_IDP_COOKIE_PASSWORD`` may have."""

WORKOS_API = "https://api.workos.com"
PADDLE_API = "https://api.paddle.com"
PADDLE_SANDBOX_API = "https://sandbox-api.paddle.com"
DEFAULT_URL = "http://127.0.0.1:8000"
"""Where the client commands find the service unless told."""

_ACTION_MODULE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def path(_: str, raw: str) -> pathlib.Path:
    """A file or directory path, as given."""
    return pathlib.Path(raw)


def _ttl(name: str, raw: str) -> int:
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_TTL_SECONDS:
        raise SettingsError(
            f"{name} must be whole seconds from 1 to {MAX_TTL_SECONDS}, not {raw!r}"
        )
    return int(raw)


def _action_modules(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated ``module:function`` plug-ins, in order."""
    named = tuple(part.strip() for part in raw.split(","))
    for part in named:
        if part and not _ACTION_MODULE.fullmatch(part):
            raise SettingsError(f"{name}: {part!r} is not module:function")
    return tuple(part for part in named if part)


def _otlp_url(name: str, raw: str) -> str | None:
    given = raw.strip()
    if given and not given.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http:// or https:// URL, not {given!r}")
    return given or None


def _otel_disabled(_: str, raw: str) -> bool:
    """OpenTelemetry's own rule: only ``true`` (any case) disables."""
    return raw.strip().lower() == "true"


def key_id(name: str, raw: str) -> str:
    """A digest key id: 1 to 64 letters, digits, ``.``, ``_`` or ``-``."""
    if not _KEY_ID.fullmatch(raw):
        raise SettingsError(f"{name}: a key id is 1 to 64 letters, digits, '.', '_' or '-'")
    return raw


_digest_key = at_least(MIN_KEY_LENGTH)


def _retired_keys(name: str, raw: str) -> dict[str, str]:
    """Comma-separated ``id:key`` pairs, each id once, each key long enough."""
    retired: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in raw.split(","))):
        given_id, colon, key = pair.partition(":")
        if not colon:
            raise SettingsError(f"{name}: each entry is id:key")
        key_id(name, given_id)
        if given_id in retired:
            raise SettingsError(f"{name}: key id {given_id!r} is given twice")
        _digest_key(name, key)
        retired[given_id] = key
    return retired


def _cookie_password(name: str, raw: str) -> str:
    password = raw.strip()
    if len(password) < COOKIE_PASSWORD_MIN:
        raise SettingsError(f"{name} must have at least {COOKIE_PASSWORD_MIN} characters")
    return password


DATABASE_URL: Setting[str | None] = Setting(
    name="ECP_DATABASE_URL",
    parse=text,
    default=None,
    description="a `postgresql://` URL; unset starts an embedded PostgreSQL in `$ECP_DATA_DIR/pg`",
)

DATABASE_POOL_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_DATABASE_POOL_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=5.0,
    description=(
        "how long a request or worker waits for a database connection before `503 "
        "database_unavailable` (ADR 0021)"
    ),
    shown_default="`5`",
)

DATA_DIR: Setting[pathlib.Path] = Setting(
    name="ECP_DATA_DIR",
    parse=path,
    default=pathlib.Path(".ecp"),
    description="embedded database, development secrets, artifacts",
    shown_default="`./.ecp`",
)

HOST: Setting[str] = Setting(
    name="ECP_HOST",
    parse=text,
    default="127.0.0.1",
    description="the address the server listens on (`ecp serve --host` overrides)",
    shown_default="`127.0.0.1`",
)

PORT: Setting[int] = Setting(
    name="ECP_PORT",
    parse=whole(1, maximum=65535),
    default=8000,
    description="the port the server listens on, 0 for any free one (`ecp serve --port` overrides)",
    shown_default="`8000`",
)

JWT_SECRET: Setting[str | None] = Setting(
    name="ECP_JWT_SECRET",
    parse=at_least(JWT_SECRET_MIN),
    default=None,
    description=(
        "HS256 secret for bearer tokens, at least 32 characters; generated into "
        "`$ECP_DATA_DIR/jwt-secret` (0600) when unset, refused unset when hosted"
    ),
    shown_default="generated",
)

AUDIT_SIGNING_KEY: Setting[str | None] = Setting(
    name="ECP_AUDIT_SIGNING_KEY",
    parse=text,
    default=None,
    description=(
        "base64 Ed25519 seed (32 bytes) that signs audit records; generated into "
        "`$ECP_DATA_DIR/audit-signing-key` (0600) when unset, refused unset when hosted"
    ),
    shown_default="generated",
)

AUDIT_SIGNING_KEY_ID: Setting[str | None] = Setting(
    name="ECP_AUDIT_SIGNING_KEY_ID",
    parse=text,
    default=None,
    description="key id published with the public key (default `ed25519:` + 16 hex digits of its SHA-256)",
    shown_default="derived",
)

AUDIT_VERIFICATION_KEYS: Setting[str | None] = Setting(
    name="ECP_AUDIT_VERIFICATION_KEYS",
    parse=text,
    default=None,
    description=(
        "retired audit keys that still verify records and attestations they signed, and are published "
        "at `/v1/audit/signing-keys`: comma-separated `key_id:base64-public-key` pairs (the public "
        "half only)"
    ),
    shown_default="none",
)

AUDIT_SIGNING_REQUIRED: Setting[bool] = Setting(
    name="ECP_AUDIT_SIGNING_REQUIRED",
    parse=flag,
    default=True,
    description=(
        "whether `GET /v1/audit/readiness` requires signed audit records: without a signer the service"
        " reports `not_ready` (ADR 0042)"
    ),
    shown_default="`true`",
)

HOSTED: Setting[bool] = Setting(
    name="ECP_HOSTED",
    parse=flag,
    default=False,
    description="hosted mode: real secrets required, `ecp token` disabled",
    shown_default="`false`",
)

WORKERS: Setting[int] = Setting(
    name="ECP_WORKERS",
    parse=whole(1),
    default=1,
    description=(
        "server processes `ecp serve` runs on one port and one database (`ecp serve --workers N` "
        "overrides); the parent starts the embedded PostgreSQL and migrates once, then supervises them"
        " (`docs/scaling.md`, ADR 0062)"
    ),
    shown_default="`1`",
)

DISPATCH_WORKERS: Setting[int] = Setting(
    name="ECP_DISPATCH_WORKERS",
    parse=whole(1),
    default=2,
    description="run-dispatch threads per process (claims use `SKIP LOCKED`; processes may share a database)",
    shown_default="`2`",
)

AUDIT_VERIFY_CONNECTIONS: Setting[int] = Setting(
    name="ECP_AUDIT_VERIFY_CONNECTIONS",
    parse=whole(1),
    default=4,
    description=(
        "pooled connections audit verifications hold at once per process, all requests together (ADR "
        "0061); the pool holds `max(4, ECP_DISPATCH_WORKERS + 8)`, so keep it well below that"
    ),
    shown_default="`4`",
)

DISPATCH_POLL_SECONDS: Setting[float] = Setting(
    name="ECP_DISPATCH_POLL_SECONDS",
    parse=number(0.01),
    default=0.2,
    description="how often an idle worker looks for runnable runs",
    shown_default="`0.2`",
)

DISPATCH_NOTIFY: Setting[bool] = Setting(
    name="ECP_DISPATCH_NOTIFY",
    parse=flag,
    default=True,
    description=(
        "PostgreSQL `LISTEN/NOTIFY` wakes the run workers, `Prefer: wait` and webhook delivery of "
        "every server process on the database at once; polling stays the fallback (a lost notification"
        " or listener costs at most one poll interval; the listener reconnects by itself). `false`: "
        "poll only (ADR 0063)"
    ),
    shown_default="`true`",
)

DISPATCH_MAX_ATTEMPTS: Setting[int] = Setting(
    name="ECP_DISPATCH_MAX_ATTEMPTS",
    parse=whole(1),
    default=3,
    description=(
        "dispatches of one run that may raise in a row before it ends `failed` with `dispatch_error` "
        "(ADR 0019)"
    ),
    shown_default="`3`",
)

DISPATCH_BACKOFF_SECONDS: Setting[float] = Setting(
    name="ECP_DISPATCH_BACKOFF_SECONDS",
    parse=number(0),
    default=1.0,
    description="wait after a run's first failed dispatch, doubling with each further one (at most 300 s)",
    shown_default="`1`",
)

MAX_WAIT_SECONDS: Setting[float] = Setting(
    name="ECP_MAX_WAIT_SECONDS",
    parse=number(0),
    default=60.0,
    description="cap on `Prefer: wait=N`",
    shown_default="`60`",
)

MAX_BODY_BYTES: Setting[int] = Setting(
    name="ECP_MAX_BODY_BYTES",
    parse=whole(1024),
    default=1024 * 1024,
    description=(
        "largest request body (1 MiB); larger is 413 `payload_too_large`, read no further than the cap"
        " (ADR 0020)"
    ),
    shown_default="`1048576`",
)

MAX_EVIDENCE_BODY_BYTES: Setting[int] = Setting(
    name="ECP_MAX_EVIDENCE_BODY_BYTES",
    parse=whole(1024),
    default=16 * 1024 * 1024,
    description="largest evidence batch body (16 MiB)",
    shown_default="`16777216`",
)

ESCALATION_INTERVAL_SECONDS: Setting[float] = Setting(
    name="ECP_ESCALATION_INTERVAL_SECONDS",
    parse=number(0.1),
    default=30.0,
    description="how often overdue approvals are escalated",
    shown_default="`30`",
)

WEBHOOK_MAX_ATTEMPTS: Setting[int] = Setting(
    name="ECP_WEBHOOK_MAX_ATTEMPTS",
    parse=whole(1),
    default=5,
    description="attempts before a delivery becomes a dead letter",
    shown_default="`5`",
)

WEBHOOK_BACKOFF_BASE_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_BACKOFF_BASE_SECONDS",
    parse=number(0.01),
    default=2.0,
    description="first retry waits 1–2 s, then doubling (equal jitter)",  # noqa: RUF001
    shown_default="`2`",
)

WEBHOOK_BACKOFF_MAX_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_BACKOFF_MAX_SECONDS",
    parse=number(0.01),
    default=3600.0,
    description="cap on one wait (and on an honoured `Retry-After`)",
    shown_default="`3600`",
)

WEBHOOK_TIMEOUT_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_TIMEOUT_SECONDS",
    parse=number(0.1),
    default=10.0,
    description="per-request timeout",
    shown_default="`10`",
)

WEBHOOK_ALLOW_PRIVATE_TARGETS: Setting[bool] = Setting(
    name="ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS",
    parse=flag,
    default=False,
    description=(
        "allow loopback and private (RFC 1918, `fc00::/7`) targets; link-local, metadata, shared, "
        "site-local, multicast and reserved addresses are always refused, in any IPv4-mapped, 6to4 or "
        "NAT64 form (ADR 0016)"
    ),
    shown_default="`false`",
)

WEBHOOK_POLL_SECONDS: Setting[float] = Setting(
    name="ECP_WEBHOOK_POLL_SECONDS",
    parse=number(0.01),
    default=0.1,
    description="how often the delivery worker looks for due deliveries",
    shown_default="`0.1`",
)

ACTION_MODULES: Setting[tuple[str, ...]] = Setting(
    name="ECP_ACTION_MODULES",
    parse=_action_modules,
    default=(),
    description=(
        "comma-separated `module:function` action plug-ins, loaded after the installed `ecp.actions` "
        "entry points; a plug-in that fails to import or register refuses start-up with one line "
        "naming it (`docs/actions.md`, ADR 0027)"
    ),
)

HTTP_ACTION_MAX_BYTES: Setting[int] = Setting(
    name="ECP_HTTP_ACTION_MAX_BYTES",
    parse=whole(1),
    default=1024 * 1024,
    description=(
        "largest response body the `http_request` action accepts (1 MiB); a larger one fails the "
        "attempt with `response_too_large`, read no further than the cap (ADR 0028)"
    ),
    shown_default="`1048576`",
)

HTTP_ACTION_ALLOW_PRIVATE_TARGETS: Setting[bool] = Setting(
    name="ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS",
    parse=flag,
    default=False,
    description=(
        "let `http_request` reach loopback and private targets; every other non-public address stays "
        "refused, as for webhooks (ADR 0016, 0028)"
    ),
    shown_default="`false`",
)

SECRET = SettingFamily(
    prefix="ECP_SECRET_",
    description=(
        "every setting starting with `ECP_SECRET_` is the secret `<NAME>` that an `http_request` node "
        "names in `secret_headers`; never written to run state, audit records or logs (ADR 0028)"
    ),
)

SECRETS_DIR: Setting[pathlib.Path | None] = Setting(
    name="ECP_SECRETS_DIR",
    parse=path,
    default=None,
    description=(
        "a directory of secret files, one per name (`$ECP_SECRETS_DIR/<NAME>`, read at each use, "
        "trailing line break dropped); an `ECP_SECRET_<NAME>` setting wins"
    ),
)

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
    parse=_digest_key,
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
    parse=_retired_keys,
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

SCHEDULER_ENABLED: Setting[bool] = Setting(
    name="ECP_CLOUD_SCHEDULER_ENABLED",
    parse=flag,
    default=True,
    description=(
        "run decision schedules in this process (`/health/ready` answers 503 while the enabled "
        "scheduler task is not alive)"
    ),
    shown_default="`true`",
)

SCHEDULER_INTERVAL_SECONDS: Setting[float] = Setting(
    name="ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS",
    parse=number(0.05),
    default=60.0,
    description="how often the scheduler looks for due schedule occurrences",
    shown_default="`60`",
)

ARTIFACTS_DIR: Setting[pathlib.Path | None] = Setting(
    name="ECP_ARTIFACTS_DIR",
    parse=path,
    default=None,
    description="where run artifacts live (erasure cleans them)",
    shown_default="`$ECP_DATA_DIR/artifacts`",
)

LOG_FORMAT: Setting[str | None] = Setting(
    name="ECP_LOG_FORMAT",
    parse=choice(FORMATS),
    default=None,
    description="`json`: one JSON object per line on stderr; `console`: one readable line",
    shown_default="`console` on a terminal, else `json`",
)

LOG_LEVEL: Setting[str] = Setting(
    name="ECP_LOG_LEVEL",
    parse=choice(LEVELS),
    default="INFO",
    description="`DEBUG`, `INFO`, `WARNING`, `ERROR` or `CRITICAL`; lines below it are never formatted",
    shown_default="`INFO`",
)

METRICS_ENABLED: Setting[bool] = Setting(
    name="ECP_METRICS_ENABLED",
    parse=flag,
    default=True,
    description="serve `GET /metrics` and keep the figures; `false` removes the route",
    shown_default="`true`",
)

METRICS_TOKEN: Setting[str | None] = Setting(
    name="ECP_METRICS_TOKEN",
    parse=text,
    default=None,
    description=(
        "when set, `GET /metrics` needs `Authorization: Bearer <token>` (401 otherwise); public when "
        "unset"
    ),
)

OTEL_ENDPOINT: Setting[str | None] = Setting(
    name="OTEL_EXPORTER_OTLP_ENDPOINT",
    parse=_otlp_url,
    default=None,
    description=(
        "with `ecp-http[otel]` installed, export traces over OTLP/HTTP to `<url>/v1/traces` "
        '(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` wins, used as is); see "Tracing"'
    ),
)

OTEL_TRACES_ENDPOINT: Setting[str | None] = Setting(
    name="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    parse=_otlp_url,
    default=None,
    description="the traces URL itself, used as is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`",
)

OTEL_SDK_DISABLED: Setting[bool] = Setting(
    name="OTEL_SDK_DISABLED",
    parse=_otel_disabled,
    default=False,
    description="`true` exports no traces, whatever the endpoints say",
    shown_default="`false`",
)

RETENTION_ENABLED: Setting[bool] = Setting(
    name="SERVICE_RETENTION__ENABLED",
    parse=flag,
    default=False,
    description="run the TTL purge",
    shown_default="`false`",
)

RETENTION_POLL_SECONDS: Setting[float] = Setting(
    name="SERVICE_RETENTION__WORKER_POLL_INTERVAL",
    parse=number(1),
    default=300.0,
    description="seconds between purge sweeps",
    shown_default="`300`",
)

RETENTION_DEFAULT_AUDIT_TTL_SECONDS: Setting[int | None] = Setting(
    name="SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS",
    parse=_ttl,
    default=None,
    description="configured default audit TTL (see ADR 0011 for the resolution order)",
)

RETENTION_DEFAULT_RUN_TTL_SECONDS: Setting[int | None] = Setting(
    name="SERVICE_RETENTION__DEFAULT_RUN_TTL_SECONDS",
    parse=_ttl,
    default=None,
    description="configured default run TTL",
)

RETENTION_ECON_ERASE_ENABLED: Setting[bool] = Setting(
    name="SERVICE_RETENTION__ECON_ERASE_ENABLED",
    parse=flag,
    default=False,
    description="erase economic events by join key during erasure",
    shown_default="`false`",
)

IDP_AUTHKIT_ENABLED: Setting[bool] = Setting(
    name="ECP_IDP_AUTHKIT_ENABLED",
    parse=flag,
    default=False,
    description="`true` turns on login at the identity provider",
    document="hosted",
)

IDP_CLIENT_ID: Setting[str] = Setting(
    name="ECP_IDP_CLIENT_ID",
    parse=stripped,
    default="",
    description="the provider's client id",
    document="hosted",
    needed_by="identity",
)

IDP_API_KEY: Setting[str] = Setting(
    name="ECP_IDP_API_KEY",
    parse=stripped,
    default="",
    description="the provider's API key (client secret)",
    document="hosted",
    needed_by="identity",
)

IDP_REDIRECT_URI: Setting[str] = Setting(
    name="ECP_IDP_REDIRECT_URI",
    parse=url,
    default="",
    description="`https://<your host>/v1/cloud/auth/callback`, registered at the provider",
    document="hosted",
    needed_by="identity",
)

IDP_COOKIE_PASSWORD: Setting[str] = Setting(
    name="ECP_IDP_COOKIE_PASSWORD",
    parse=_cookie_password,
    default="",
    description=(
        "at least 32 random characters; the session and login cookies are sealed under keys derived "
        "from it"
    ),
    document="hosted",
    needed_by="identity",
)

CLOUD_BROWSER_ORIGIN: Setting[str] = Setting(
    name="ECP_CLOUD_BROWSER_ORIGIN",
    parse=url,
    default="",
    description="`https://<your host>`, where the pages are served",
    document="hosted",
    needed_by="identity",
)

IDP_BASE_URL: Setting[str] = Setting(
    name="ECP_IDP_BASE_URL",
    parse=url,
    default=WORKOS_API,
    description="the provider's API (default `https://api.workos.com`)",
    document="hosted",
)

BILLING_ENABLED: Setting[bool] = Setting(
    name="ECP_BILLING_ENABLED",
    parse=flag,
    default=False,
    description="`true` turns on checkout and the merchant webhook",
    document="hosted",
)

BILLING_API_KEY: Setting[str] = Setting(
    name="ECP_BILLING_API_KEY",
    parse=stripped,
    default="",
    description="the merchant's API key",
    document="hosted",
    needed_by="billing",
)

BILLING_WEBHOOK_SECRET: Setting[str] = Setting(
    name="ECP_BILLING_WEBHOOK_SECRET",
    parse=stripped,
    default="",
    description="the secret of the webhook destination",
    document="hosted",
    needed_by="billing",
)

BILLING_SOLO_PRICE_ID: Setting[str] = Setting(
    name="ECP_BILLING_SOLO_PRICE_ID",
    parse=stripped,
    default="",
    description="the Solo price",
    document="hosted",
    needed_by="billing",
)

BILLING_SANDBOX: Setting[bool] = Setting(
    name="ECP_BILLING_SANDBOX",
    parse=flag,
    default=False,
    description="`true` uses the merchant's sandbox API",
    document="hosted",
)

BILLING_BASE_URL: Setting[str | None] = Setting(
    name="ECP_BILLING_BASE_URL",
    parse=url,
    default=None,
    description="the merchant's API (default by sandbox or live)",
    document="hosted",
)

CLOUD_ENTITLEMENTS_ENABLED: Setting[bool] = Setting(
    name="ECP_CLOUD_ENTITLEMENTS_ENABLED",
    parse=flag,
    default=False,
    description="`true` enforces the plans' quotas",
    document="hosted",
)

CLOUD_ALLOW_INSECURE_COOKIES: Setting[bool] = Setting(
    name="ECP_CLOUD_ALLOW_INSECURE_COOKIES",
    parse=flag,
    default=False,
    description="`true` drops `Secure` from the cookies and allows `http` URLs: loopback tests only",
    document="hosted",
)

URL: Setting[str] = Setting(
    name="ECP_URL",
    parse=text,
    default=DEFAULT_URL,
    description=(
        "the service's base URL the client commands (`ecp runs`, `ecp approvals`, `ecp bills`, `ecp "
        "worker`) talk to; `--url` overrides"
    ),
    shown_default="`http://127.0.0.1:8000`",
    document="client",
)

API_KEY: Setting[str | None] = Setting(
    name="ECP_API_KEY",
    parse=stripped,
    default=None,
    description="a project API key the client commands send as `X-API-Key`; wins over `ECP_TOKEN`",
    document="client",
)

TOKEN: Setting[str | None] = Setting(
    name="ECP_TOKEN",
    parse=stripped,
    default=None,
    description="a bearer token the client commands send when no `ECP_API_KEY` is set",
    document="client",
)

SETTINGS: tuple[Setting[Any] | SettingFamily, ...] = (
    DATABASE_URL,
    DATABASE_POOL_TIMEOUT_SECONDS,
    DATA_DIR,
    HOST,
    PORT,
    JWT_SECRET,
    AUDIT_SIGNING_KEY,
    AUDIT_SIGNING_KEY_ID,
    AUDIT_VERIFICATION_KEYS,
    AUDIT_SIGNING_REQUIRED,
    HOSTED,
    WORKERS,
    DISPATCH_WORKERS,
    AUDIT_VERIFY_CONNECTIONS,
    DISPATCH_POLL_SECONDS,
    DISPATCH_NOTIFY,
    DISPATCH_MAX_ATTEMPTS,
    DISPATCH_BACKOFF_SECONDS,
    MAX_WAIT_SECONDS,
    MAX_BODY_BYTES,
    MAX_EVIDENCE_BODY_BYTES,
    ESCALATION_INTERVAL_SECONDS,
    WEBHOOK_MAX_ATTEMPTS,
    WEBHOOK_BACKOFF_BASE_SECONDS,
    WEBHOOK_BACKOFF_MAX_SECONDS,
    WEBHOOK_TIMEOUT_SECONDS,
    WEBHOOK_ALLOW_PRIVATE_TARGETS,
    WEBHOOK_POLL_SECONDS,
    ACTION_MODULES,
    HTTP_ACTION_MAX_BYTES,
    HTTP_ACTION_ALLOW_PRIVATE_TARGETS,
    SECRET,
    SECRETS_DIR,
    MODEL_CATALOG,
    MODEL_CALL_TIMEOUT_SECONDS,
    BACKTEST_DIGEST_KEY,
    BACKTEST_DIGEST_KEY_ID,
    BACKTEST_DIGEST_KEYS_RETIRED,
    BACKTEST_DEADLINE_SECONDS,
    BACKTEST_MAX_CALLS,
    BACKTEST_MAX_CALLS_PER_DAY,
    CONNECTORS_FILE,
    CONNECTOR_ALLOW_PRIVATE_TARGETS,
    CONNECTOR_TEST_TIMEOUT_SECONDS,
    SCHEDULER_ENABLED,
    SCHEDULER_INTERVAL_SECONDS,
    ARTIFACTS_DIR,
    LOG_FORMAT,
    LOG_LEVEL,
    METRICS_ENABLED,
    METRICS_TOKEN,
    OTEL_ENDPOINT,
    OTEL_TRACES_ENDPOINT,
    OTEL_SDK_DISABLED,
    RETENTION_ENABLED,
    RETENTION_POLL_SECONDS,
    RETENTION_DEFAULT_AUDIT_TTL_SECONDS,
    RETENTION_DEFAULT_RUN_TTL_SECONDS,
    RETENTION_ECON_ERASE_ENABLED,
    IDP_AUTHKIT_ENABLED,
    IDP_CLIENT_ID,
    IDP_API_KEY,
    IDP_REDIRECT_URI,
    IDP_COOKIE_PASSWORD,
    CLOUD_BROWSER_ORIGIN,
    IDP_BASE_URL,
    BILLING_ENABLED,
    BILLING_API_KEY,
    BILLING_WEBHOOK_SECRET,
    BILLING_SOLO_PRICE_ID,
    BILLING_SANDBOX,
    BILLING_BASE_URL,
    CLOUD_ENTITLEMENTS_ENABLED,
    CLOUD_ALLOW_INSECURE_COOKIES,
    URL,
    API_KEY,
    TOKEN,
)
"""Every setting, in the order the documents list them."""
