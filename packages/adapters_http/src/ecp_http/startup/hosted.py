"""The browser's adapters, built from the settings: the merchant, the identity provider, the console.

Each is None while its feature is off (self-hosting); the composition root
(:mod:`ecp_http.startup.bootstrap`) hands them to the core and the handlers.
"""

from ecp_billing import PaddleMerchant
from ecp_core.billing.service import BillingSetup
from ecp_core.system import SystemClock
from ecp_http.config.settings import Settings, SettingsError
from ecp_http.server.console_sessions import ConsoleSessions
from ecp_http.server.sessions import CloudIdentity, CloudSessions
from ecp_idp import WorkOSAuthKit


def billing_setup(settings: Settings) -> BillingSetup | None:
    """The merchant (Paddle Billing at ``ECP_BILLING_BASE_URL``) and Solo price, when enabled."""
    billing = settings.hosted.billing
    if not billing.enabled:
        return None
    merchant = PaddleMerchant(
        base_url=billing.base_url, api_key=billing.api_key, webhook_secret=billing.webhook_secret
    )
    return BillingSetup(merchant=merchant, solo_price_id=billing.solo_price_id)


def cloud_identity(settings: Settings) -> CloudIdentity | None:
    """WorkOS AuthKit at ``ECP_IDP_BASE_URL`` and the sealed cookies, when identity is enabled."""
    identity = settings.hosted.identity
    if not identity.enabled:
        return None
    provider = WorkOSAuthKit(
        base_url=identity.base_url,
        client_id=identity.client_id,
        api_key=identity.api_key,
        redirect_uri=identity.redirect_uri,
    )
    sessions = CloudSessions(
        identity.cookie_password, secure=not identity.allow_insecure_cookies, clock=SystemClock()
    )
    return CloudIdentity(
        provider=provider,
        sessions=sessions,
        browser_origin=identity.browser_origin,
        close=provider.close,
    )


def console_sessions(settings: Settings) -> ConsoleSessions:
    """The console's sealed sessions, keyed by ``ECP_JWT_SECRET`` (ADR 0080).

    Secure unless insecure cookies are allowed (the console's own setting or hosted identity's).
    """
    if settings.jwt_secret is None:
        raise SettingsError("the console seals its sessions with the JWT secret, which is unset")
    insecure = settings.insecure_cookies or settings.hosted.identity.allow_insecure_cookies
    return ConsoleSessions(
        settings.jwt_secret,
        hours=settings.console_session_hours,
        secure=not insecure,
        clock=SystemClock(),
    )


__all__ = ["billing_setup", "cloud_identity", "console_sessions"]
