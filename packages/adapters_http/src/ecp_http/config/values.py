"""One setting's declaration (name, parser, default, description) and the parsers it uses.

:mod:`ecp_http.config.table` declares every setting once with :class:`Setting`; reading one
is ``SETTING.read(env)``. A parser gets the setting's name and its text (never unset nor empty)
and answers the value, None when the text counts as unset, or SettingsError naming the setting.
"""

import pathlib
from collections.abc import Callable, Mapping
from typing import Generic, TypeAlias, TypeVar
from urllib.parse import urlsplit

import attrs

HOSTED_FEATURES = ("identity", "billing")
"""The hosted features a setting may be needed by (``Setting.needed_by``)."""

DOCUMENTS = ("operations", "hosted", "client")
"""Where a setting is documented: docs/operations.md, docs/hosted.md, the client commands' help."""


class SettingsError(ValueError):
    """A setting is invalid; the message names it."""


T = TypeVar("T")

Parser: TypeAlias = Callable[[str, str], T | None]
"""``(name, text)`` to the value; None: the text counts as unset."""


def _missing(name: str) -> SettingsError:
    return SettingsError(f"{name} is required when its hosted feature is enabled")


@attrs.frozen(kw_only=True)
class Setting(Generic[T]):
    """One setting: the variable, how its text is read, its value when unset, and its meaning."""

    name: str
    """The environment variable."""
    parse: Parser[T] = attrs.field(repr=False)
    default: T
    """The value when the variable is unset, empty, or its text counts as unset."""
    description: str
    """What it does, as the settings table of its document shows it."""
    shown_default: str = "unset"
    """The default as its document shows it (``unset``, ``generated``, `` `8000` ``...)."""
    document: str = "operations"
    """Which document's table lists it (one of :data:`DOCUMENTS`)."""
    needed_by: str | None = None
    """The hosted feature that refuses to start without it (one of :data:`HOSTED_FEATURES`)."""

    def read(self, env: Mapping[str, str]) -> T:
        """The value in ``env`` (its one read there); SettingsError names a bad or missing one."""
        raw = env.get(self.name)
        if raw is None or raw == "" or (self.needed_by is not None and not raw.strip()):
            if self.needed_by is not None:
                raise _missing(self.name)
            return self.default
        value = self.parse(self.name, raw)
        return self.default if value is None else value


@attrs.frozen(kw_only=True)
class SettingFamily:
    """Settings sharing a prefix (``ECP_SECRET_<NAME>``): read together, by the rest of the name."""

    prefix: str
    description: str
    shown_default: str = "unset"
    document: str = "operations"

    @property
    def name(self) -> str:
        """The family as its document names it: the prefix, then ``<NAME>``."""
        return f"{self.prefix}<NAME>"

    def read(self, env: Mapping[str, str]) -> dict[str, str]:
        """Each non-empty member by the rest of its name (one pass over ``env``)."""
        return {
            key.removeprefix(self.prefix): value
            for key, value in env.items()
            if key.startswith(self.prefix) and len(key) > len(self.prefix) and value
        }


def text(_: str, raw: str) -> str:
    """The text as given."""
    return raw


def stripped(_: str, raw: str) -> str | None:
    """The text without surrounding blanks; blank counts as unset."""
    return raw.strip() or None


def flag(name: str, raw: str) -> bool:
    """True or false: ``1 true yes on`` / ``0 false no off``, any case."""
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def number(minimum: float) -> Parser[float]:
    """A number of at least ``minimum``."""

    def parse(name: str, raw: str) -> float:
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{name} must be a number, not {raw!r}") from None
        if value < minimum:
            raise SettingsError(f"{name} must be at least {minimum}, not {raw!r}")
        return value

    return parse


def whole(minimum: int, *, maximum: int | None = None) -> Parser[int]:
    """A whole number of at least ``minimum`` (and at most ``maximum``, when given)."""

    def parse(name: str, raw: str) -> int:
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{name} must be a whole number, not {raw!r}") from None
        if value < minimum:
            raise SettingsError(f"{name} must be at least {minimum}, not {raw!r}")
        if maximum is not None and value > maximum:
            raise SettingsError(f"{name} must be at most {maximum}, not {value}")
        return value

    return parse


def choice(choices: tuple[str, ...]) -> Parser[str]:
    """One of ``choices`` (any case), as spelled there; blank counts as unset."""

    def parse(name: str, raw: str) -> str | None:
        given = raw.strip()
        if not given:
            return None
        for one in choices:
            if given.lower() == one.lower():
                return one
        raise SettingsError(f"{name} must be one of {', '.join(choices)}, not {given!r}")

    return parse


def at_least(length: int) -> Parser[str]:
    """A secret of at least ``length`` characters."""

    def parse(name: str, raw: str) -> str:
        if len(raw) < length:
            raise SettingsError(f"{name} must be at least {length} characters")
        return raw

    return parse


def path(_: str, raw: str) -> pathlib.Path:
    """A file or directory path, as given."""
    return pathlib.Path(raw)


def url(name: str, raw: str) -> str:
    """An absolute http(s) URL, without surrounding blanks or a trailing slash."""
    value = raw.strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{name} must be an absolute http(s) URL, not {value!r}")
    return value


__all__ = [
    "DOCUMENTS",
    "HOSTED_FEATURES",
    "Parser",
    "Setting",
    "SettingFamily",
    "SettingsError",
    "at_least",
    "choice",
    "flag",
    "number",
    "path",
    "stripped",
    "text",
    "url",
    "whole",
]
