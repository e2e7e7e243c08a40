"""Settings read from an injected mapping (the root passes the environment) into a frozen object.

Each setting is declared once, in :mod:`ecp_http.config.table`: the fields' defaults are the
declarations' own, and :meth:`Settings.from_mapping` reads each setting through its declaration
once (ADR 0072).
"""

import pathlib
from collections.abc import Mapping

import attrs

from ecp_core.connectors.model import Connector
from ecp_core.models.model import CatalogEntry
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.config.backtests import backtest_fields
from ecp_http.config.connectors import connector_fields
from ecp_http.config.hosted import HostedSettings, hosted_settings, insecure_cookies
from ecp_http.config.model_catalog import check_secrets, read_catalog
from ecp_http.config.table import actions, models, observability, runs, serving
from ecp_http.config.values import SettingsError


def _otlp_traces_endpoint(env: Mapping[str, str]) -> str | None:
    """The OpenTelemetry variables' traces URL: the traces one as is, else the base + v1/traces."""
    if observability.OTEL_SDK_DISABLED.read(env):
        return None
    traces = observability.OTEL_TRACES_ENDPOINT.read(env)
    if traces is not None:
        return traces
    base = observability.OTEL_ENDPOINT.read(env)
    return None if base is None else base.rstrip("/") + "/v1/traces"


def _model_catalog(path: pathlib.Path | None, secrets: ActionSecrets) -> dict[str, CatalogEntry]:
    """The catalog's models (none without a file); their secrets must be set (ADR 0037)."""
    if path is None:
        return {}
    catalog = read_catalog(path)
    check_secrets(catalog, secrets)
    return catalog


