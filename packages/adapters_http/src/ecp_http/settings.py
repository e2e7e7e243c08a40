"""Settings read from an injected mapping (the root passes the environment) into a frozen object."""

import pathlib
import re
from collections.abc import Mapping

import attrs

from ecp_core.connectors.model import Connector
from ecp_core.models.model import CatalogEntry
from ecp_core.retention.model import MAX_TTL_SECONDS
from ecp_http.action_secrets import ActionSecrets
from ecp_http.backtest_settings import backtest_fields
from ecp_http.connector_settings import connector_fields
from ecp_http.hosted_settings import HostedSettings, hosted_settings
from ecp_http.logs import FORMATS, LEVELS
from ecp_http.model_calls.catalog_file import check_secrets, read_catalog
from ecp_http.settings_values import SettingsError, choice, flag, number


def _ttl(env: Mapping[str, str], name: str) -> int | None:
    raw = env.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_TTL_SECONDS:
        raise SettingsError(
            f"{name} must be whole seconds from 1 to {MAX_TTL_SECONDS}, not {raw!r}"
        )
    return int(raw)


def _otlp_traces_endpoint(env: Mapping[str, str]) -> str | None:
    """The OpenTelemetry variables' traces URL: the traces one as is, else the base + v1/traces."""
    if (env.get("OTEL_SDK_DISABLED") or "").strip().lower() == "true":
        return None
    for name, path in (
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", ""),
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "/v1/traces"),
    ):
        url = (env.get(name) or "").strip()
        if url:
            if not url.startswith(("http://", "https://")):
                raise SettingsError(f"{name} must be an http:// or https:// URL, not {url!r}")
            return url.rstrip("/") + path if path else url
    return None


_SECRET_PREFIX = "ECP_SECRET_"  # noqa: S105 - a variable name prefix, not a secret


def _secrets(env: Mapping[str, str]) -> dict[str, str]:
    """The ``ECP_SECRET_<NAME>`` settings by name; empty ones count as unset."""
    return {
        key.removeprefix(_SECRET_PREFIX): value
        for key, value in env.items()
        if key.startswith(_SECRET_PREFIX) and len(key) > len(_SECRET_PREFIX) and value
    }


_ACTION_MODULE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def _action_modules(env: Mapping[str, str]) -> tuple[str, ...]:
    """``ECP_ACTION_MODULES``: comma-separated ``module:function`` plug-ins, in order."""
    named = tuple(part.strip() for part in (env.get("ECP_ACTION_MODULES") or "").split(","))
    for part in named:
        if part and not _ACTION_MODULE.fullmatch(part):
            raise SettingsError(f"ECP_ACTION_MODULES: {part!r} is not module:function")
    return tuple(part for part in named if part)


def _model_catalog(env: Mapping[str, str]) -> dict[str, CatalogEntry]:
    """``ECP_MODEL_CATALOG``'s models (none when unset); their secrets must be set (ADR 0037)."""
    path = env.get("ECP_MODEL_CATALOG") or None
    if path is None:
        return {}
    catalog = read_catalog(pathlib.Path(path))
    directory = pathlib.Path(env["ECP_SECRETS_DIR"]) if env.get("ECP_SECRETS_DIR") else None
    check_secrets(catalog, ActionSecrets(_secrets(env), directory))
    return catalog


