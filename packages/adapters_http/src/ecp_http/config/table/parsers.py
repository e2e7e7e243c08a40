"""The parsers only the settings table uses, each for one kind of its settings.

Retention TTLs, action plug-ins, the OpenTelemetry variables, backtest digest keys, the hosted
offer's cookie password.

The generic ones (text, flags, numbers, URLs, paths) are in :mod:`ecp_http.config.values`; each
parser gets the setting's name and its text, and answers the value, None when the text counts as
unset, or SettingsError naming the setting.
"""

import re

from ecp_core.backtests.digest import MIN_KEY_LENGTH
from ecp_core.retention.model import MAX_TTL_SECONDS
from ecp_http.config.values import SettingsError, at_least

COOKIE_PASSWORD_MIN = 32
"""The fewest characters ``ECP_IDP_COOKIE_PASSWORD`` may have."""

_ACTION_MODULE = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")
_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


def ttl_seconds(name: str, raw: str) -> int:
    """Whole seconds from 1 to the longest retention TTL."""
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_TTL_SECONDS:
        raise SettingsError(
            f"{name} must be whole seconds from 1 to {MAX_TTL_SECONDS}, not {raw!r}"
        )
    return int(raw)


def action_modules(name: str, raw: str) -> tuple[str, ...]:
    """Comma-separated ``module:function`` plug-ins, in order."""
    named = tuple(part.strip() for part in raw.split(","))
    for part in named:
        if part and not _ACTION_MODULE.fullmatch(part):
            raise SettingsError(f"{name}: {part!r} is not module:function")
    return tuple(part for part in named if part)


def otlp_url(name: str, raw: str) -> str | None:
    """An http(s) URL of an OTLP endpoint; blank counts as unset."""
    given = raw.strip()
    if given and not given.startswith(("http://", "https://")):
        raise SettingsError(f"{name} must be an http:// or https:// URL, not {given!r}")
    return given or None


def otel_disabled(_: str, raw: str) -> bool:
    """OpenTelemetry's own rule: only ``true`` (any case) disables."""
    return raw.strip().lower() == "true"


def key_id(name: str, raw: str) -> str:
    """A digest key id: 1 to 64 letters, digits, ``.``, ``_`` or ``-``."""
    if not _KEY_ID.fullmatch(raw):
        raise SettingsError(f"{name}: a key id is 1 to 64 letters, digits, '.', '_' or '-'")
    return raw


digest_key = at_least(MIN_KEY_LENGTH)
"""A backtest digest key: long enough to key an HMAC."""


def retired_keys(name: str, raw: str) -> dict[str, str]:
    """Comma-separated ``id:key`` pairs, each id once, each key long enough."""
    retired: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in raw.split(","))):
        given_id, colon, key = pair.partition(":")
        if not colon:
            raise SettingsError(f"{name}: each entry is id:key")
        key_id(name, given_id)
        if given_id in retired:
            raise SettingsError(f"{name}: key id {given_id!r} is given twice")
        digest_key(name, key)
        retired[given_id] = key
    return retired


def cookie_password(name: str, raw: str) -> str:
    """The hosted offer's cookie password, without surrounding blanks, long enough."""
    password = raw.strip()
    if len(password) < COOKIE_PASSWORD_MIN:
        raise SettingsError(f"{name} must have at least {COOKIE_PASSWORD_MIN} characters")
    return password
