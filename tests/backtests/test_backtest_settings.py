"""The backtest settings: digest keys current and retired, the deadline, the self-hosting caps."""

import pytest

from ecp_http.config.settings import Settings, SettingsError

pytestmark = pytest.mark.unit

KEY = "k" * 32


def test_defaults_leave_backtests_off_with_a_ten_minute_deadline():
    settings = Settings.from_mapping({})
    assert settings.backtest_digest_key is None
    assert settings.backtest_deadline_seconds == 600
    assert (settings.backtest_max_calls, settings.backtest_max_calls_per_day) == (None, None)


def test_keys_are_read_with_their_ids_and_never_shown():
    settings = Settings.from_mapping(
        {
            "ECP_BACKTEST_DIGEST_KEY": KEY,
            "ECP_BACKTEST_DIGEST_KEY_ID": "2026-10",
            "ECP_BACKTEST_DIGEST_KEYS_RETIRED": f"2026-09:{'o' * 32}, 2026-08:{'p' * 40}",
            "ECP_BACKTEST_MAX_CALLS_PER_DAY": "200",
        }
    )
    assert settings.backtest_digest_key_id == "2026-10"
    assert list(settings.backtest_digest_keys_retired) == ["2026-09", "2026-08"]
    assert settings.backtest_max_calls_per_day == 200
    assert KEY not in repr(settings)
    assert "o" * 32 not in repr(settings)
    derived = Settings.from_mapping({"ECP_BACKTEST_DIGEST_KEY": KEY}).backtest_digest_key_id
    assert derived.startswith("k-")


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ECP_BACKTEST_DIGEST_KEY": "short"}, "ECP_BACKTEST_DIGEST_KEY"),
        ({"ECP_BACKTEST_DIGEST_KEY_ID": "x"}, "ECP_BACKTEST_DIGEST_KEY_ID"),
        ({"ECP_BACKTEST_DIGEST_KEY": KEY, "ECP_BACKTEST_DIGEST_KEY_ID": "a b"}, "KEY_ID"),
        ({"ECP_BACKTEST_DIGEST_KEYS_RETIRED": "nokey"}, "ECP_BACKTEST_DIGEST_KEYS_RETIRED"),
        ({"ECP_BACKTEST_DIGEST_KEYS_RETIRED": "old:short"}, "ECP_BACKTEST_DIGEST_KEYS_RETIRED"),
        (
            {"ECP_BACKTEST_DIGEST_KEYS_RETIRED": f"a:{KEY},a:{KEY}"},
            "ECP_BACKTEST_DIGEST_KEYS_RETIRED",
        ),
        (
            {
                "ECP_BACKTEST_DIGEST_KEY": KEY,
                "ECP_BACKTEST_DIGEST_KEY_ID": "a",
                "ECP_BACKTEST_DIGEST_KEYS_RETIRED": f"a:{KEY}",
            },
            "ECP_BACKTEST_DIGEST_KEYS_RETIRED",
        ),
        ({"ECP_BACKTEST_DEADLINE_SECONDS": "0"}, "ECP_BACKTEST_DEADLINE_SECONDS"),
        ({"ECP_BACKTEST_MAX_CALLS": "3"}, "ECP_BACKTEST_MAX_CALLS"),
    ],
)
def test_invalid_settings_name_the_setting(env, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_mapping(env)
