"""Observability: log lines, the metrics route and the OpenTelemetry trace export.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

from ecp_http.config.table.parsers import otel_disabled, otlp_url
from ecp_http.config.values import Setting, choice, flag, text
from ecp_http.logs import FORMATS, LEVELS

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
    parse=otlp_url,
    default=None,
    description=(
        "with `ecp-http[otel]` installed, export traces over OTLP/HTTP to `<url>/v1/traces` "
        '(`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` wins, used as is); see "Tracing"'
    ),
)

OTEL_TRACES_ENDPOINT: Setting[str | None] = Setting(
    name="OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    parse=otlp_url,
    default=None,
    description="the traces URL itself, used as is; wins over `OTEL_EXPORTER_OTLP_ENDPOINT`",
)

OTEL_SDK_DISABLED: Setting[bool] = Setting(
    name="OTEL_SDK_DISABLED",
    parse=otel_disabled,
    default=False,
    description="`true` exports no traces, whatever the endpoints say",
    shown_default="`false`",
)
