"""Reading single setting values from the environment mapping; SettingsError names the bad one."""

from collections.abc import Mapping


class SettingsError(ValueError):
    """A setting is invalid; the message names it."""


def flag(env: Mapping[str, str], name: str, default: bool) -> bool:  # noqa: FBT001
    """A true/false setting (``1 true yes on`` / ``0 false no off``); ``default`` when unset."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    lowered = raw.strip().lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    raise SettingsError(f"{name} must be true or false, not {raw!r}")


def number(
    env: Mapping[str, str], name: str, default: float, *, minimum: float, integer: bool = False
) -> float:
    """A number of at least ``minimum`` (a whole one with ``integer``); ``default`` when unset."""
    raw = env.get(name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw) if integer else float(raw)
    except ValueError:
        raise SettingsError(
            f"{name} must be a {'whole ' if integer else ''}number, not {raw!r}"
        ) from None
    if value < minimum:
        raise SettingsError(f"{name} must be at least {minimum}, not {raw!r}")
    return value


def choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str | None:
    """One of ``choices`` (any case), as spelled there; None when unset."""
    raw = (env.get(name) or "").strip()
    if not raw:
        return None
    for choice in choices:
        if raw.lower() == choice.lower():
            return choice
    raise SettingsError(f"{name} must be one of {', '.join(choices)}, not {raw!r}")


__all__ = ["SettingsError", "choice", "flag", "number"]