@attrs.frozen(kw_only=True)
class Settings:
    """Everything the server is configured with."""

    database_url: str | None = None
    database_pool_timeout_seconds: float = 5.0
    """How long a request or worker waits for a database connection before a 503 (ADR 0021)."""
    data_dir: pathlib.Path = pathlib.Path(".ecp")
    host: str = "127.0.0.1"
    port: int = 8000
    jwt_secret: str | None = None
    audit_signing_key: str | None = None
    audit_signing_key_id: str | None = None
    audit_verification_keys: str | None = None
    """Retired audit keys that still verify (``ECP_AUDIT_VERIFICATION_KEYS``, read by ``core_setup``)."""
    audit_signing_required: bool = True
    """Whether audit readiness requires signed records (``ECP_AUDIT_SIGNING_REQUIRED``, ADR 0042)."""
    hosted: bool = False
    """The service is a hosted offer (``ECP_HOSTED``, or any hosted feature on): no development
    tokens are minted or printed."""
    workers: int = 1
    """Server processes ``ecp serve`` runs on one socket and one database (``ECP_WORKERS``;
    ADR 0062)."""
    dispatch_workers: int = 2
    audit_verify_connections: int = 4
    """Pooled connections audit verifications hold at once, all requests together
    (``ECP_AUDIT_VERIFY_CONNECTIONS``; ADR 0061)."""
    dispatch_poll_seconds: float = 0.2
    dispatch_notify: bool = True
    """Whether PostgreSQL notifications wake the workers and ``Prefer: wait`` (``ECP_DISPATCH_NOTIFY``,
    ADR 0063); off, they poll only."""
    dispatch_max_attempts: int = 3
    dispatch_backoff_seconds: float = 1.0
    max_wait_seconds: float = 60.0
    max_body_bytes: int = 1024 * 1024
    max_evidence_body_bytes: int = 16 * 1024 * 1024
    escalation_interval_seconds: float = 30.0
    artifacts_dir: pathlib.Path | None = None
    retention_enabled: bool = False
    retention_poll_seconds: float = 300.0
    retention_default_audit_ttl_seconds: int | None = None
    retention_default_run_ttl_seconds: int | None = None
    retention_econ_erase_enabled: bool = False
    webhook_max_attempts: int = 5
    webhook_backoff_base_seconds: float = 2.0
    webhook_backoff_max_seconds: float = 3600.0
    webhook_timeout_seconds: float = 10.0
    webhook_allow_private_targets: bool = False
    webhook_poll_seconds: float = 0.1
    scheduler_enabled: bool = True
    scheduler_interval_seconds: float = 60.0
    log_format: str | None = None
    """``json`` or ``console``; None: console on a terminal, JSON otherwise."""
    log_level: str = "INFO"
    metrics_enabled: bool = True
    metrics_token: str | None = None
    """When set, ``GET /metrics`` needs ``Authorization: Bearer <token>``."""
    action_modules: tuple[str, ...] = ()
    """``module:function`` action plug-ins loaded besides the ``ecp.actions`` entry points."""
    otel_traces_endpoint: str | None = None
    """The OTLP/HTTP traces URL; set, traces are exported (the ``otel`` extra, ADR 0018)."""
    http_action_max_bytes: int = 1024 * 1024
    """The largest response body the ``http_request`` action accepts (ADR 0028)."""
    http_action_allow_private_targets: bool = False
    """Whether ``http_request`` may reach loopback and private addresses (ADR 0016, 0028)."""
    secrets: Mapping[str, str] = attrs.field(factory=dict, repr=False, eq=False, hash=False)
    """Action secrets by name, from the ``ECP_SECRET_<NAME>`` settings; never shown."""
    secrets_dir: pathlib.Path | None = None
    """A directory with one file per action secret (``ECP_SECRETS_DIR``)."""
    cloud: HostedSettings = attrs.field(factory=HostedSettings)
    """The hosted offer's identity, billing and entitlement settings (all off by default)."""
    model_catalog_path: pathlib.Path | None = None
    """The model catalog file (``ECP_MODEL_CATALOG``); None: no models, no ``model_call``."""
    model_catalog: Mapping[str, CatalogEntry] = attrs.field(factory=dict)
    """The catalog's models by ref, read and checked with the settings (ADR 0037)."""
    model_call_timeout_seconds: float = 60.0
    """Each try of a provider call is bounded by this (``ECP_MODEL_CALL_TIMEOUT_SECONDS``)."""
    backtest_digest_key: str | None = attrs.field(default=None, repr=False)
    """Keys backtest request digests (``ECP_BACKTEST_DIGEST_KEY``); None: backtests are off."""
    backtest_digest_key_id: str | None = None
    backtest_digest_keys_retired: Mapping[str, str] = attrs.field(
        factory=dict, repr=False, eq=False, hash=False
    )
    """Earlier digest keys by id, still recognised for exact retries (ADR 0038)."""
    backtest_deadline_seconds: float = 600.0
    backtest_max_calls: int | None = None
    """Self-hosting cap on one backtest's provider calls (None: 4 per case, at most 100)."""
    backtest_max_calls_per_day: int | None = None
    """Self-hosting cap on a tenant's backtest provider calls per UTC day (None: none)."""
    connectors: Mapping[str, Connector] = attrs.field(factory=dict)
    """Settings-defined connectors by ref (``ECP_CONNECTORS_FILE``, ADR 0044)."""
    connector_allow_private_targets: bool = False
    """Whether HTTP connector tests may reach loopback and private addresses (ADR 0016, 0044)."""
    connector_test_timeout_seconds: float = 10.0
    """Each connector test call is bounded by this (``ECP_CONNECTOR_TEST_TIMEOUT_SECONDS``)."""

    @classmethod
    def from_mapping(cls, env: Mapping[str, str]) -> "Settings":
        """Read ``ECP_*`` settings from ``env``; raise SettingsError naming the first invalid one.

        The composition root passes the environment (``ecp_http.bootstrap.load_settings``).
        """
        jwt_secret = env.get("ECP_JWT_SECRET") or None
        if jwt_secret is not None and len(jwt_secret) < 32:  # noqa: PLR2004 - HS256 wants 256 bits
            raise SettingsError("ECP_JWT_SECRET must be at least 32 characters")
        cloud = hosted_settings(env)
        if cloud.any_enabled and jwt_secret is None:
            raise SettingsError(
                "ECP_JWT_SECRET must be set to a secret of your own when a hosted feature is on"
            )
        port = int(number(env, "ECP_PORT", 8000, minimum=1, integer=True))
        catalog = _model_catalog(env)
        if port > 65535:  # noqa: PLR2004
            raise SettingsError(f"ECP_PORT must be at most 65535, not {port}")
        return cls(
            database_url=env.get("ECP_DATABASE_URL") or None,
            database_pool_timeout_seconds=number(
                env, "ECP_DATABASE_POOL_TIMEOUT_SECONDS", 5.0, minimum=0.1
            ),
            data_dir=pathlib.Path(env.get("ECP_DATA_DIR") or ".ecp"),
            host=env.get("ECP_HOST") or "127.0.0.1",
            port=port,
            jwt_secret=jwt_secret,
            audit_signing_key=env.get("ECP_AUDIT_SIGNING_KEY") or None,
            audit_signing_key_id=env.get("ECP_AUDIT_SIGNING_KEY_ID") or None,
            audit_verification_keys=env.get("ECP_AUDIT_VERIFICATION_KEYS") or None,
            audit_signing_required=flag(env, "ECP_AUDIT_SIGNING_REQUIRED", default=True),
            hosted=flag(env, "ECP_HOSTED", default=False) or cloud.any_enabled,
            workers=int(number(env, "ECP_WORKERS", 1, minimum=1, integer=True)),
            dispatch_workers=int(number(env, "ECP_DISPATCH_WORKERS", 2, minimum=1, integer=True)),
            audit_verify_connections=int(
                number(env, "ECP_AUDIT_VERIFY_CONNECTIONS", 4, minimum=1, integer=True)
            ),
            dispatch_poll_seconds=number(env, "ECP_DISPATCH_POLL_SECONDS", 0.2, minimum=0.01),
            dispatch_notify=flag(env, "ECP_DISPATCH_NOTIFY", default=True),
            dispatch_max_attempts=int(
                number(env, "ECP_DISPATCH_MAX_ATTEMPTS", 3, minimum=1, integer=True)
            ),
            dispatch_backoff_seconds=number(env, "ECP_DISPATCH_BACKOFF_SECONDS", 1.0, minimum=0),
            max_wait_seconds=number(env, "ECP_MAX_WAIT_SECONDS", 60.0, minimum=0),
            max_body_bytes=int(
                number(env, "ECP_MAX_BODY_BYTES", 1024 * 1024, minimum=1024, integer=True)
            ),
            max_evidence_body_bytes=int(
                number(
                    env, "ECP_MAX_EVIDENCE_BODY_BYTES", 16 * 1024 * 1024, minimum=1024, integer=True
                )
            ),
            artifacts_dir=pathlib.Path(env["ECP_ARTIFACTS_DIR"])
            if env.get("ECP_ARTIFACTS_DIR")
            else None,
            retention_enabled=flag(env, "SERVICE_RETENTION__ENABLED", default=False),
            retention_poll_seconds=number(
                env, "SERVICE_RETENTION__WORKER_POLL_INTERVAL", 300.0, minimum=1
            ),
            retention_default_audit_ttl_seconds=_ttl(
                env, "SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS"
            ),
            retention_default_run_ttl_seconds=_ttl(
                env, "SERVICE_RETENTION__DEFAULT_RUN_TTL_SECONDS"
            ),
            retention_econ_erase_enabled=flag(
                env, "SERVICE_RETENTION__ECON_ERASE_ENABLED", default=False
            ),
            scheduler_enabled=flag(env, "ECP_CLOUD_SCHEDULER_ENABLED", default=True),
            scheduler_interval_seconds=number(
                env, "ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS", 60.0, minimum=0.05
            ),
            webhook_max_attempts=int(
                number(env, "ECP_WEBHOOK_MAX_ATTEMPTS", 5, minimum=1, integer=True)
            ),
            webhook_backoff_base_seconds=number(
                env, "ECP_WEBHOOK_BACKOFF_BASE_SECONDS", 2.0, minimum=0.01
            ),
            webhook_backoff_max_seconds=number(
                env, "ECP_WEBHOOK_BACKOFF_MAX_SECONDS", 3600.0, minimum=0.01
            ),
            webhook_timeout_seconds=number(env, "ECP_WEBHOOK_TIMEOUT_SECONDS", 10.0, minimum=0.1),
            webhook_allow_private_targets=flag(
                env, "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS", default=False
            ),
            webhook_poll_seconds=number(env, "ECP_WEBHOOK_POLL_SECONDS", 0.1, minimum=0.01),
            escalation_interval_seconds=number(
                env, "ECP_ESCALATION_INTERVAL_SECONDS", 30.0, minimum=0.1
            ),
            log_format=choice(env, "ECP_LOG_FORMAT", FORMATS),
            log_level=choice(env, "ECP_LOG_LEVEL", LEVELS) or "INFO",
            metrics_enabled=flag(env, "ECP_METRICS_ENABLED", default=True),
            metrics_token=env.get("ECP_METRICS_TOKEN") or None,
            action_modules=_action_modules(env),
            otel_traces_endpoint=_otlp_traces_endpoint(env),
            http_action_max_bytes=int(
                number(env, "ECP_HTTP_ACTION_MAX_BYTES", 1024 * 1024, minimum=1, integer=True)
            ),
            http_action_allow_private_targets=flag(
                env, "ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS", default=False
            ),
            secrets=_secrets(env),
            secrets_dir=pathlib.Path(env["ECP_SECRETS_DIR"])
            if env.get("ECP_SECRETS_DIR")
            else None,
            cloud=cloud,
            model_catalog_path=pathlib.Path(env["ECP_MODEL_CATALOG"])
            if env.get("ECP_MODEL_CATALOG")
            else None,
            model_catalog=catalog,
            model_call_timeout_seconds=number(
                env, "ECP_MODEL_CALL_TIMEOUT_SECONDS", 60.0, minimum=0.1
            ),
            **backtest_fields(env),
            **connector_fields(env, catalog),
        )


__all__ = ["Settings", "SettingsError"]