@attrs.frozen(kw_only=True)
class Settings:
    """Everything the server is configured with."""

    database_url: str | None = serving.DATABASE_URL.default
    database_pool_timeout_seconds: float = serving.DATABASE_POOL_TIMEOUT_SECONDS.default
    """How long a request or worker waits for a database connection before a 503 (ADR 0021)."""
    data_dir: pathlib.Path = serving.DATA_DIR.default
    host: str = serving.HOST.default
    port: int = serving.PORT.default
    jwt_secret: str | None = serving.JWT_SECRET.default
    audit_signing_key: str | None = serving.AUDIT_SIGNING_KEY.default
    audit_signing_key_id: str | None = serving.AUDIT_SIGNING_KEY_ID.default
    audit_verification_keys: str | None = serving.AUDIT_VERIFICATION_KEYS.default
    """Retired audit keys that still verify (read by ``core_setup``)."""
    audit_signing_required: bool = serving.AUDIT_SIGNING_REQUIRED.default
    """Whether audit readiness requires signed records (ADR 0042)."""
    workers: int = serving.WORKERS.default
    console_session_hours: float = serving.CONSOLE_SESSION_HOURS.default
    """How long a console session lasts (ADR 0080)."""
    insecure_cookies: bool = False
    """``ECP_CLOUD_ALLOW_INSECURE_COOKIES``: the console's cookie (and the hosted ones) without
    ``Secure``, for loopback tests over plain HTTP only."""
    """Server processes ``ecp serve`` runs on one socket and one database (ADR 0062)."""
    dispatch_workers: int = runs.DISPATCH_WORKERS.default
    audit_verify_connections: int = runs.AUDIT_VERIFY_CONNECTIONS.default
    """Pooled connections audit verifications hold at once, all requests together (ADR 0061)."""
    dispatch_poll_seconds: float = runs.DISPATCH_POLL_SECONDS.default
    timer_poll_seconds: float = runs.TIMER_POLL_SECONDS.default
    log_checkpoint_seconds: float = runs.LOG_CHECKPOINT_SECONDS.default
    log_origin: str = runs.LOG_ORIGIN.default
    log_witnesses: tuple[tuple[str, str], ...] = runs.LOG_WITNESSES.default
    dispatch_notify: bool = runs.DISPATCH_NOTIFY.default
    """Whether PostgreSQL notifications wake the workers and ``Prefer: wait`` (ADR 0063); off,
    they poll only."""
    start_batching: bool = runs.START_BATCHING.default
    """Whether run starts that arrive together share a transaction (ADRs 0102, 0106)."""
    resolution_batching: bool = runs.RESOLUTION_BATCHING.default
    """Whether approval resolutions that arrive together share a transaction (ADR 0107)."""
    dispatch_max_attempts: int = runs.DISPATCH_MAX_ATTEMPTS.default
    dispatch_backoff_seconds: float = runs.DISPATCH_BACKOFF_SECONDS.default
    max_wait_seconds: float = runs.MAX_WAIT_SECONDS.default
    max_body_bytes: int = runs.MAX_BODY_BYTES.default
    max_evidence_body_bytes: int = runs.MAX_EVIDENCE_BODY_BYTES.default
    escalation_interval_seconds: float = runs.ESCALATION_INTERVAL_SECONDS.default
    artifacts_dir: pathlib.Path | None = runs.ARTIFACTS_DIR.default
    retention_enabled: bool = runs.RETENTION_ENABLED.default
    retention_poll_seconds: float = runs.RETENTION_POLL_SECONDS.default
    retention_default_audit_ttl_seconds: int | None = (
        runs.RETENTION_DEFAULT_AUDIT_TTL_SECONDS.default
    )
    retention_default_run_ttl_seconds: int | None = runs.RETENTION_DEFAULT_RUN_TTL_SECONDS.default
    retention_econ_erase_enabled: bool = runs.RETENTION_ECON_ERASE_ENABLED.default
    webhook_max_attempts: int = runs.WEBHOOK_MAX_ATTEMPTS.default
    webhook_backoff_base_seconds: float = runs.WEBHOOK_BACKOFF_BASE_SECONDS.default
    webhook_backoff_max_seconds: float = runs.WEBHOOK_BACKOFF_MAX_SECONDS.default
    webhook_timeout_seconds: float = runs.WEBHOOK_TIMEOUT_SECONDS.default
    webhook_allow_private_targets: bool = runs.WEBHOOK_ALLOW_PRIVATE_TARGETS.default
    webhook_poll_seconds: float = runs.WEBHOOK_POLL_SECONDS.default
    scheduler_enabled: bool = runs.SCHEDULER_ENABLED.default
    scheduler_interval_seconds: float = runs.SCHEDULER_INTERVAL_SECONDS.default
    log_format: str | None = observability.LOG_FORMAT.default
    """``json`` or ``console``; None: console on a terminal, JSON otherwise."""
    log_level: str = observability.LOG_LEVEL.default
    metrics_enabled: bool = observability.METRICS_ENABLED.default
    metrics_token: str | None = observability.METRICS_TOKEN.default
    """When set, ``GET /metrics`` needs ``Authorization: Bearer <token>``."""
    action_modules: tuple[str, ...] = actions.ACTION_MODULES.default
    """``module:function`` action plug-ins loaded besides the ``ecp.actions`` entry points."""
    otel_traces_endpoint: str | None = None
    """The OTLP/HTTP traces URL; set, traces are exported (the ``otel`` extra, ADR 0018)."""
    http_action_max_bytes: int = actions.HTTP_ACTION_MAX_BYTES.default
    """The largest response body the ``http_request`` action accepts (ADR 0028)."""
    http_action_allow_private_targets: bool = actions.HTTP_ACTION_ALLOW_PRIVATE_TARGETS.default
    """Whether ``http_request`` may reach loopback and private addresses (ADR 0016, 0028)."""
    secrets: Mapping[str, str] = attrs.field(factory=dict, repr=False, eq=False, hash=False)
    """Action secrets by name (the ``ECP_SECRET_<NAME>`` family); never shown."""
    secrets_dir: pathlib.Path | None = actions.SECRETS_DIR.default
    """A directory with one file per action secret."""
    hosted: HostedSettings = attrs.field(factory=HostedSettings)
    """The hosted offer: whether the service is one, and its identity, billing and entitlement
    settings (all off by default)."""
    model_catalog_path: pathlib.Path | None = models.MODEL_CATALOG.default
    """The model catalog file; None: no models, no ``model_call``."""
    model_catalog: Mapping[str, CatalogEntry] = attrs.field(factory=dict)
    """The catalog's models by ref, read and checked with the settings (ADR 0037)."""
    model_call_timeout_seconds: float = models.MODEL_CALL_TIMEOUT_SECONDS.default
    """Each try of a provider call is bounded by this."""
    backtest_digest_key: str | None = attrs.field(
        default=models.BACKTEST_DIGEST_KEY.default, repr=False
    )
    """Keys backtest request digests; None: backtests are off."""
    backtest_digest_key_id: str | None = models.BACKTEST_DIGEST_KEY_ID.default
    backtest_digest_keys_retired: Mapping[str, str] = attrs.field(
        factory=dict, repr=False, eq=False, hash=False
    )
    """Earlier digest keys by id, still recognised for exact retries (ADR 0038)."""
    backtest_deadline_seconds: float = models.BACKTEST_DEADLINE_SECONDS.default
    backtest_max_calls: int | None = models.BACKTEST_MAX_CALLS.default
    """Self-hosting cap on one backtest's provider calls (None: 4 per case, at most 100)."""
    backtest_max_calls_per_day: int | None = models.BACKTEST_MAX_CALLS_PER_DAY.default
    """Self-hosting cap on a tenant's backtest provider calls per UTC day (None: none)."""
    connectors: Mapping[str, Connector] = attrs.field(factory=dict)
    """Settings-defined connectors by ref (ADR 0044)."""
    connector_allow_private_targets: bool = models.CONNECTOR_ALLOW_PRIVATE_TARGETS.default
    """Whether HTTP connector tests may reach loopback and private addresses (ADR 0016, 0044)."""
    connector_test_timeout_seconds: float = models.CONNECTOR_TEST_TIMEOUT_SECONDS.default
    """Each connector test call is bounded by this."""

    @classmethod
    def from_mapping(cls, env: Mapping[str, str]) -> "Settings":
        """Read every setting of :mod:`ecp_http.config.table` from ``env``, each once.

        Raises SettingsError naming the first invalid one. The composition root passes the
        environment (``ecp_http.startup.bootstrap.load_settings``).
        """
        jwt_secret = serving.JWT_SECRET.read(env)
        insecure = insecure_cookies(env)
        hosted = hosted_settings(env, insecure=insecure)
        if hosted.any_feature_enabled and jwt_secret is None:
            raise SettingsError(
                f"{serving.JWT_SECRET.name} must be set to a secret of your own when a hosted "
                "feature is on"
            )
        secrets, secrets_dir = actions.SECRET.read(env), actions.SECRETS_DIR.read(env)
        catalog_path = models.MODEL_CATALOG.read(env)
        catalog = _model_catalog(catalog_path, ActionSecrets(secrets, secrets_dir))
        return cls(
            database_url=serving.DATABASE_URL.read(env),
            database_pool_timeout_seconds=serving.DATABASE_POOL_TIMEOUT_SECONDS.read(env),
            data_dir=serving.DATA_DIR.read(env),
            host=serving.HOST.read(env),
            port=serving.PORT.read(env),
            jwt_secret=jwt_secret,
            audit_signing_key=serving.AUDIT_SIGNING_KEY.read(env),
            audit_signing_key_id=serving.AUDIT_SIGNING_KEY_ID.read(env),
            audit_verification_keys=serving.AUDIT_VERIFICATION_KEYS.read(env),
            audit_signing_required=serving.AUDIT_SIGNING_REQUIRED.read(env),
            workers=serving.WORKERS.read(env),
            console_session_hours=serving.CONSOLE_SESSION_HOURS.read(env),
            insecure_cookies=insecure,
            dispatch_workers=runs.DISPATCH_WORKERS.read(env),
            audit_verify_connections=runs.AUDIT_VERIFY_CONNECTIONS.read(env),
            dispatch_poll_seconds=runs.DISPATCH_POLL_SECONDS.read(env),
            timer_poll_seconds=runs.TIMER_POLL_SECONDS.read(env),
            log_checkpoint_seconds=runs.LOG_CHECKPOINT_SECONDS.read(env),
            log_origin=runs.LOG_ORIGIN.read(env),
            log_witnesses=runs.LOG_WITNESSES.read(env),
            dispatch_notify=runs.DISPATCH_NOTIFY.read(env),
            start_batching=runs.START_BATCHING.read(env),
            resolution_batching=runs.RESOLUTION_BATCHING.read(env),
            dispatch_max_attempts=runs.DISPATCH_MAX_ATTEMPTS.read(env),
            dispatch_backoff_seconds=runs.DISPATCH_BACKOFF_SECONDS.read(env),
            max_wait_seconds=runs.MAX_WAIT_SECONDS.read(env),
            max_body_bytes=runs.MAX_BODY_BYTES.read(env),
            max_evidence_body_bytes=runs.MAX_EVIDENCE_BODY_BYTES.read(env),
            artifacts_dir=runs.ARTIFACTS_DIR.read(env),
            retention_enabled=runs.RETENTION_ENABLED.read(env),
            retention_poll_seconds=runs.RETENTION_POLL_SECONDS.read(env),
            retention_default_audit_ttl_seconds=runs.RETENTION_DEFAULT_AUDIT_TTL_SECONDS.read(env),
            retention_default_run_ttl_seconds=runs.RETENTION_DEFAULT_RUN_TTL_SECONDS.read(env),
            retention_econ_erase_enabled=runs.RETENTION_ECON_ERASE_ENABLED.read(env),
            scheduler_enabled=runs.SCHEDULER_ENABLED.read(env),
            scheduler_interval_seconds=runs.SCHEDULER_INTERVAL_SECONDS.read(env),
            webhook_max_attempts=runs.WEBHOOK_MAX_ATTEMPTS.read(env),
            webhook_backoff_base_seconds=runs.WEBHOOK_BACKOFF_BASE_SECONDS.read(env),
            webhook_backoff_max_seconds=runs.WEBHOOK_BACKOFF_MAX_SECONDS.read(env),
            webhook_timeout_seconds=runs.WEBHOOK_TIMEOUT_SECONDS.read(env),
            webhook_allow_private_targets=runs.WEBHOOK_ALLOW_PRIVATE_TARGETS.read(env),
            webhook_poll_seconds=runs.WEBHOOK_POLL_SECONDS.read(env),
            escalation_interval_seconds=runs.ESCALATION_INTERVAL_SECONDS.read(env),
            log_format=observability.LOG_FORMAT.read(env),
            log_level=observability.LOG_LEVEL.read(env),
            metrics_enabled=observability.METRICS_ENABLED.read(env),
            metrics_token=observability.METRICS_TOKEN.read(env),
            action_modules=actions.ACTION_MODULES.read(env),
            otel_traces_endpoint=_otlp_traces_endpoint(env),
            http_action_max_bytes=actions.HTTP_ACTION_MAX_BYTES.read(env),
            http_action_allow_private_targets=actions.HTTP_ACTION_ALLOW_PRIVATE_TARGETS.read(env),
            secrets=secrets,
            secrets_dir=secrets_dir,
            hosted=hosted,
            model_catalog_path=catalog_path,
            model_catalog=catalog,
            model_call_timeout_seconds=models.MODEL_CALL_TIMEOUT_SECONDS.read(env),
            **backtest_fields(env),
            **connector_fields(env, catalog),
        )


__all__ = ["Settings", "SettingsError"]
