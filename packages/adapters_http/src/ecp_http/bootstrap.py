"""The one composition root: settings in, adapters and services wired, nothing at import time."""

import logging
import threading
from concurrent.futures import Future
from typing import TYPE_CHECKING

import attrs

from ecp_core.retention.model import ConfiguredDefaults
from ecp_core.runs.dispatch import DISPATCH_BACKOFF_CAP_SECONDS
from ecp_core.service import Ecp, RetentionSettings
from ecp_core.signing import Ed25519Signer
from ecp_core.webhooks.schedule import RetryPolicy
from ecp_http.artifacts import FilesystemArtifacts
from ecp_http.auth import Authenticator
from ecp_http.dispatch import Dispatcher, Outage
from ecp_http.metrics import Metrics
from ecp_http.observed import observed
from ecp_http.settings import Settings, SettingsError
from ecp_http.webhook_sender import HttpxSender
from ecp_postgres import PostgresStore, migration_status
from ecp_postgres.operations import queue_figures

if TYPE_CHECKING:
    from collections.abc import Callable

    from ecp_http.tracing import Tracing

log = logging.getLogger("ecp_http")


_DELIVERY_BATCHES = 20
"""At most this many batches of due deliveries per pass, so other sweeps get their turn."""

SCHEMA_CHECK_SECONDS = 5.0
"""Readiness waits at most this long for the schema state, whatever the database does (ADR 0022)."""


@attrs.define
class Runtime:
    """Everything a running server holds."""

    settings: Settings
    store: PostgresStore
    ecp: Ecp
    signer: Ed25519Signer
    authenticate: Authenticator
    dispatcher: Dispatcher
    scheduler: Dispatcher | None = None
    """The decision-schedule task (a sweep thread of its own), when enabled."""
    metrics: Metrics | None = None
    """The application's Prometheus registry, unless ``ECP_METRICS_ENABLED`` is false."""
    tracing: "Tracing | None" = None
    """OpenTelemetry traces, when an OTLP endpoint is set and the ``otel`` extra installed."""
    _schema_read: "Future[list[tuple[str, bool]]] | None" = attrs.field(
        init=False, default=None, repr=False
    )
    """The schema read in flight: checks arriving meanwhile wait for it instead of starting one."""
    _schema_guard: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def schema_current(self) -> bool:
        """Whether every migration is applied; takes no lock (ADR 0022).

        Raises TimeoutError after :data:`SCHEMA_CHECK_SECONDS`, or the driver's error. The read
        runs on a daemon thread, one at a time, so a read stuck on a frozen database holds one
        thread and never holds up the process's exit.
        """
        assert self.settings.database_url is not None  # noqa: S101 - checked in build()
        with self._schema_guard:
            read = self._schema_read
            if read is None or read.done():
                read = self._schema_read = Future()
                threading.Thread(
                    target=_read_schema,
                    args=(read, self.settings.database_url),
                    name="ecp-schema-check",
                    daemon=True,
                ).start()
        return all(applied for _, applied in read.result(timeout=SCHEMA_CHECK_SECONDS))

    def start(self) -> None:
        """Start the run workers and, when enabled, the scheduler."""
        self.dispatcher.start()
        if self.scheduler is not None:
            self.scheduler.start()

    def close(self) -> None:
        """Stop the workers and close the pool."""
        if self.scheduler is not None:
            self.scheduler.stop()
        self.dispatcher.stop()
        self.store.close()
        if self.tracing is not None:
            self.tracing.shutdown()  # after the workers: their last spans are exported too


def _read_schema(into: "Future[list[tuple[str, bool]]]", url: str) -> None:
    """Read the migration state into ``into``."""
    try:
        into.set_result(migration_status(url))
    except Exception as exc:  # noqa: BLE001 - handed to the checks waiting for it
        into.set_exception(exc)


def start_tracing(settings: Settings) -> "Tracing | None":
    """Traces when an OTLP endpoint is set; None (and nothing imported) otherwise.

    Without the ``otel`` extra installed, a warning says so and the server runs untraced.
    """
    if settings.otel_traces_endpoint is None:
        return None
    try:
        from ecp_http.tracing import Tracing  # noqa: PLC0415 - the optional extra, only when on
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        log.warning(
            "an OTLP endpoint is set but ecp-http[otel] is not installed: tracing is off",
            extra={"missing": exc.name},
        )
        return None
    return Tracing(settings.otel_traces_endpoint)


