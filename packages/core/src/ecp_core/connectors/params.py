"""A connector's params, checked per backend type: known keys only, never a secret value.

``model``: ``model_ref`` (in the catalog, when one is configured). ``http``: ``base_url``
(http or https, no credentials, query or fragment), ``path`` (default ``/``), ``auth_header``
and ``auth_secret_ref`` (the *name* of a secret whose value is sent in that header; the header
defaults to ``Authorization``), ``timeout_seconds`` (above 0, at most 60).

A key that names a secret (``api_key``, ``token``, ``password``, ``secret``, ``authorization``
and the like, unless it ends in ``_ref``) or a value that looks like a credential (``Bearer …``,
``sk-…``) is refused with ``secret_value_refused`` and never echoed.
"""

import re
from collections.abc import Mapping
from typing import Any

from ecp_core.connectors.model import BackendType
from ecp_core.errors import Configurable, FieldError, SecretValueRefused, ValidationFailed
from ecp_core.models.model import CatalogEntry

SECRET_WORDS = (
    "apikey",
    "token",
    "password",
    "passwd",
    "secret",
    "authorization",
    "credential",
    "privatekey",
    "accesskey",
    "bearer",
    "cookie",
)
"""Words that make a param key name a secret (compared without case, ``_`` or ``-``)."""

_CREDENTIAL_VALUE = re.compile(
    r"(?i)\s*(bearer|basic|token)\s+\S+|\s*(sk|pk|rk)[-_](live|test|proj|ant)?[-_]?[A-Za-z0-9_-]{12,}"
)
_SECRET_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,128}")
_URL = re.compile(r"(?i)https?://[^\s/?#@]+(/[^\s?#]*)?")
_PATH = re.compile(r"/[^\s?#]{0,2047}")
_MANAGED_HEADERS = frozenset({"host", "content-length", "transfer-encoding", "connection"})
MAX_TIMEOUT_SECONDS = 60

KEYS: Mapping[BackendType, frozenset[str]] = {
    BackendType.MODEL: frozenset({"model_ref"}),
    BackendType.HTTP: frozenset(
        {"base_url", "path", "auth_header", "auth_secret_ref", "timeout_seconds"}
    ),
}
"""The keys each backend type's params may have."""


def names_a_secret(key: str) -> bool:
    """Whether a param key names a secret value (a ``*_ref`` key names a secret's *name*)."""
    folded = re.sub(r"[^a-z0-9]", "", key.lower())
    return not key.lower().endswith("_ref") and any(word in folded for word in SECRET_WORDS)


def looks_like_credential(value: object) -> bool:
    """Whether a param value reads like a credential (``Bearer …``, ``sk-…``)."""
    return isinstance(value, str) and _CREDENTIAL_VALUE.match(value) is not None


def _text(value: object, pattern: re.Pattern[str], what: str) -> str | None:
    if isinstance(value, str) and pattern.fullmatch(value):
        return None
    return f"must be {what}"


def _model_problems(
    params: Mapping[str, Any], catalog: Mapping[str, CatalogEntry] | None
) -> list[FieldError]:
    ref = params.get("model_ref")
    if ref is None:
        return [FieldError(loc=("params", "model_ref"), msg="required")]
    if not isinstance(ref, str) or not 1 <= len(ref) <= 200 or ref != ref.strip():  # noqa: PLR2004
        return [
            FieldError(
                loc=("params", "model_ref"), msg="must be a model ref of 1 to 200 characters"
            )
        ]
    if catalog is not None and ref not in catalog:
        return [FieldError(loc=("params", "model_ref"), msg=f"{ref!r} is not in the model catalog")]
    return []


def _authority(url: str) -> str:
    """The host part of a URL (userinfo included), or the empty string."""
    rest = url.split("://", 1)[1] if "://" in url else ""
    return re.split(r"[/?#]", rest, maxsplit=1)[0]


def _http_problems(params: Mapping[str, Any]) -> list[FieldError]:
    found: list[tuple[str, str | None]] = []
    if "base_url" not in params:
        found.append(("base_url", "required"))
    else:
        url = params["base_url"]
        what = "an http:// or https:// URL of at most 2048 characters, without query or fragment"
        problem = _text(url, _URL, what)
        if problem is None and len(url) > 2048:  # noqa: PLR2004
            problem = f"must be {what}"
        found.append(("base_url", problem))
    if "path" in params:
        found.append(("path", _text(params["path"], _PATH, "a path starting with / (no query)")))
    if "auth_header" in params:
        header = params["auth_header"]
        problem = _text(header, _HEADER_NAME, "an HTTP header name")
        if problem is None and str(header).lower() in _MANAGED_HEADERS:
            problem = "names a header the client sets itself"
        found.append(("auth_header", problem))
        if "auth_secret_ref" not in params:
            found.append(("auth_secret_ref", "required with auth_header"))
    if "auth_secret_ref" in params:
        found.append(
            ("auth_secret_ref", _text(params["auth_secret_ref"], _SECRET_NAME, "a secret name"))
        )
    if "timeout_seconds" in params:
        timeout = params["timeout_seconds"]
        valid = not isinstance(timeout, bool) and isinstance(timeout, int | float)
        if not valid or not 0 < timeout <= MAX_TIMEOUT_SECONDS:
            found.append(
                ("timeout_seconds", f"must be a number above 0 and at most {MAX_TIMEOUT_SECONDS}")
            )
    return [FieldError(loc=("params", key), msg=msg) for key, msg in found if msg is not None]


def _secret_problems(params: Mapping[str, Any]) -> list[FieldError]:
    """Every key naming a secret, value reading like a credential, or URL carrying one."""
    errors = []
    for key in sorted(params):
        value = params[key]
        if names_a_secret(key):
            msg = (
                "names a secret value: store the secret in the secret store and give its name "
                "in auth_secret_ref"
            )
        elif looks_like_credential(value):
            msg = "looks like a credential: give a secret's name instead"
        elif key == "base_url" and isinstance(value, str) and "@" in _authority(value):
            msg = "must not carry credentials: name a secret in auth_secret_ref"
        else:
            continue
        errors.append(FieldError(loc=("params", key), msg=msg))
    return errors


def checked_params(
    backend_type: BackendType,
    params: Mapping[str, Any],
    catalog: Mapping[str, CatalogEntry] | None,
) -> dict[str, Any]:
    """``params`` as stored: checked for ``backend_type``; SecretValueRefused or ValidationFailed.

    ``catalog`` None: no catalog is configured and any model ref is taken.
    """
    secrets = _secret_problems(params)
    if secrets:
        raise SecretValueRefused(
            "connector params must not hold secret values",
            errors=secrets,
            configuration=(Configurable.SECRET_STORE,),
        )
    allowed = KEYS[backend_type]
    errors = [
        FieldError(
            loc=("params", key),
            msg=f"is not a {backend_type.value} param ({', '.join(sorted(allowed))})",
        )
        for key in sorted(set(params) - allowed)
    ]
    if backend_type is BackendType.MODEL:
        errors += _model_problems(params, catalog)
    else:
        errors += _http_problems(params)
    if errors:
        raise ValidationFailed("the connector's params are invalid", errors=errors)
    stored = dict(params)
    if backend_type is BackendType.HTTP:
        stored["base_url"] = str(stored["base_url"]).rstrip("/")
        if "auth_secret_ref" in stored:
            stored.setdefault("auth_header", "Authorization")
    return stored


__all__ = [
    "KEYS",
    "MAX_TIMEOUT_SECONDS",
    "SECRET_WORDS",
    "checked_params",
    "looks_like_credential",
    "names_a_secret",
]
