"""The one composition root: settings in, adapters, services and workers wired.

Settings are read once, from an injected mapping (the process environment by default), by
:func:`load_settings`. :func:`build` chooses the storage (PostgreSQL at ``ECP_DATABASE_URL``, or
a store handed in: a ``MemoryStore`` runs the whole HTTP surface in memory) and wires the core,
the authenticator, metrics, tracing, the workers and the handlers' :class:`Services`.
:func:`provisioned` gets a database ready for ``ecp serve`` (the embedded server when no URL is
set, development secrets, migrations); the other commands keep out of this module
(:mod:`ecp_http.startup.database_setup`, :mod:`ecp_http.startup.secrets`). Nothing is built at import time.
"""

import contextlib
import logging
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import TYPE_CHECKING

import attrs

from ecp_core.errors import DatabaseUnavailable
from ecp_core.memory import MemoryStore
from ecp_core.memory.artifacts import MemoryArtifacts
from ecp_core.retention.model import ConfiguredDefaults
from ecp_core.runs.audit.readiness import DeploymentMode
from ecp_core.runs.engine.dispatch import DISPATCH_BACKOFF_CAP_SECONDS
from ecp_core.runs.engine.starts import PreparedStart
from ecp_core.runs.run.model import Run
from ecp_core.service import Ecp, RetentionSettings
from ecp_core.signing import Ed25519Signer
from ecp_core.webhooks.schedule import RetrySchedule
from ecp_http.background import background_work
from ecp_http.background.dispatch import Dispatcher, StartsStopped
from ecp_http.background.wakeups import process_listener
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.config.table.serving import DATABASE_URL
from ecp_http.openapi.api_docs import ApiDocs
from ecp_http.outbound.connector_backends import connector_setup
from ecp_http.outbound.model_calls.model_call import attach_model_call
from ecp_http.server.auth import Authenticator
from ecp_http.server.handlers import all_operations
from ecp_http.server.live_feed import LiveFeed
from ecp_http.server.long_poll import Bell
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.observability.observed import observed
from ecp_http.server.observability.observed_shared import observed_shared
from ecp_http.server.routing import Operation
from ecp_http.server.services import Services
from ecp_http.server.sessions import CloudIdentity
from ecp_http.server.task_offers import TaskOffers
from ecp_http.startup.artifacts import FilesystemArtifacts
from ecp_http.startup.core_setup import (
    action_registry,
    audit_signer,
    backtest_setup,
    retired_audit_keys,
)
from ecp_http.startup.database_setup import database
from ecp_http.startup.hosted import billing_setup, cloud_identity, console_sessions
from ecp_http.startup.secrets import with_development_secrets
from ecp_postgres import PostgresStore, SchemaState, apply_migrations, schema_state
from ecp_postgres.errors import unavailable
from ecp_postgres.notifications import NotificationListener
from ecp_postgres.operations import queue_figures

if TYPE_CHECKING:
    from ecp_core.ports.retention import ArtifactStore
    from ecp_http.server.observability.tracing import Tracing

Storage = MemoryStore | PostgresStore
"""Where the data lives: in this process's memory, or in PostgreSQL."""

log = logging.getLogger("ecp_http")


SCHEMA_CHECK_SECONDS = 5.0
"""Readiness waits at most this long for the schema state, whatever the database does (ADR 0022)."""