def build(settings: Settings) -> Runtime:
    """Wire a runtime; invalid settings raise SettingsError naming the setting."""
    if not settings.database_url:
        raise SettingsError("ECP_DATABASE_URL is not set (ecp serve starts an embedded server)")
    if not settings.jwt_secret:
        raise SettingsError("ECP_JWT_SECRET is not set")
    if not settings.audit_signing_key:
        raise SettingsError("ECP_AUDIT_SIGNING_KEY is not set")
    try:
        signer = Ed25519Signer.from_base64_seed(
            settings.audit_signing_key, settings.audit_signing_key_id
        )
    except ValueError as exc:
        raise SettingsError(f"ECP_AUDIT_SIGNING_KEY: {exc}") from exc
    store = PostgresStore(
        settings.database_url,
        max_size=max(4, settings.dispatch_workers + 8),
        timeout=settings.database_pool_timeout_seconds,
    )
    retention = RetentionSettings(
        artifacts=FilesystemArtifacts(settings.artifacts_dir or settings.data_dir / "artifacts"),
        econ_erase_enabled=settings.retention_econ_erase_enabled,
        defaults=ConfiguredDefaults(
            audit_ttl_seconds=settings.retention_default_audit_ttl_seconds,
            run_ttl_seconds=settings.retention_default_run_ttl_seconds,
        ),
    )
    policy = RetryPolicy(
        max_attempts=settings.webhook_max_attempts,
        base_seconds=settings.webhook_backoff_base_seconds,
        max_seconds=settings.webhook_backoff_max_seconds,
    )
    metrics = Metrics() if settings.metrics_enabled else None
    if metrics is not None:
        metrics.watch_queues(lambda: queue_figures(store))
    tracing = start_tracing(settings)
    ecp = Ecp.build(
        observed(store.unit_of_work, metrics, tracing),
        signer=signer,
        retention=retention,
        webhook_policy=policy,
        dispatch_policy=RetryPolicy(
            max_attempts=settings.dispatch_max_attempts,
            base_seconds=settings.dispatch_backoff_seconds,
            max_seconds=DISPATCH_BACKOFF_CAP_SECONDS,
        ),
    )
    sender = HttpxSender(
        timeout_seconds=settings.webhook_timeout_seconds,
        allow_private=settings.webhook_allow_private_targets,
    )

    def deliver_webhooks() -> None:
        for _ in range(_DELIVERY_BATCHES):
            if ecp.webhooks.deliver_due(sender) == 0:
                return

    sweeps: list[tuple[str, Callable[[], object], float]] = [
        ("deliver_webhooks", deliver_webhooks, settings.webhook_poll_seconds),
        (
            "escalate_overdue_approvals",
            ecp.approvals.escalate_overdue,
            settings.escalation_interval_seconds,
        ),
    ]
    if settings.retention_enabled:
        sweeps.append(("retention_purge", ecp.retention.sweep, settings.retention_poll_seconds))
    outage = Outage()  # one outage, logged once, whichever thread finds it
    dispatcher = Dispatcher(
        ecp.runs,
        workers=settings.dispatch_workers,
        poll_seconds=settings.dispatch_poll_seconds,
        sweeps=sweeps,
        tracing=tracing,
        outage=outage,
    )
    scheduler = (
        Dispatcher(
            ecp.runs,
            workers=0,
            poll_seconds=settings.scheduler_interval_seconds,
            sweeps=[
                ("decision_schedules", ecp.decisions.run_due, settings.scheduler_interval_seconds)
            ],
            outage=outage,
        )
        if settings.scheduler_enabled
        else None
    )
    return Runtime(
        settings=settings,
        store=store,
        ecp=ecp,
        signer=signer,
        authenticate=Authenticator(settings.jwt_secret, api_keys=ecp.api_keys.lookup),
        dispatcher=dispatcher,
        scheduler=scheduler,
        metrics=metrics,
        tracing=tracing,
    )
