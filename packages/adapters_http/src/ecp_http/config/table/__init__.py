"""Every setting of the server and the client commands, declared once: the one table.

Each :class:`~ecp_http.config.values.Setting` gives the variable's name, its parser, its
default and its description; :meth:`ecp_http.config.settings.Settings.from_mapping` (and the client
commands, and ``ecp migrate``) read each through its declaration, and the settings tables of
docs/operations.md and docs/hosted.md are rendered from :data:`SETTINGS`
(:mod:`ecp_http.openapi.settings_doc`). No other module names a variable (ADR 0072).

The declarations sit by area, one module each: :mod:`.serving`, :mod:`.runs`, :mod:`.actions`,
:mod:`.models`, :mod:`.observability`, :mod:`.hosted`, :mod:`.client`; the parsers only they use in
:mod:`.parsers`. Import a setting from the module that declares it; :data:`SETTINGS` lists them
all, here.
"""

from typing import Any

from ecp_http.config.table import actions, client, hosted, models, observability, runs, serving
from ecp_http.config.values import Setting, SettingFamily

SETTINGS: tuple[Setting[Any] | SettingFamily, ...] = (
    serving.DATABASE_URL,
    serving.DATABASE_POOL_TIMEOUT_SECONDS,
    serving.DATA_DIR,
    serving.HOST,
    serving.PORT,
    serving.JWT_SECRET,
    serving.AUDIT_SIGNING_KEY,
    serving.AUDIT_SIGNING_KEY_ID,
    serving.AUDIT_VERIFICATION_KEYS,
    serving.AUDIT_SIGNING_REQUIRED,
    serving.HOSTED,
    serving.WORKERS,
    serving.CONSOLE_SESSION_HOURS,
    runs.DISPATCH_WORKERS,
    runs.AUDIT_VERIFY_CONNECTIONS,
    runs.DISPATCH_POLL_SECONDS,
    runs.TIMER_POLL_SECONDS,
    runs.LOG_CHECKPOINT_SECONDS,
    runs.LOG_ORIGIN,
    runs.LOG_WITNESSES,
    runs.DISPATCH_NOTIFY,
    runs.START_BATCHING,
    runs.RESOLUTION_BATCHING,
    runs.DISPATCH_MAX_ATTEMPTS,
    runs.DISPATCH_BACKOFF_SECONDS,
    runs.MAX_WAIT_SECONDS,
    runs.MAX_BODY_BYTES,
    runs.MAX_EVIDENCE_BODY_BYTES,
    runs.ESCALATION_INTERVAL_SECONDS,
    runs.WEBHOOK_MAX_ATTEMPTS,
    runs.WEBHOOK_BACKOFF_BASE_SECONDS,
    runs.WEBHOOK_BACKOFF_MAX_SECONDS,
    runs.WEBHOOK_TIMEOUT_SECONDS,
    runs.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    runs.WEBHOOK_POLL_SECONDS,
    actions.ACTION_MODULES,
    actions.HTTP_ACTION_MAX_BYTES,
    actions.HTTP_ACTION_ALLOW_PRIVATE_TARGETS,
    actions.SECRET,
    actions.SECRETS_DIR,
    models.MODEL_CATALOG,
    models.MODEL_CALL_TIMEOUT_SECONDS,
    models.BACKTEST_DIGEST_KEY,
    models.BACKTEST_DIGEST_KEY_ID,
    models.BACKTEST_DIGEST_KEYS_RETIRED,
    models.BACKTEST_DEADLINE_SECONDS,
    models.BACKTEST_MAX_CALLS,
    models.BACKTEST_MAX_CALLS_PER_DAY,
    models.CONNECTORS_FILE,
    models.CONNECTOR_ALLOW_PRIVATE_TARGETS,
    models.CONNECTOR_TEST_TIMEOUT_SECONDS,
    runs.SCHEDULER_ENABLED,
    runs.SCHEDULER_INTERVAL_SECONDS,
    runs.ARTIFACTS_DIR,
    observability.LOG_FORMAT,
    observability.LOG_LEVEL,
    observability.METRICS_ENABLED,
    observability.METRICS_TOKEN,
    observability.OTEL_ENDPOINT,
    observability.OTEL_TRACES_ENDPOINT,
    observability.OTEL_SDK_DISABLED,
    runs.RETENTION_ENABLED,
    runs.RETENTION_POLL_SECONDS,
    runs.RETENTION_DEFAULT_AUDIT_TTL_SECONDS,
    runs.RETENTION_DEFAULT_RUN_TTL_SECONDS,
    runs.RETENTION_ECON_ERASE_ENABLED,
    hosted.IDP_AUTHKIT_ENABLED,
    hosted.IDP_CLIENT_ID,
    hosted.IDP_API_KEY,
    hosted.IDP_REDIRECT_URI,
    hosted.IDP_COOKIE_PASSWORD,
    hosted.CLOUD_BROWSER_ORIGIN,
    hosted.IDP_BASE_URL,
    hosted.BILLING_ENABLED,
    hosted.BILLING_API_KEY,
    hosted.BILLING_WEBHOOK_SECRET,
    hosted.BILLING_SOLO_PRICE_ID,
    hosted.BILLING_SANDBOX,
    hosted.BILLING_BASE_URL,
    hosted.CLOUD_ENTITLEMENTS_ENABLED,
    hosted.CLOUD_ALLOW_INSECURE_COOKIES,
    client.URL,
    client.API_KEY,
    client.TOKEN,
)
"""Every setting, in the order the documents list them."""

__all__ = ["SETTINGS"]
