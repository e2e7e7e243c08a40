"""``ecp serve --workers N`` and ``ECP_WORKERS``: how many server processes (ADR 0062)."""

import pickle

import pytest

from ecp_http.cli import main
from ecp_http.config.settings import Settings, SettingsError

pytestmark = pytest.mark.unit


def test_one_process_unless_asked_for_more():
    assert Settings.from_mapping({}).workers == 1
    assert Settings.from_mapping({"ECP_WORKERS": "4"}).workers == 4


@pytest.mark.parametrize("raw", ["0", "-1", "two", "1.5"])
def test_a_bad_worker_count_names_the_setting(raw):
    with pytest.raises(SettingsError, match="ECP_WORKERS"):
        Settings.from_mapping({"ECP_WORKERS": raw})


@pytest.mark.spec("C2 cli-errors")
@pytest.mark.parametrize("count", ["0", "-2", "x"])
def test_a_bad_workers_argument_is_a_usage_error(capsys, count):
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--workers", count], environ={})
    assert exited.value.code == 2
    assert "argument --workers" in capsys.readouterr().err


def test_the_settings_a_worker_is_given_arrive_whole_secrets_included():
    """Workers get the parent's settings pickled over the supervisor's pipe, not the environment."""
    settings = Settings.from_mapping(
        {
            "ECP_DATABASE_URL": "postgresql://db/ecp",
            "ECP_JWT_SECRET": "j" * 40,
            "ECP_WORKERS": "3",
            "ECP_SECRET_CRM": "s3cret",
            "ECP_BACKTEST_DIGEST_KEY": "k" * 40,
        }
    )
    copy = pickle.loads(pickle.dumps(settings))  # noqa: S301 - our own bytes
    assert copy == settings
    assert (copy.secrets, copy.backtest_digest_key, copy.workers) == (
        {"CRM": "s3cret"},
        "k" * 40,
        3,
    )