@attrs.define
class Runtime:
    """Everything a running server holds."""

    settings: Settings
    store: Storage
    """Handed over to the runtime: closed with it."""
    ecp: Ecp
    signer: Ed25519Signer
    authenticate: Authenticator
    dispatcher: Dispatcher
    timers: Dispatcher | None = None
    """The thread that wakes runs whose wait node's time came (ADR 0078)."""
    log: Dispatcher | None = None
    """The thread that appends audit records to the transparency logs (ADR 0086)."""
    scheduler: Dispatcher | None = None
    """The decision-schedule task (a sweep thread of its own), when enabled."""
    metrics: Metrics | None = None
    """The application's Prometheus registry, unless ``ECP_METRICS_ENABLED`` is false."""
    tracing: "Tracing | None" = None
    """OpenTelemetry traces, when an OTLP endpoint is set and the ``otel`` extra installed."""
    operations: tuple[Operation, ...] = ()
    """Every operation the app serves."""
    cloud_identity: CloudIdentity | None = None
    """Hosted login (the identity provider's client), while ``ECP_IDP_AUTHKIT_ENABLED`` is set."""
    listener: NotificationListener | None = None
    """Wake-ups by PostgreSQL notifications (ADR 0063); None in memory or with them off."""
    services: Services = attrs.field(init=False)
    """What the handlers use (set by :func:`build`, which makes this runtime their background)."""
    _schema_read: "Future[SchemaState] | None" = attrs.field(init=False, default=None, repr=False)
    """The schema read in flight: checks arriving meanwhile wait for it instead of starting one."""
    _schema_guard: threading.Lock = attrs.field(init=False, factory=threading.Lock, repr=False)

    def wake(self, *, announced: bool = False) -> None:
        """Tell the run workers that there is work now (``announced``: see ``Dispatcher.wake``)."""
        self.dispatcher.wake(announced=announced)

    def start_by_worker(self, start: PreparedStart, seconds: float) -> tuple[Run, bool] | None:
        """A start made by a run worker taken within ``seconds`` (ADR 0099, 0106).

        The run and whether it was created; the worker makes it with the other starts waiting.
        None when no worker took it in time, or none runs: the caller starts the run itself.
        Once a worker took it, its one transaction is waited for; its error is raised here.
        """
        handed = self.dispatcher.start_here(start)
        if handed is None:
            return None
        try:
            return handed.result(timeout=seconds)
        except StartsStopped:
            return None
        except FutureTimeout:
            if handed.cancel():  # not taken yet: never will be
                return None
            return handed.result()

    def dispatcher_alive(self) -> bool:
        """Whether the run workers run (and the timer thread that wakes waiting runs)."""
        return self.dispatcher.alive and (self.timers is None or self.timers.alive)

    def scheduler_alive(self) -> bool | None:
        """Whether the decision scheduler runs; None when it is disabled."""
        return None if self.scheduler is None else self.scheduler.alive

    def schema_state(self) -> str:
        """The schema against this build: ``current``, ``pending`` or ``newer``.

        ``pending``: migrations to apply; ``newer``: applied ones this build does not know (a
        newer release's). Always ``current`` in memory. Takes no lock (ADR 0022).

        Raises TimeoutError after :data:`SCHEMA_CHECK_SECONDS`, or the driver's error. The read
        runs on a daemon thread, one at a time, so a read stuck on a frozen database holds one
        thread and never holds up the process's exit.
        """
        if isinstance(self.store, MemoryStore):
            return "current"
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
        return read.result(timeout=SCHEMA_CHECK_SECONDS).verdict

    def start(self) -> None:
        """Start the run workers, the scheduler and the notification listener (when there)."""
        self.dispatcher.start()
        if self.timers is not None:
            self.timers.start()
        if self.log is not None:
            self.log.start()
        if self.scheduler is not None:
            self.scheduler.start()
        if self.listener is not None:
            self.listener.start()

    def close(self) -> None:
        """Stop the workers and close the pool."""
        if self.listener is not None:
            self.listener.stop()
        if self.scheduler is not None:
            self.scheduler.stop()
        if self.timers is not None:
            self.timers.stop()
        if self.log is not None:
            self.log.stop()
        self.dispatcher.stop()
        if isinstance(self.store, PostgresStore):
            self.store.close()
        if self.cloud_identity is not None:
            self.cloud_identity.close()
        if self.tracing is not None:
            self.tracing.shutdown()  # after the workers: their last spans are exported too


def storage_unavailable(exc: BaseException) -> bool:
    """Whether PostgreSQL's error ``exc`` means the database is away or out of space."""
    return unavailable(exc) is not None or isinstance(exc, DatabaseUnavailable)


