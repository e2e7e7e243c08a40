"""The backtest settings: the digest keys (current and retired), the deadline, the call caps.

``ECP_BACKTEST_DIGEST_KEY`` (at least 32 characters) keys the request digest and seals a
request while its backtest waits or runs; ``ECP_BACKTEST_DIGEST_KEY_ID`` names it (default: a
short fingerprint). ``ECP_BACKTEST_DIGEST_KEYS_RETIRED`` lists earlier keys as comma-separated
``id:key`` pairs, so exact retries digested under them are still recognised (ADR 0038).
"""

import re
from collections.abc import Mapping
from typing import Any

from ecp_core.backtests.digest import MIN_KEY_LENGTH, key_id_of
from ecp_http.settings_values import SettingsError, number

_KEY_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
DIGEST_KEY = "ECP_BACKTEST_DIGEST_KEY"
DIGEST_KEY_ID = "ECP_BACKTEST_DIGEST_KEY_ID"
RETIRED_KEYS = "ECP_BACKTEST_DIGEST_KEYS_RETIRED"


def _key(name: str, key: str) -> str:
    if len(key) < MIN_KEY_LENGTH:
        raise SettingsError(f"{name} must be at least {MIN_KEY_LENGTH} characters")
    return key


def _key_id(name: str, key_id: str) -> str:
    if not _KEY_ID.fullmatch(key_id):
        raise SettingsError(f"{name}: a key id is 1 to 64 letters, digits, '.', '_' or '-'")
    return key_id


def _retired(env: Mapping[str, str], current_id: str | None) -> dict[str, str]:
    retired: dict[str, str] = {}
    for pair in filter(None, (part.strip() for part in (env.get(RETIRED_KEYS) or "").split(","))):
        key_id, colon, key = pair.partition(":")
        if not colon:
            raise SettingsError(f"{RETIRED_KEYS}: each entry is id:key")
        _key_id(RETIRED_KEYS, key_id)
        if key_id in retired or key_id == current_id:
            raise SettingsError(f"{RETIRED_KEYS}: key id {key_id!r} is given twice")
        retired[key_id] = _key(RETIRED_KEYS, key)
    return retired


def _cap(env: Mapping[str, str], name: str) -> int | None:
    if not env.get(name):
        return None
    return int(number(env, name, 0, minimum=4, integer=True))


def backtest_fields(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``Settings`` fields of backtests read from ``env``; SettingsError names a bad one."""
    key = env.get(DIGEST_KEY) or None
    key_id = None
    if key is not None:
        _key(DIGEST_KEY, key)
        key_id = _key_id(DIGEST_KEY_ID, env.get(DIGEST_KEY_ID) or key_id_of(key))
    elif env.get(DIGEST_KEY_ID):
        raise SettingsError(f"{DIGEST_KEY_ID} is set but {DIGEST_KEY} is not")
    return {
        "backtest_digest_key": key,
        "backtest_digest_key_id": key_id,
        "backtest_digest_keys_retired": _retired(env, key_id),
        "backtest_deadline_seconds": number(env, "ECP_BACKTEST_DEADLINE_SECONDS", 600.0, minimum=1),
        "backtest_max_calls": _cap(env, "ECP_BACKTEST_MAX_CALLS"),
        "backtest_max_calls_per_day": _cap(env, "ECP_BACKTEST_MAX_CALLS_PER_DAY"),
    }


__all__ = ["backtest_fields"]
