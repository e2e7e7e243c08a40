"""The hosted offer's settings: identity provider, merchant of record, entitlements.

Each feature is off unless its flag is set (``ECP_IDP_AUTHKIT_ENABLED``, ``ECP_BILLING_ENABLED``,
``ECP_CLOUD_ENTITLEMENTS_ENABLED``). Once one is on, every setting it needs must be present and
valid, or start-up stops with one line naming the first bad setting (spec "Authentication" 8).
Secrets never appear in a ``repr``.
"""

from collections.abc import Mapping
from urllib.parse import urlsplit

import attrs

from ecp_http.settings_values import SettingsError, flag

COOKIE_PASSWORD_MIN = 32
"""The fewest characters ``ECP_IDP_COOKIE_PASSWORD`` may have."""

WORKOS_API = "https://api.workos.com"
PADDLE_API = "https://api.paddle.com"
PADDLE_SANDBOX_API = "https://sandbox-api.paddle.com"


@attrs.frozen(kw_only=True)
class IdentitySettings:
    """The identity provider (WorkOS AuthKit's user-management API, CONTRACT "Hosted offer")."""

    enabled: bool = False
    client_id: str = ""
    api_key: str = attrs.field(default="", repr=False)
    redirect_uri: str = ""
    cookie_password: str = attrs.field(default="", repr=False)
    browser_origin: str = ""
    base_url: str = WORKOS_API
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
    """Every hosted feature's settings; all off by default (self-hosting)."""

    identity: IdentitySettings = attrs.field(factory=IdentitySettings)
    billing: BillingSettings = attrs.field(factory=BillingSettings)
    entitlements_enabled: bool = False
    """Whether quotas are enforced (``ECP_CLOUD_ENTITLEMENTS_ENABLED``; off for self-hosting)."""

    @property
    def any_enabled(self) -> bool:
        """Whether identity, billing or entitlements is on (the server is a hosted offer)."""
        return self.identity.enabled or self.billing.enabled or self.entitlements_enabled


def _required(env: Mapping[str, str], name: str) -> str:
    value = (env.get(name) or "").strip()
    if not value:
        raise SettingsError(f"{name} is required when its hosted feature is enabled")
    return value


def _url(env: Mapping[str, str], name: str, default: str, *, https: bool) -> str:
    """An absolute http(s) URL without a trailing slash; ``https`` refuses plain http."""
    value = (env.get(name) or default).strip().rstrip("/")
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SettingsError(f"{name} must be an absolute http(s) URL, not {value!r}")
    if https and parts.scheme != "https":
        raise SettingsError(f"{name} must use https (or set ECP_CLOUD_ALLOW_INSECURE_COOKIES)")
    return value


def _identity(env: Mapping[str, str]) -> IdentitySettings:
    if not flag(env, "ECP_IDP_AUTHKIT_ENABLED", default=False):
        return IdentitySettings()
    insecure = flag(env, "ECP_CLOUD_ALLOW_INSECURE_COOKIES", default=False)
    password = _required(env, "ECP_IDP_COOKIE_PASSWORD")
    if len(password) < COOKIE_PASSWORD_MIN:
        raise SettingsError(
            f"ECP_IDP_COOKIE_PASSWORD must have at least {COOKIE_PASSWORD_MIN} characters"
        )
    _required(env, "ECP_IDP_REDIRECT_URI")
    _required(env, "ECP_CLOUD_BROWSER_ORIGIN")
    return IdentitySettings(
        enabled=True,
        client_id=_required(env, "ECP_IDP_CLIENT_ID"),
        api_key=_required(env, "ECP_IDP_API_KEY"),
        redirect_uri=_url(env, "ECP_IDP_REDIRECT_URI", "", https=not insecure),
        cookie_password=password,
        browser_origin=_url(env, "ECP_CLOUD_BROWSER_ORIGIN", "", https=not insecure),
        base_url=_url(env, "ECP_IDP_BASE_URL", WORKOS_API, https=False),
        allow_insecure_cookies=insecure,
    )


def _billing(env: Mapping[str, str]) -> BillingSettings:
    if not flag(env, "ECP_BILLING_ENABLED", default=False):
        return BillingSettings()
    sandbox = flag(env, "ECP_BILLING_SANDBOX", default=False)
    default = PADDLE_SANDBOX_API if sandbox else PADDLE_API
    return BillingSettings(
        enabled=True,
        api_key=_required(env, "ECP_BILLING_API_KEY"),
        webhook_secret=_required(env, "ECP_BILLING_WEBHOOK_SECRET"),
        sandbox=sandbox,
        solo_price_id=_required(env, "ECP_BILLING_SOLO_PRICE_ID"),
        base_url=_url(env, "ECP_BILLING_BASE_URL", default, https=False),
    )


def hosted_settings(env: Mapping[str, str]) -> HostedSettings:
    """Read the hosted settings; SettingsError names the first invalid one of an enabled feature."""
    return HostedSettings(
        identity=_identity(env),
        billing=_billing(env),
        entitlements_enabled=flag(env, "ECP_CLOUD_ENTITLEMENTS_ENABLED", default=False),
    )


__all__ = [
    "BillingSettings",
    "HostedSettings",
    "IdentitySettings",
    "hosted_settings",
]
