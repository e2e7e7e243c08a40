"""Hosted settings (spec "Authentication" 8, 9): off by default; once a feature is on, every
setting it needs is checked at start and the first bad one is named in one line."""

import pytest

from ecp_http.config.settings import Settings, SettingsError
from ecp_http.startup.secrets import development_token

pytestmark = pytest.mark.unit

SECRET = "j" * 40
IDENTITY = {
    "ECP_IDP_AUTHKIT_ENABLED": "true",
    "ECP_IDP_CLIENT_ID": "client_1",
    "ECP_IDP_API_KEY": "sk_live_1",
    "ECP_IDP_REDIRECT_URI": "https://ecp.example/v1/cloud/auth/callback",
    "ECP_IDP_COOKIE_PASSWORD": "c" * 32,
    "ECP_CLOUD_BROWSER_ORIGIN": "https://ecp.example",
}
BILLING = {
    "ECP_BILLING_ENABLED": "true",
    "ECP_BILLING_API_KEY": "pdl_live_1",
    "ECP_BILLING_WEBHOOK_SECRET": "whsec_1",
    "ECP_BILLING_SOLO_PRICE_ID": "pri_1",
}


@pytest.mark.spec("§5 entitlements-off-self-hosted")
def test_every_hosted_feature_is_off_by_default():
    settings = Settings.from_mapping({})
    assert not settings.hosted.any_feature_enabled
    assert not settings.hosted.entitlements_enabled
    assert not settings.hosted.enabled


@pytest.mark.spec("§5 hosted-settings")
def test_valid_hosted_settings_are_read_and_secrets_never_shown():
    settings = Settings.from_mapping({"ECP_JWT_SECRET": SECRET, **IDENTITY, **BILLING})
    identity, billing = settings.hosted.identity, settings.hosted.billing
    assert identity.enabled and billing.enabled
    assert settings.hosted.enabled
    assert (identity.client_id, billing.solo_price_id) == ("client_1", "pri_1")
    assert identity.base_url == "https://api.workos.com"
    assert billing.base_url == "https://api.paddle.com"
    shown = repr(settings.hosted)
    for secret in ("sk_live_1", "c" * 32, "pdl_live_1", "whsec_1"):
        assert secret not in shown
    sandbox = Settings.from_mapping(
        {"ECP_JWT_SECRET": SECRET, **BILLING, "ECP_BILLING_SANDBOX": "true"}
    )
    assert sandbox.hosted.billing.base_url == "https://sandbox-api.paddle.com"


@pytest.mark.spec("§5 hosted-settings")
@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"ECP_IDP_CLIENT_ID": ""}, "ECP_IDP_CLIENT_ID"),
        ({"ECP_IDP_API_KEY": " "}, "ECP_IDP_API_KEY"),
        ({"ECP_IDP_COOKIE_PASSWORD": "c" * 31}, "ECP_IDP_COOKIE_PASSWORD"),
        ({"ECP_IDP_REDIRECT_URI": "http://ecp.example/cb"}, "ECP_IDP_REDIRECT_URI"),
        ({"ECP_IDP_REDIRECT_URI": "not a url"}, "ECP_IDP_REDIRECT_URI"),
        ({"ECP_CLOUD_BROWSER_ORIGIN": ""}, "ECP_CLOUD_BROWSER_ORIGIN"),
        ({"ECP_IDP_BASE_URL": "ftp://idp"}, "ECP_IDP_BASE_URL"),
        ({"ECP_BILLING_API_KEY": ""}, "ECP_BILLING_API_KEY"),
        ({"ECP_BILLING_WEBHOOK_SECRET": ""}, "ECP_BILLING_WEBHOOK_SECRET"),
        ({"ECP_BILLING_SOLO_PRICE_ID": ""}, "ECP_BILLING_SOLO_PRICE_ID"),
        ({"ECP_BILLING_SANDBOX": "maybe"}, "ECP_BILLING_SANDBOX"),
        ({"ECP_CLOUD_ENTITLEMENTS_ENABLED": "sure"}, "ECP_CLOUD_ENTITLEMENTS_ENABLED"),
        ({"ECP_JWT_SECRET": ""}, "ECP_JWT_SECRET"),
    ],
)
def test_a_bad_setting_of_an_enabled_feature_refuses_start_naming_it(change, named):
    env = {"ECP_JWT_SECRET": SECRET, **IDENTITY, **BILLING, **change}
    with pytest.raises(SettingsError, match=named) as refused:
        Settings.from_mapping(env)
    assert "\n" not in str(refused.value)


def test_plain_http_is_allowed_only_with_insecure_cookies_for_loopback_tests():
    env = {
        "ECP_JWT_SECRET": SECRET,
        **IDENTITY,
        "ECP_IDP_REDIRECT_URI": "http://127.0.0.1:8000/v1/cloud/auth/callback",
        "ECP_CLOUD_BROWSER_ORIGIN": "http://127.0.0.1:8000",
        "ECP_CLOUD_ALLOW_INSECURE_COOKIES": "true",
    }
    assert Settings.from_mapping(env).hosted.identity.allow_insecure_cookies


def test_settings_of_a_disabled_feature_are_not_checked():
    env = {"ECP_IDP_COOKIE_PASSWORD": "short", "ECP_BILLING_API_KEY": ""}
    assert not Settings.from_mapping(env).hosted.any_feature_enabled


@pytest.mark.spec("§5 hosted-settings", "C2 dev-token")
def test_the_development_token_issuer_is_off_once_a_hosted_feature_is_on():
    settings = Settings.from_mapping(
        {"ECP_JWT_SECRET": SECRET, "ECP_CLOUD_ENTITLEMENTS_ENABLED": "true"}
    )
    with pytest.raises(SettingsError, match="hosted"):
        development_token(settings, tenant="t", roles=["admin"], ttl_seconds=60, subject="s")


@pytest.mark.spec("§8 cookie-password")
@pytest.mark.parametrize("length", [0, 1, 31, 32, 33, 64])
def test_the_cookie_password_has_at_least_32_characters(length):
    env = {"ECP_JWT_SECRET": SECRET, **IDENTITY, "ECP_IDP_COOKIE_PASSWORD": "c" * length}
    if length >= 32:
        assert Settings.from_mapping(env).hosted.identity is not None
    else:
        with pytest.raises(SettingsError, match="ECP_IDP_COOKIE_PASSWORD"):
            Settings.from_mapping(env)
