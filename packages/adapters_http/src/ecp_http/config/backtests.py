"""The backtest settings: the digest keys (current and retired), the deadline, the call caps.

``ECP_BACKTEST_DIGEST_KEY`` (at least 32 characters) keys the request digest and seals a
request while its backtest waits or runs; ``ECP_BACKTEST_DIGEST_KEY_ID`` names it (default: a
short fingerprint). ``ECP_BACKTEST_DIGEST_KEYS_RETIRED`` lists earlier keys as comma-separated
``id:key`` pairs, so exact retries digested under them are still recognised (ADR 0038). Each is
declared in :mod:`ecp_http.config.table.models`.
"""

from collections.abc import Mapping
from typing import Any

from ecp_core.backtests.digest import key_id_of
from ecp_http.config.table.models import (
    BACKTEST_DEADLINE_SECONDS,
    BACKTEST_DIGEST_KEY,
    BACKTEST_DIGEST_KEY_ID,
    BACKTEST_DIGEST_KEYS_RETIRED,
    BACKTEST_MAX_CALLS,
    BACKTEST_MAX_CALLS_PER_DAY,
)
from ecp_http.config.values import SettingsError


def backtest_fields(env: Mapping[str, str]) -> dict[str, Any]:
    """The ``Settings`` fields of backtests read from ``env``; SettingsError names a bad one."""
    key = BACKTEST_DIGEST_KEY.read(env)
    key_id = BACKTEST_DIGEST_KEY_ID.read(env)
    if key is None and key_id is not None:
        raise SettingsError(
            f"{BACKTEST_DIGEST_KEY_ID.name} is set but {BACKTEST_DIGEST_KEY.name} is not"
        )
    if key is not None and key_id is None:
        key_id = key_id_of(key)
    retired = BACKTEST_DIGEST_KEYS_RETIRED.read(env)
    if key_id is not None and key_id in retired:
        raise SettingsError(
            f"{BACKTEST_DIGEST_KEYS_RETIRED.name}: key id {key_id!r} is given twice"
        )
    return {
        "backtest_digest_key": key,
        "backtest_digest_key_id": key_id,
        "backtest_digest_keys_retired": retired,
        "backtest_deadline_seconds": BACKTEST_DEADLINE_SECONDS.read(env),
        "backtest_max_calls": BACKTEST_MAX_CALLS.read(env),
        "backtest_max_calls_per_day": BACKTEST_MAX_CALLS_PER_DAY.read(env),
    }


__all__ = ["backtest_fields"]
