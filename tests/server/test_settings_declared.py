"""Each setting is declared once and read once; only the declarations name a variable; the core's
error messages name none (ADR 0072)."""

import ast
import importlib
import pathlib
import pkgutil
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from ecp_core.errors import Configurable
from ecp_http.config import table as settings_table
from ecp_http.config.settings import Settings
from ecp_http.config.table import SETTINGS
from ecp_http.config.terms import SETTINGS_OF
from ecp_http.config.values import Setting, SettingFamily

pytestmark = pytest.mark.unit

ROOT = pathlib.Path(__file__).parents[2]
TABLE = pathlib.Path(settings_table.__file__).parent
"""The table: the package ``ecp_http.config.table``, every module under it."""
VARIABLE = re.compile(r"(ECP|OTEL|SERVICE_RETENTION)_[A-Z0-9_]*")
"""A string that is nothing but a variable's name (or a family's prefix)."""


def _sources(under: str = "packages") -> Iterator[pathlib.Path]:
    yield from sorted((ROOT / under).glob("*/src/**/*.py"))


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring nodes (modules, classes, functions, attributes)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for statement in body:
            if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
                found.add(id(statement.value))
    return found


def _outside_the_table(path: pathlib.Path) -> bool:
    return not path.is_relative_to(TABLE)


def _declared_in_the_table() -> list[Setting[Any] | SettingFamily]:
    """Each setting the package or one of its modules holds, once (whichever module holds it)."""
    modules = [settings_table] + [
        importlib.import_module(f"{settings_table.__name__}.{module.name}")
        for module in pkgutil.iter_modules(settings_table.__path__)
    ]
    held = {
        id(value): value
        for module in modules
        for value in vars(module).values()
        if isinstance(value, Setting | SettingFamily)
    }
    return list(held.values())


def _literals(path: pathlib.Path) -> Iterator[tuple[int, str]]:
    """Each string literal of the module (f-string parts too) but its docstrings: line, text."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        is_text = isinstance(node, ast.Constant) and isinstance(node.value, str)
        if is_text and id(node) not in docstrings:
            yield node.lineno, node.value


def test_every_setting_is_declared_once_in_the_table():
    names = [setting.name for setting in SETTINGS]
    assert [name for name, count in Counter(names).items() if count > 1] == []
    declared = _declared_in_the_table()
    assert sorted(setting.name for setting in declared) == sorted(names)


def test_no_module_but_the_table_declares_a_setting():
    elsewhere = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _sources()
        if _outside_the_table(path)
        for node in ast.walk(ast.parse(path.read_text(), str(path)))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", None) in ("Setting", "SettingFamily")
    ]
    assert elsewhere == []


def test_no_module_but_the_table_names_a_variable_to_read():
    """A literal that is a variable's name (a mapping key) appears only in the declarations."""
    named = [
        f"{path.relative_to(ROOT)}:{line}: {text}"
        for path in _sources()
        if _outside_the_table(path)
        for line, text in _literals(path)
        if VARIABLE.fullmatch(text)
    ]
    assert named == []


class _Counted(Mapping[str, str]):
    """An environment that counts each variable read, and each pass over all of them."""

    def __init__(self, values: dict[str, str]) -> None:
        self._values = values
        self.reads: Counter[str] = Counter()
        self.passes = 0

    def __getitem__(self, key: str) -> str:
        self.reads[key] += 1
        return self._values[key]

    def get(self, key, default=None):
        self.reads[key] += 1
        return self._values.get(key, default)

    def __iter__(self) -> Iterator[str]:
        self.passes += 1
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def items(self):
        self.passes += 1
        return self._values.items()