def _read_schema(into: "Future[SchemaState]", url: str) -> None:
    """Read the migration state into ``into``."""
    try:
        into.set_result(schema_state(url))
    except Exception as exc:  # noqa: BLE001 - handed to the checks waiting for it
        into.set_exception(exc)


def start_tracing(settings: Settings) -> "Tracing | None":
    """Traces when an OTLP endpoint is set; None (and nothing imported) otherwise.

    Without the ``otel`` extra installed, a warning says so and the server runs untraced.
    """
    if settings.otel_traces_endpoint is None:
        return None
    try:
        from ecp_http.server.observability.tracing import Tracing  # noqa: PLC0415 - the optional extra, only when on
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        log.warning(
            "an OTLP endpoint is set but ecp-http[otel] is not installed: tracing is off",
            extra={"missing": exc.name},
        )
        return None
    return Tracing(settings.otel_traces_endpoint)


def load_settings(environ: Mapping[str, str] | None = None) -> Settings:
    """The settings, read once from ``environ`` (the process environment when None)."""
    return Settings.from_mapping(os.environ if environ is None else environ)


def _storage(settings: Settings, storage: Storage | None) -> tuple[Storage, "ArtifactStore"]:
    """The store (PostgreSQL at ``ECP_DATABASE_URL`` unless one is handed in) and its artifacts."""
    if isinstance(storage, MemoryStore):
        return storage, MemoryArtifacts()
    artifacts = FilesystemArtifacts(settings.artifacts_dir or settings.data_dir / "artifacts")
    if storage is not None:
        return storage, artifacts
    assert settings.database_url is not None  # noqa: S101 - checked first in build()
    store = PostgresStore(
        settings.database_url,
        max_size=max(4, settings.dispatch_workers + 8),
        timeout=settings.database_pool_timeout_seconds,
        notify=settings.dispatch_notify,
    )
    return store, artifacts


