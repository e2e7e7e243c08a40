"""docs/production.md names only settings that exist, and covers what running in production needs.

The names a server or the ``ecp`` command reads are those ``ecp_http.config.table`` declares
(``ECP_SECRET_`` is a prefix: ``ECP_SECRET_<NAME>``); ``tests/server/test_http_settings.py``
checks the other way round, that docs/operations.md documents each of them.
"""

import pathlib
import re

import pytest

from ecp_http.cli import parser
from ecp_http.config.table import SETTINGS
from ecp_http.config.values import SettingFamily

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).parents[2]
DOC = ROOT / "docs" / "production.md"
_NAMED = re.compile(r"\bECP_[A-Z0-9_]+(?:<NAME>)?")


def _read_settings() -> set[str]:
    return {
        setting.prefix if isinstance(setting, SettingFamily) else setting.name
        for setting in SETTINGS
    }


def test_every_setting_the_guide_names_exists():
    real = _read_settings()
    prefixes = {name for name in real if name.endswith("_")}
    assert "ECP_DATABASE_URL" in real
    assert prefixes == {"ECP_SECRET_"}
    named = set(_NAMED.findall(DOC.read_text()))
    assert len(named) >= 15
    unknown = sorted(
        name
        for name in named
        if name not in real
        and not (name.endswith("<NAME>") and name.removesuffix("<NAME>") in prefixes)
    )
    assert unknown == []


def test_the_guide_covers_running_in_production():
    doc = DOC.read_text()
    for needed in (
        "ECP_DATABASE_URL",
        "ECP_DATABASE_POOL_TIMEOUT_SECONDS",
        "ECP_JWT_SECRET",
        "ECP_AUDIT_SIGNING_KEY",
        "ECP_AUDIT_VERIFICATION_KEYS",
        "ECP_METRICS_TOKEN",
        "ECP_LOG_FORMAT=json",
        "X-API-Key",
        "/v1/api-keys",
        "reverse_proxy",  # Caddy
        "proxy_pass",  # nginx
        "ssl_certificate",
        "pg_dump",
        "pg_restore",
        "ECP_ARTIFACTS_DIR",
        "ecp migrate apply",
        "ecp migrate list",
        "ecp migrate rollback",
        "/health/ready",
    ):
        assert needed in doc, needed


@pytest.mark.parametrize(
    "command",
    [
        "ecp serve",
        "ecp migrate apply",
        "ecp migrate list",
        "ecp migrate rollback --count 2",
        "ecp token --tenant acme --role admin --ttl 600",
    ],
)
def test_the_commands_the_guide_shows_parse(command):
    """Each ``ecp`` command line of the guide is one the command line accepts."""
    shown = command.replace("--count 2", "--count N")
    assert f"ecp {shown.removeprefix('ecp ')}" in DOC.read_text()
    parser().parse_args(command.split()[1:])  # exits (SystemExit) on an unknown command or option
