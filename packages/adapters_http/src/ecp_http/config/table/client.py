"""The client commands' settings: where the service is and how they authenticate.

``ecp runs``, ``ecp approvals``, ``ecp bills`` and ``ecp worker`` read them.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

from ecp_http.config.values import Setting, stripped, text

DEFAULT_URL = "http://127.0.0.1:8000"
"""Where the client commands find the service unless told."""

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