def build(settings: Settings, *, storage: Storage | None = None) -> Runtime:
    """Wire a runtime over ``storage`` (handed over: closed with the runtime).

    Without ``storage``, a PostgreSQL pool at ``ECP_DATABASE_URL``. Invalid settings raise
    SettingsError naming the setting.
    """
    if not isinstance(storage, MemoryStore) and not settings.database_url:
        raise SettingsError(f"{DATABASE_URL.name} is not set (ecp serve starts an embedded server)")
    signer = audit_signer(settings)
    assert settings.jwt_secret is not None  # noqa: S101 - checked by audit_signer
    retired = retired_audit_keys(settings.audit_verification_keys, signer.key_id)
    actions = action_registry(settings)  # before the pool: a failing plug-in leaves nothing open
    store, artifacts = _storage(settings, storage)
    retention = RetentionSettings(
        artifacts=artifacts,
        econ_erase_enabled=settings.retention_econ_erase_enabled,
        defaults=ConfiguredDefaults(
            audit_ttl_seconds=settings.retention_default_audit_ttl_seconds,
            run_ttl_seconds=settings.retention_default_run_ttl_seconds,
        ),
    )
    policy = RetrySchedule(
        max_attempts=settings.webhook_max_attempts,
        base_seconds=settings.webhook_backoff_base_seconds,
        max_seconds=settings.webhook_backoff_max_seconds,
    )
    metrics = Metrics() if settings.metrics_enabled else None
    if metrics is not None and isinstance(store, PostgresStore):
        metrics.watch_queues(lambda: queue_figures(store))
    tracing = start_tracing(settings)
    appended = threading.Event()  # audit records committed here: the log thread's cue
    shared = (
        observed_shared(store.shared_transaction, metrics, tracing, on_audit=appended.set)
        if isinstance(store, PostgresStore)
        else None
    )
    ecp = Ecp.build(
        observed(store.unit_of_work, metrics, tracing, on_audit=appended.set),
        signer=signer,
        verification_keys=retired,
        actions=actions,
        refuse_unknown_actions=True,
        retention=retention,
        webhook_retry=policy,
        dispatch_retry=RetrySchedule(
            max_attempts=settings.dispatch_max_attempts,
            base_seconds=settings.dispatch_backoff_seconds,
            max_seconds=DISPATCH_BACKOFF_CAP_SECONDS,
        ),
        billing=billing_setup(settings),
        entitlements_enabled=settings.hosted.entitlements_enabled,
        backtests=backtest_setup(settings),
        connectors=connector_setup(settings),
        audit_signing_required=settings.audit_signing_required,
        audit_verify_connections=settings.audit_verify_connections,
        log_origin=settings.log_origin,
        storage_unavailable=storage_unavailable if isinstance(store, PostgresStore) else None,
        shared_transactions=shared if settings.start_batching else None,
        resolution_transactions=shared if settings.resolution_batching else None,
        deployment_mode=DeploymentMode.HOSTED
        if settings.hosted.enabled
        else DeploymentMode.SELF_HOSTED,
    )
    attach_model_call(  # its evidence, written in its attempt (ADR 0098)
        actions, ecp.runs.get, ecp.record_executions_in, ecp.evidence.admits
    )
    offers, runs_moved, live = TaskOffers(), Bell(), LiveFeed()
    if metrics is not None:
        metrics.watch_bells({"tasks_offered": offers.bell, "runs_moved": runs_moved})
        metrics.watch_streams(lambda: live.open_streams)
        groups = {"starts": ecp.runs.start_group, "resolutions": ecp.approvals.group}
        metrics.watch_groups({kind: group for kind, group in groups.items() if group is not None})
    dispatcher, timers, scheduler, log = background_work(
        ecp,
        settings,
        tracing,
        offers=offers,
        runs_moved=runs_moved,
        metrics=metrics,
        live=live,
        appended=appended,
    )
    listener = process_listener(
        store.url if isinstance(store, PostgresStore) and settings.dispatch_notify else None,
        dispatcher=dispatcher,
        offers=offers,
        runs_moved=runs_moved,
        registry=None if metrics is None else metrics.registry,
        live=live,
        timers=timers,
    )
    operations = tuple(
        all_operations(
            metrics_enabled=metrics is not None,
            billing_enabled=settings.hosted.billing.enabled,
            identity_enabled=settings.hosted.identity.enabled,
        )
    )
    identity = cloud_identity(settings)
    authenticate = Authenticator(
        settings.jwt_secret,
        api_keys=ecp.api_keys.lookup,
        sessions=None if identity is None else identity.sessions.actor,
    )
    runtime = Runtime(
        settings=settings,
        store=store,
        ecp=ecp,
        signer=signer,
        authenticate=authenticate,
        dispatcher=dispatcher,
        timers=timers,
        log=log,
        scheduler=scheduler,
        metrics=metrics,
        tracing=tracing,
        operations=operations,
        cloud_identity=identity,
        listener=listener,
    )
    runtime.services = Services(
        ecp=ecp,
        settings=settings,
        authenticate=authenticate,
        background=runtime,
        api=ApiDocs(operations),
        metrics=metrics,
        task_offers=offers,
        runs_moved=runs_moved,
        live=live,
        cloud_identity=identity,
        console=console_sessions(settings),
    )
    return runtime


@contextlib.contextmanager
def provisioned(settings: Settings, tell: Callable[[str], None]) -> Iterator[Settings]:
    """A database ready to serve: reachable, development secrets filled in, migrations applied.

    Yields the settings to build the app with (the URL in use filled in); ``tell`` hears a line
    for each secret generated or reused and for the migrations applied. Hosted mode refuses to
    invent secrets (SettingsError).
    """
    with database(settings.database_url, settings.data_dir) as url:
        settings, notes = with_development_secrets(attrs.evolve(settings, database_url=url))
        for note in notes:
            tell(note)
        applied = apply_migrations(url)
        if applied:
            tell(f"applied {len(applied)} migration(s)")
        yield settings
