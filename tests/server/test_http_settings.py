"""Settings come from an injected mapping; invalid ones name themselves; secrets are kept."""

import base64
import pathlib
import stat

import pytest

from ecp_core.errors import Unauthenticated
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.openapi.settings_doc import settings_table
from ecp_http.server.auth import Authenticator, mint_token
from ecp_http.startup.secrets import with_development_secrets

pytestmark = pytest.mark.unit


def test_defaults():
    settings = Settings.from_mapping({})
    assert (settings.host, settings.port, settings.hosted.enabled, settings.database_url) == (
        "127.0.0.1",
        8000,
        False,
        None,
    )
    assert str(settings.data_dir) == ".ecp"


def test_values_are_read():
    settings = Settings.from_mapping(
        {
            "ECP_PORT": "9000",
            "ECP_HOSTED": "true",
            "ECP_DATABASE_URL": "postgresql://h/db",
            "ECP_DISPATCH_WORKERS": "4",
            "ECP_JWT_SECRET": "s" * 32,
        }
    )
    assert (settings.port, settings.hosted.enabled, settings.dispatch_workers) == (9000, True, 4)


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({"ECP_PORT": "eighty"}, "ECP_PORT"),
        ({"ECP_PORT": "70000"}, "ECP_PORT"),
        ({"ECP_HOSTED": "maybe"}, "ECP_HOSTED"),
        ({"ECP_DISPATCH_WORKERS": "0"}, "ECP_DISPATCH_WORKERS"),
        ({"ECP_AUDIT_VERIFY_CONNECTIONS": "0"}, "ECP_AUDIT_VERIFY_CONNECTIONS"),
        ({"ECP_DISPATCH_POLL_SECONDS": "-1"}, "ECP_DISPATCH_POLL_SECONDS"),
        ({"ECP_JWT_SECRET": "short"}, "ECP_JWT_SECRET"),
    ],
)
def test_invalid_settings_name_the_setting(env, named):
    with pytest.raises(SettingsError, match=named):
        Settings.from_mapping(env)


def test_development_secrets_are_generated_once_and_private(tmp_path):
    settings = Settings.from_mapping({"ECP_DATA_DIR": str(tmp_path)})
    first, notes = with_development_secrets(settings)
    assert [note.split()[0] for note in notes] == ["generated", "generated"]
    assert len(base64.b64decode(first.audit_signing_key)) == 32
    for name in ("jwt-secret", "audit-signing-key"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600
    again, notes = with_development_secrets(settings)
    assert (again.jwt_secret, again.audit_signing_key) == (
        first.jwt_secret,
        first.audit_signing_key,
    )
    assert [note.split()[0] for note in notes] == ["using", "using"]


@pytest.mark.spec("§5 hosted-settings")
def test_hosted_mode_refuses_generated_secrets(tmp_path):
    settings = Settings.from_mapping({"ECP_DATA_DIR": str(tmp_path), "ECP_HOSTED": "1"})
    with pytest.raises(SettingsError, match="ECP_JWT_SECRET, ECP_AUDIT_SIGNING_KEY"):
        with_development_secrets(settings)
    assert not (tmp_path / "jwt-secret").exists()


@pytest.mark.spec("C2 dev-token", "C2 bearer-jwt", "§5 unknown-role-slug")
def test_tokens_round_trip_and_refuse_unknown_roles():
    secret = "k" * 32
    actor = Authenticator(secret).verify_token(
        mint_token(secret, tenant="t", roles=["approver"], subject="ana")
    )
    assert (actor.subject, actor.tenant_id, [r.value for r in actor.roles]) == (
        "ana",
        "t",
        ["approver"],
    )
    with pytest.raises(Unauthenticated):
        mint_token(secret, tenant="t", roles=["superuser"])
    with pytest.raises(Unauthenticated):
        Authenticator("other" * 8).verify_token(mint_token(secret, tenant="t", roles=["admin"]))
    with pytest.raises(Unauthenticated):
        Authenticator(secret).verify_token(
            mint_token(secret, tenant="t", roles=["admin"], ttl_seconds=-10)
        )


@pytest.mark.parametrize("document", ["operations", "hosted"])
def test_each_documents_settings_table_is_rendered_from_the_declarations(document):
    """docs/operations.md and docs/hosted.md hold the tables ``ecp_http.openapi.settings_doc`` renders."""
    table = settings_table(document)
    doc = (pathlib.Path(__file__).parents[2] / "docs" / f"{document}.md").read_text()
    assert table in doc, f"replace the table of docs/{document}.md with:\n{table}"