def _everything_set(tmp_path: pathlib.Path) -> dict[str, str]:
    (tmp_path / "catalog.toml").write_text(
        '[models."fast"]\nprovider = "openai"\nmodel = "gpt-4o-mini"\n'
        'base_url = "https://api.openai.com/v1/"\nfamily = "openai"\n'
        'input_usd_per_million = "0.15"\noutput_usd_per_million = "0.6"\n'
    )
    (tmp_path / "connectors.toml").write_text("")
    return {
        "ECP_DATABASE_URL": "postgresql://db.internal/ecp",
        "ECP_DATABASE_POOL_TIMEOUT_SECONDS": "3",
        "ECP_DATA_DIR": str(tmp_path),
        "ECP_HOST": "0.0.0.0",  # noqa: S104 - a value read, nothing listens
        "ECP_PORT": "9000",
        "ECP_JWT_SECRET": "j" * 40,
        "ECP_AUDIT_SIGNING_KEY": "a" * 44,
        "ECP_AUDIT_SIGNING_KEY_ID": "k1",
        "ECP_AUDIT_VERIFICATION_KEYS": "",
        "ECP_AUDIT_SIGNING_REQUIRED": "false",
        "ECP_HOSTED": "true",
        "ECP_WORKERS": "2",
        "ECP_DISPATCH_WORKERS": "3",
        "ECP_AUDIT_VERIFY_CONNECTIONS": "2",
        "ECP_DISPATCH_POLL_SECONDS": "0.5",
        "ECP_DISPATCH_NOTIFY": "off",
        "ECP_DISPATCH_MAX_ATTEMPTS": "4",
        "ECP_DISPATCH_BACKOFF_SECONDS": "2",
        "ECP_MAX_WAIT_SECONDS": "30",
        "ECP_MAX_BODY_BYTES": "2048",
        "ECP_MAX_EVIDENCE_BODY_BYTES": "4096",
        "ECP_ESCALATION_INTERVAL_SECONDS": "10",
        "ECP_WEBHOOK_MAX_ATTEMPTS": "6",
        "ECP_WEBHOOK_BACKOFF_BASE_SECONDS": "1",
        "ECP_WEBHOOK_BACKOFF_MAX_SECONDS": "60",
        "ECP_WEBHOOK_TIMEOUT_SECONDS": "5",
        "ECP_WEBHOOK_ALLOW_PRIVATE_TARGETS": "yes",
        "ECP_WEBHOOK_POLL_SECONDS": "0.2",
        "ECP_ACTION_MODULES": "plugins.more:register",
        "ECP_HTTP_ACTION_MAX_BYTES": "100",
        "ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS": "no",
        "ECP_SECRET_STATUS_KEY": "s3cret",
        "ECP_SECRETS_DIR": str(tmp_path),
        "ECP_MODEL_CATALOG": str(tmp_path / "catalog.toml"),
        "ECP_MODEL_CALL_TIMEOUT_SECONDS": "20",
        "ECP_BACKTEST_DIGEST_KEY": "d" * 32,
        "ECP_BACKTEST_DIGEST_KEY_ID": "2026-10",
        "ECP_BACKTEST_DIGEST_KEYS_RETIRED": f"2026-09:{'o' * 32}",
        "ECP_BACKTEST_DEADLINE_SECONDS": "300",
        "ECP_BACKTEST_MAX_CALLS": "40",
        "ECP_BACKTEST_MAX_CALLS_PER_DAY": "400",
        "ECP_CONNECTORS_FILE": str(tmp_path / "connectors.toml"),
        "ECP_CONNECTOR_ALLOW_PRIVATE_TARGETS": "true",
        "ECP_CONNECTOR_TEST_TIMEOUT_SECONDS": "5",
        "ECP_CLOUD_SCHEDULER_ENABLED": "false",
        "ECP_CLOUD_SCHEDULER_INTERVAL_SECONDS": "1",
        "ECP_ARTIFACTS_DIR": str(tmp_path / "artifacts"),
        "ECP_LOG_FORMAT": "json",
        "ECP_LOG_LEVEL": "debug",
        "ECP_METRICS_ENABLED": "true",
        "ECP_METRICS_TOKEN": "m",
        "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "",
        "OTEL_SDK_DISABLED": "false",
        "SERVICE_RETENTION__ENABLED": "true",
        "SERVICE_RETENTION__WORKER_POLL_INTERVAL": "60",
        "SERVICE_RETENTION__DEFAULT_AUDIT_TTL_SECONDS": "86400",
        "SERVICE_RETENTION__DEFAULT_RUN_TTL_SECONDS": "3600",
        "SERVICE_RETENTION__ECON_ERASE_ENABLED": "true",
        "ECP_IDP_AUTHKIT_ENABLED": "true",
        "ECP_IDP_CLIENT_ID": "client_1",
        "ECP_IDP_API_KEY": "sk_1",
        "ECP_IDP_REDIRECT_URI": "https://ecp.example/v1/cloud/auth/callback",
        "ECP_IDP_COOKIE_PASSWORD": "c" * 32,
        "ECP_CLOUD_BROWSER_ORIGIN": "https://ecp.example",
        "ECP_IDP_BASE_URL": "https://idp.example",
        "ECP_BILLING_ENABLED": "true",
        "ECP_BILLING_API_KEY": "pdl_1",
        "ECP_BILLING_WEBHOOK_SECRET": "whsec_1",
        "ECP_BILLING_SOLO_PRICE_ID": "pri_1",
        "ECP_BILLING_SANDBOX": "true",
        "ECP_BILLING_BASE_URL": "https://merchant.example",
        "ECP_CLOUD_ENTITLEMENTS_ENABLED": "true",
        "ECP_CLOUD_ALLOW_INSECURE_COOKIES": "false",
        "UNRELATED": "never read",
    }


def test_the_server_reads_each_of_its_settings_once_and_nothing_else(tmp_path):
    env = _Counted(_everything_set(tmp_path))
    settings = Settings.from_mapping(env)
    server = {
        setting.name
        for setting in SETTINGS
        if isinstance(setting, Setting) and setting.document != "client"
    }
    assert dict(env.reads) == dict.fromkeys(server, 1)
    assert env.passes == 1  # the ECP_SECRET_<NAME> family, in one pass
    assert settings.secrets == {"STATUS_KEY": "s3cret"}
    assert settings.hosted.enabled and settings.hosted.billing.sandbox


@pytest.mark.parametrize("missing", list(Configurable))
def test_the_server_names_its_settings_for_every_piece_the_core_names(missing):
    assert SETTINGS_OF[missing]
    named = set(re.findall(r"[A-Z][A-Z0-9_]+(?:<NAME>)?", SETTINGS_OF[missing]))
    assert named <= {setting.name for setting in SETTINGS}


def test_no_core_error_message_names_a_server_variable():
    """The core speaks its own terms; the server maps them to its settings where it answers."""
    named = [
        f"{path.relative_to(ROOT)}:{line}: {text[:60]}"
        for path in sorted((ROOT / "packages" / "core" / "src").rglob("*.py"))
        for line, text in _literals(path)
        if "ECP_" in text
    ]
    assert named == []
