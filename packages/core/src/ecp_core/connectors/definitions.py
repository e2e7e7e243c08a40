"""Settings-defined connectors: a parsed TOML document into connectors, or the first fault named.

The file (the server's ``ECP_CONNECTORS_FILE``) is read once at start-up by the HTTP adapter::

    [connectors."fast-model"]
    backend_type = "model"
    params = { model_ref = "fast" }

    [connectors."status-page"]
    backend_type = "http"
    params = { base_url = "https://status.example.com", path = "/health",
               auth_header = "X-Api-Key", auth_secret_ref = "STATUS_KEY" }

Each entry passes the same checks as ``POST /v1/connectors`` (ADR 0044); a secret value is
refused like any other fault, and the message never shows the value.
"""

import re
from collections.abc import Mapping
from typing import Any

from ecp_core.connectors.model import REF_PATTERN, BackendType, Connector, ConnectorSource
from ecp_core.connectors.params import checked_params
from ecp_core.errors import ValidationFailed
from ecp_core.models.model import CatalogEntry

_REF = re.compile(REF_PATTERN)
FIELDS = frozenset({"backend_type", "params"})


class ConnectorsProblem(ValueError):
    """The connectors file is invalid; the message names the connector and the field."""


def _where(ref: str | None, field: str | None) -> str:
    parts = [part for part in (None if ref is None else f"connector {ref!r}", field) if part]
    return ": ".join(parts)


def _entry(ref: str, table: object, catalog: Mapping[str, CatalogEntry] | None) -> Connector:
    if _REF.fullmatch(ref) is None:
        raise ConnectorsProblem(
            f"{_where(ref, None)}: a ref is 1 to 128 letters, digits, '.', '_', ':' or '-'"
        )
    if not isinstance(table, Mapping):
        raise ConnectorsProblem(f"{_where(ref, None)}: must be a table of its settings")
    unknown = sorted(set(table) - FIELDS)
    if unknown:
        raise ConnectorsProblem(
            f"{_where(ref, unknown[0])}: is not a setting (backend_type, params)"
        )
    try:
        backend_type = BackendType(str(table.get("backend_type")))
    except ValueError:
        kinds = " or ".join(kind.value for kind in BackendType)
        raise ConnectorsProblem(f"{_where(ref, 'backend_type')}: must be {kinds}") from None
    params: Any = table.get("params", {})
    if not isinstance(params, Mapping):
        raise ConnectorsProblem(f"{_where(ref, 'params')}: must be a table")
    try:
        checked = checked_params(backend_type, params, catalog)
    except ValidationFailed as exc:
        first = exc.errors[0] if exc.errors else None
        field = ".".join(str(part) for part in first.loc) if first else "params"
        msg = first.msg if first else exc.detail
        raise ConnectorsProblem(f"{_where(ref, field)}: {msg}") from None
    return Connector(ref=ref, backend_type=backend_type, params=checked, source=ConnectorSource.ENV)


def parse_connectors(
    document: Mapping[str, Any], catalog: Mapping[str, CatalogEntry] | None
) -> dict[str, Connector]:
    """Every connector of a parsed file, by ref; ConnectorsProblem at the first fault.

    ``catalog`` None: no model catalog is configured and any model ref is taken.
    """
    unknown = sorted(set(document) - {"connectors"})
    if unknown:
        raise ConnectorsProblem(f"{unknown[0]}: is not a section (only [connectors.<ref>])")
    connectors = document.get("connectors", {})
    if not isinstance(connectors, Mapping):
        raise ConnectorsProblem("connectors: must be tables [connectors.<ref>]")
    return {str(ref): _entry(str(ref), table, catalog) for ref, table in connectors.items()}


__all__ = ["FIELDS", "ConnectorsProblem", "parse_connectors"]
