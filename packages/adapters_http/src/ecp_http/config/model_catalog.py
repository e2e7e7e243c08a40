"""Reading the model catalog file (``ECP_MODEL_CATALOG``) at start-up: one line per fault.

The file is TOML (:mod:`ecp_core.models.catalog` shows its form). Floats are read with
``parse_float=Decimal``, so ``0.15`` is exactly fifteen cents. Any fault, and a model whose
named secret cannot be found, refuses start-up with a SettingsError naming the file, the model
and the field (ADR 0037).
"""

import pathlib
import tomllib
from collections.abc import Mapping
from decimal import Decimal

from ecp_core.models.catalog import CatalogProblem, parse_catalog
from ecp_core.models.model import CatalogEntry
from ecp_http.config.action_secrets import ActionSecrets, SecretUnavailable
from ecp_http.config.table.models import MODEL_CATALOG
from ecp_http.config.values import SettingsError

SETTING = MODEL_CATALOG.name


def read_catalog(path: pathlib.Path) -> dict[str, CatalogEntry]:
    """The catalog's models by ref; SettingsError naming the file, model and field at a fault."""
    where = f"{SETTING} ({path})"
    try:
        with path.open("rb") as file:
            document = tomllib.load(file, parse_float=Decimal)
    except OSError as exc:
        raise SettingsError(f"{where}: cannot be read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"{where}: is not TOML: {exc}") from None
    try:
        return parse_catalog(document)
    except CatalogProblem as exc:
        raise SettingsError(f"{where}: {exc}") from None


def check_secrets(catalog: Mapping[str, CatalogEntry], secrets: ActionSecrets) -> None:
    """SettingsError when a model names a secret that is not set (its value is never shown)."""
    for entry in catalog.values():
        if entry.secret_name is None:
            continue
        try:
            secrets.value(entry.secret_name)
        except SecretUnavailable as exc:
            raise SettingsError(
                f"{SETTING}: model {entry.model_ref!r}: secret_name: {exc}"
            ) from None


__all__ = ["SETTING", "check_secrets", "read_catalog"]
