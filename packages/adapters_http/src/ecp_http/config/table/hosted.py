"""The hosted offer: the identity provider, the merchant (billing), the plans' quotas.

Declarations of the one settings table (:mod:`ecp_http.config.table`, ADR 0072).
"""

from ecp_http.config.table.parsers import cookie_password
from ecp_http.config.values import Setting, flag, stripped, url

WORKOS_API = "https://api.workos.com"
PADDLE_API = "https://api.paddle.com"
PADDLE_SANDBOX_API = "https://sandbox-api.paddle.com"

IDP_AUTHKIT_ENABLED: Setting[bool] = Setting(
    name="ECP_IDP_AUTHKIT_ENABLED",
    parse=flag,
    default=False,
    description="`true` turns on login at the identity provider",
    document="hosted",
)

IDP_CLIENT_ID: Setting[str] = Setting(
    name="ECP_IDP_CLIENT_ID",
    parse=stripped,
    default="",
    description="the provider's client id",
    document="hosted",
    needed_by="identity",
)

IDP_API_KEY: Setting[str] = Setting(
    name="ECP_IDP_API_KEY",
    parse=stripped,
    default="",
    description="the provider's API key (client secret)",
    document="hosted",
    needed_by="identity",
)

IDP_REDIRECT_URI: Setting[str] = Setting(
    name="ECP_IDP_REDIRECT_URI",
    parse=url,
    default="",
    description="`https://<your host>/v1/cloud/auth/callback`, registered at the provider",
    document="hosted",
    needed_by="identity",
)

IDP_COOKIE_PASSWORD: Setting[str] = Setting(
    name="ECP_IDP_COOKIE_PASSWORD",
    parse=cookie_password,
    default="",
    description=(
        "at least 32 random characters; the session and login cookies are sealed under keys derived "
        "from it"
    ),
    document="hosted",
    needed_by="identity",
)

CLOUD_BROWSER_ORIGIN: Setting[str] = Setting(
    name="ECP_CLOUD_BROWSER_ORIGIN",
    parse=url,
    default="",
    description="`https://<your host>`, where the pages are served",
    document="hosted",
    needed_by="identity",
)

IDP_BASE_URL: Setting[str] = Setting(
    name="ECP_IDP_BASE_URL",
    parse=url,
    default=WORKOS_API,
    description="the provider's API (default `https://api.workos.com`)",
    document="hosted",
)

BILLING_ENABLED: Setting[bool] = Setting(
    name="ECP_BILLING_ENABLED",
    parse=flag,
    default=False,
    description="`true` turns on checkout and the merchant webhook",
    document="hosted",
)

BILLING_API_KEY: Setting[str] = Setting(
    name="ECP_BILLING_API_KEY",
    parse=stripped,
    default="",
    description="the merchant's API key",
    document="hosted",
    needed_by="billing",
)

BILLING_WEBHOOK_SECRET: Setting[str] = Setting(
    name="ECP_BILLING_WEBHOOK_SECRET",
    parse=stripped,
    default="",
    description="the secret of the webhook destination",
    document="hosted",
    needed_by="billing",
)

BILLING_SOLO_PRICE_ID: Setting[str] = Setting(
    name="ECP_BILLING_SOLO_PRICE_ID",
    parse=stripped,
    default="",
    description="the Solo price",
    document="hosted",
    needed_by="billing",
)

BILLING_SANDBOX: Setting[bool] = Setting(
    name="ECP_BILLING_SANDBOX",
    parse=flag,
    default=False,
    description="`true` uses the merchant's sandbox API",
    document="hosted",
)

BILLING_BASE_URL: Setting[str | None] = Setting(
    name="ECP_BILLING_BASE_URL",
    parse=url,
    default=None,
    description="the merchant's API (default by sandbox or live)",
    document="hosted",
)

CLOUD_ENTITLEMENTS_ENABLED: Setting[bool] = Setting(
    name="ECP_CLOUD_ENTITLEMENTS_ENABLED",
    parse=flag,
    default=False,
    description="`true` enforces the plans' quotas",
    document="hosted",
)

CLOUD_ALLOW_INSECURE_COOKIES: Setting[bool] = Setting(
    name="ECP_CLOUD_ALLOW_INSECURE_COOKIES",
    parse=flag,
    default=False,
    description=(
        "`true` drops `Secure` from the hosted and the console cookies and allows `http` URLs:"
        " loopback tests only"
    ),
    document="hosted",
)
