"""``ecp dev-cloud``: the hosted offer on this machine, with loopback stand-ins for its providers.

It starts the stand-in identity provider (``ecp_idp.standin``) and the stand-in merchant
(``ecp_billing.standin``) on loopback ports, then serves ECP (the embedded PostgreSQL unless
``ECP_DATABASE_URL`` is set) with identity, billing and entitlements on and pointed at them, over
plain HTTP (``ECP_CLOUD_ALLOW_INSECURE_COOKIES``). Open the printed address in a browser: log in
(as the stand-in's admin of one organization), see the key once, subscribe with the stand-in's
"Pay" button. Only for trying the offer and for ``docs/hosted.md``; never for production.
"""

import argparse
import secrets
import sys

import attrs

from ecp_billing.standin import StandinMerchant
from ecp_http.config.hosted import BillingSettings, HostedSettings, IdentitySettings
from ecp_http.config.settings import Settings
from ecp_http.startup.secrets import with_development_secrets
from ecp_http.startup.serve import serve
from ecp_idp.standin import StandinIdentityProvider

SOLO_PRICE = "pri_dev_solo"
CLIENT_ID = "client_dev_cloud"
WEBHOOK_PATH = "/v1/cloud/billing/merchant/webhook"


def hosted_locally(settings: Settings, origin: str, idp_url: str, merchant_url: str) -> Settings:
    """``settings`` with every hosted feature on, against the stand-ins, served at ``origin``."""
    return attrs.evolve(
        settings,
        hosted=HostedSettings(
            enabled=True,  # no development token is printed or minted
            identity=IdentitySettings(
                enabled=True,
                client_id=CLIENT_ID,
                api_key="sk_dev_" + secrets.token_urlsafe(16),
                redirect_uri=origin + "/v1/cloud/auth/callback",
                cookie_password=secrets.token_urlsafe(32),
                browser_origin=origin,
                base_url=idp_url,
                allow_insecure_cookies=True,
            ),
            billing=BillingSettings(
                enabled=True,
                api_key="pdl_dev_" + secrets.token_urlsafe(16),
                webhook_secret=secrets.token_urlsafe(24),
                sandbox=True,
                solo_price_id=SOLO_PRICE,
                base_url=merchant_url,
            ),
            entitlements_enabled=True,
        ),
    )


def introduce(
    settings: Settings, idp: StandinIdentityProvider, merchant: StandinMerchant, origin: str
) -> None:
    """Give the stand-ins the keys ``settings`` use and the webhook of the server at ``origin``."""
    idp.api_key = settings.hosted.identity.api_key
    merchant.api_key = settings.hosted.billing.api_key
    merchant.webhook_secret = settings.hosted.billing.webhook_secret
    merchant.webhook_url = origin + WEBHOOK_PATH


def run(args: argparse.Namespace, settings: Settings) -> int:
    """Start both stand-ins, then serve the hosted offer until stopped."""
    port = settings.port if args.port is None else args.port
    origin = f"http://127.0.0.1:{port}"
    # The development secrets of the data directory, as `ecp serve` uses them (hosted mode
    # would refuse to make them).
    served, notes = with_development_secrets(attrs.evolve(settings, host="127.0.0.1", port=port))
    unset = ""  # each stand-in learns its key once the settings are made
    with (
        StandinIdentityProvider(client_id=CLIENT_ID, api_key=unset) as idp,
        StandinMerchant(api_key=unset, webhook_secret=unset) as merchant,
    ):
        hosted = hosted_locally(served, origin, idp.url, merchant.url)
        introduce(hosted, idp, merchant, origin)
        sys.stdout.write(
            "".join(note + "\n" for note in notes)
            + f"stand-in identity provider at {idp.url}; stand-in merchant at {merchant.url}\n"
            f"open {origin}/ in a browser to try the hosted offer\n"
        )
        sys.stdout.flush()
        return serve(hosted)


__all__ = ["CLIENT_ID", "SOLO_PRICE", "hosted_locally", "introduce", "run"]
