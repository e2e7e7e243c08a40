"""The connector settings: the settings-defined connectors file and how tests reach backends.

``ECP_CONNECTORS_FILE`` (TOML, :mod:`ecp_core.connectors.definitions` shows its form) is read
once at start-up; a fault refuses start-up with one line naming the file, the connector and the
field. ``ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS`` lets HTTP connectors reach loopback and private
addresses; ``ECP_CONNECTOR_TEST_TIMEOUT_SECONDS`` bounds each test call (default 10, ADR 0044).
Each is declared in :mod:`ecp_http.config.table.models`.
"""

import pathlib
import tomllib
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from ecp_core.connectors.definitions import ConnectorsProblem, parse_connectors
from ecp_core.connectors.model import Connector
from ecp_core.models.model import CatalogEntry
from ecp_http.config.table.models import (
    CONNECTOR_ALLOW_PRIVATE_TARGETS,
    CONNECTOR_TEST_TIMEOUT_SECONDS,
    CONNECTORS_FILE,
)
from ecp_http.config.values import SettingsError


def read_connectors(
    path: pathlib.Path, catalog: Mapping[str, CatalogEntry] | None
) -> dict[str, Connector]:
    """The file's connectors by ref; SettingsError naming the file, connector and field."""
    where = f"{CONNECTORS_FILE.name} ({path})"
    try:
        with path.open("rb") as file:
            document = tomllib.load(file, parse_float=Decimal)
    except OSError as exc:
        raise SettingsError(f"{where}: cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{where}: is not TOML: {exc}") from None
    try:
        return parse_connectors(_plain_numbers(document), catalog)
    except ConnectorsProblem as exc:
        raise SettingsError(f"{where}: {exc}") from None


def _plain_numbers(value: Any) -> Any:  # noqa: ANN401 - a TOML document
    """TOML floats (read exactly as Decimals) as the floats params hold, like JSON numbers."""
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, Mapping):
        return {key: _plain_numbers(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain_numbers(item) for item in value]
    return value


def connector_fields(env: Mapping[str, str], catalog: Mapping[str, CatalogEntry]) -> dict[str, Any]:
    """The ``Settings`` fields of connectors read from ``env``; SettingsError names a bad one.

    ``catalog`` is the model catalog read already (empty: none configured, any model ref).
    """
    path = CONNECTORS_FILE.read(env)
    return {
        "connectors": {} if path is None else read_connectors(path, dict(catalog) or None),
        "connector_allow_private_targets": CONNECTOR_ALLOW_PRIVATE_TARGETS.read(env),
        "connector_test_timeout_seconds": CONNECTOR_TEST_TIMEOUT_SECONDS.read(env),
    }


__all__ = ["connector_fields", "read_connectors"]
