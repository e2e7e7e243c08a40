"""The hosted offer's settings: whether the service is one, identity provider, merchant, quotas.

Each feature is off unless its flag is set (``ECP_IDP_AUTHKIT_ENABLED``, ``ECP_BILLING_ENABLED``,
``ECP_CLOUD_ENTITLEMENTS_ENABLED``). Once one is on, every setting it needs must be present and
valid, or start-up stops with one line naming the first bad setting (spec "Authentication" 8);
the settings of a feature that is off are not read. Secrets never appear in a ``repr``.
"""

from collections.abc import Mapping
from urllib.parse import urlsplit

import attrs

from ecp_http.config.table.hosted import (
    BILLING_API_KEY,
    BILLING_BASE_URL,
    BILLING_ENABLED,
    BILLING_SANDBOX,
    BILLING_SOLO_PRICE_ID,
    BILLING_WEBHOOK_SECRET,
    CLOUD_ALLOW_INSECURE_COOKIES,
    CLOUD_BROWSER_ORIGIN,
    CLOUD_ENTITLEMENTS_ENABLED,
    IDP_API_KEY,
    IDP_AUTHKIT_ENABLED,
    IDP_BASE_URL,
    IDP_CLIENT_ID,
    IDP_COOKIE_PASSWORD,
    IDP_REDIRECT_URI,
    PADDLE_API,
    PADDLE_SANDBOX_API,
)
from ecp_http.config.table.serving import HOSTED
from ecp_http.config.values import Setting, SettingsError


@attrs.frozen(kw_only=True)
class IdentitySettings:
    """The identity provider (WorkOS AuthKit's user-management API, CONTRACT "Hosted offer")."""

    enabled: bool = False
    client_id: str = ""
    api_key: str = attrs.field(default="", repr=False)
    redirect_uri: str = ""
    cookie_password: str = attrs.field(default="", repr=False)
    browser_origin: str = ""
    base_url: str = IDP_BASE_URL.default
    allow_insecure_cookies: bool = False
    """Cookies without ``Secure``: only for loopback tests without HTTPS."""


@attrs.frozen(kw_only=True)
class BillingSettings:
    """The merchant of record (Paddle Billing, CONTRACT "Hosted offer")."""

    enabled: bool = False
    api_key: str = attrs.field(default="", repr=False)
    webhook_secret: str = attrs.field(default="", repr=False)
    sandbox: bool = False
    solo_price_id: str = ""
    base_url: str = PADDLE_API


@attrs.frozen(kw_only=True)
class HostedSettings:
    """The hosted offer: whether the service is one, and every hosted feature's settings.

    All off by default (self-hosting).
    """

    enabled: bool = False
    """The service is a hosted offer (``ECP_HOSTED``, or any hosted feature on): no development
    tokens are minted or printed, and real secrets are required."""
    identity: IdentitySettings = attrs.field(factory=IdentitySettings)
    billing: BillingSettings = attrs.field(factory=BillingSettings)
    entitlements_enabled: bool = False
    """Whether quotas are enforced (off for self-hosting)."""

    @property
    def any_feature_enabled(self) -> bool:
        """Whether identity, billing or entitlements is on."""
        return self.identity.enabled or self.billing.enabled or self.entitlements_enabled


def _https(setting: Setting[str], value: str, *, insecure: bool) -> str:
    """``value`` unless it is plain http and insecure cookies are not allowed."""
    if not insecure and urlsplit(value).scheme != "https":
        raise SettingsError(
            f"{setting.name} must use https (or set {CLOUD_ALLOW_INSECURE_COOKIES.name})"
        )
    return value


def _identity(env: Mapping[str, str], *, insecure: bool) -> IdentitySettings:
    if not IDP_AUTHKIT_ENABLED.read(env):
        return IdentitySettings()
    password = IDP_COOKIE_PASSWORD.read(env)
    redirect_uri = IDP_REDIRECT_URI.read(env)
    browser_origin = CLOUD_BROWSER_ORIGIN.read(env)
    return IdentitySettings(
        enabled=True,
        client_id=IDP_CLIENT_ID.read(env),
        api_key=IDP_API_KEY.read(env),
        redirect_uri=_https(IDP_REDIRECT_URI, redirect_uri, insecure=insecure),
        cookie_password=password,
        browser_origin=_https(CLOUD_BROWSER_ORIGIN, browser_origin, insecure=insecure),
        base_url=IDP_BASE_URL.read(env),
        allow_insecure_cookies=insecure,
    )


def _billing(env: Mapping[str, str]) -> BillingSettings:
    if not BILLING_ENABLED.read(env):
        return BillingSettings()
    sandbox = BILLING_SANDBOX.read(env)
    return BillingSettings(
        enabled=True,
        api_key=BILLING_API_KEY.read(env),
        webhook_secret=BILLING_WEBHOOK_SECRET.read(env),
        sandbox=sandbox,
        solo_price_id=BILLING_SOLO_PRICE_ID.read(env),
        base_url=BILLING_BASE_URL.read(env) or (PADDLE_SANDBOX_API if sandbox else PADDLE_API),
    )


def insecure_cookies(env: Mapping[str, str]) -> bool:
    """``ECP_CLOUD_ALLOW_INSECURE_COOKIES``: the hosted cookies and the console's drop ``Secure``."""
    return CLOUD_ALLOW_INSECURE_COOKIES.read(env)


def hosted_settings(env: Mapping[str, str], *, insecure: bool = False) -> HostedSettings:
    """Read the hosted settings; SettingsError names the first invalid one of an enabled feature.

    ``insecure`` is :func:`insecure_cookies` of ``env``, read once by the caller.
    """
    features = HostedSettings(
        identity=_identity(env, insecure=insecure),
        billing=_billing(env),
        entitlements_enabled=CLOUD_ENTITLEMENTS_ENABLED.read(env),
    )
    return attrs.evolve(features, enabled=HOSTED.read(env) or features.any_feature_enabled)


__all__ = [
    "BillingSettings",
    "HostedSettings",
    "IdentitySettings",
    "hosted_settings",
    "insecure_cookies",
]
