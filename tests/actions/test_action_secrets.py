"""Action secrets by reference: read from the settings mapping or a directory, never shown."""

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_http.config.action_secrets import (
    MAX_SECRET_FILE_BYTES,
    REDACTED,
    ActionSecrets,
    SecretUnavailable,
    redacted,
)
from ecp_http.config.settings import Settings, SettingsError

pytestmark = pytest.mark.unit

RULE = "C10 http-request-action"
VALUE = "tok-9f8e7d6c5b4a"


@pytest.mark.spec(RULE)
def test_settings_read_secrets_the_cap_and_the_private_flag_from_the_mapping(tmp_path):
    settings = Settings.from_mapping(
        {
            "ECP_SECRET_API_TOKEN": VALUE,
            "ECP_SECRET_EMPTY": "",
            "ECP_SECRET_": "no name",
            "ECP_SECRETS_DIR": str(tmp_path),
            "ECP_HTTP_ACTION_MAX_BYTES": "2048",
            "ECP_HTTP_ACTION_ALLOW_PRIVATE_TARGETS": "true",
        }
    )
    assert dict(settings.secrets) == {"API_TOKEN": VALUE}
    assert settings.secrets_dir == tmp_path
    assert settings.http_action_max_bytes == 2048
    assert settings.http_action_allow_private_targets is True
    assert VALUE not in repr(settings)
    defaults = Settings.from_mapping({})
    assert defaults.http_action_max_bytes == 1024 * 1024
    assert defaults.http_action_allow_private_targets is False
    assert (dict(defaults.secrets), defaults.secrets_dir) == ({}, None)
    with pytest.raises(SettingsError, match="ECP_HTTP_ACTION_MAX_BYTES"):
        Settings.from_mapping({"ECP_HTTP_ACTION_MAX_BYTES": "0"})


@pytest.mark.spec(RULE)
def test_a_setting_wins_over_a_file_and_a_file_loses_its_trailing_line_break(tmp_path):
    (tmp_path / "API_TOKEN").write_text("from-file")
    (tmp_path / "db.password").write_text("pw-in-file\r\n")
    secrets = ActionSecrets({"API_TOKEN": VALUE}, tmp_path)
    assert secrets.value("API_TOKEN") == VALUE
    assert secrets.value("db.password") == "pw-in-file"
    (tmp_path / "db.password").write_text("rotated\n")
    assert secrets.value("db.password") == "rotated"  # read at each use


@pytest.mark.spec(RULE)
def test_missing_empty_large_or_unreadable_secrets_are_named_without_their_value(tmp_path):
    secrets = ActionSecrets({}, tmp_path)
    with pytest.raises(SecretUnavailable, match="ECP_SECRET_NOPE"):
        secrets.value("NOPE")
    with pytest.raises(SecretUnavailable, match="ECP_SECRET_NOPE"):
        ActionSecrets({}, None).value("NOPE")
    (tmp_path / "EMPTY").write_text("\n")
    with pytest.raises(SecretUnavailable, match="empty"):
        secrets.value("EMPTY")
    (tmp_path / "BIG").write_bytes(b"a" * (MAX_SECRET_FILE_BYTES + 1))
    with pytest.raises(SecretUnavailable, match="over"):
        secrets.value("BIG")
    (tmp_path / "LATIN").write_bytes(b"caf\xe9-secret")
    with pytest.raises(SecretUnavailable) as caught:
        secrets.value("LATIN")
    assert "caf" not in str(caught.value)


@pytest.mark.spec(RULE)
@pytest.mark.parametrize("name", ["../outside", ".hidden", "a/b", "-x", "", "x" * 129])
def test_a_name_that_could_be_a_path_is_not_a_secret_name(tmp_path, name):
    inside = tmp_path / "inside"
    inside.mkdir()
    (tmp_path / "outside").write_text(VALUE)
    (inside / ".hidden").write_text(VALUE)
    with pytest.raises(SecretUnavailable, match="not a secret name") as caught:
        ActionSecrets({}, inside).value(name)
    assert VALUE not in str(caught.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_says_why_without_its_value(tmp_path):
    path = tmp_path / "LOCKED"
    path.write_text(VALUE)
    path.chmod(0)
    with pytest.raises(SecretUnavailable, match="cannot be read") as caught:
        ActionSecrets({}, tmp_path).value("LOCKED")
    assert VALUE not in str(caught.value)


@pytest.mark.spec(RULE)
@given(
    parts=st.lists(st.text(max_size=10), min_size=1, max_size=4),
    secrets=st.lists(st.text(alphabet="xyz0123456789-_", min_size=1, max_size=8), max_size=3),
)
def test_redaction_leaves_no_secret_behind(parts, secrets):
    # Secrets share no character with the placeholder, so any left would be a leak.
    assert not set("".join(secrets)) & set(REDACTED)
    text = "".join(
        part + (secrets[i % len(secrets)] if secrets else "") for i, part in enumerate(parts)
    )
    cleaned = redacted(text, secrets)
    for secret in secrets:
        assert secret not in cleaned
