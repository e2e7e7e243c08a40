"""The hosted offer end to end, in Debian's headless Chromium against a real server and stand-ins.

Landing page → login at the loopback identity provider → the activation page shows the key once
→ the key works on the API → checkout at the loopback merchant → its signed
``subscription.activated`` → ``/account`` shows Solo → a backtest is accepted → a signed cancel
→ a new backtest gets 402. Every page of ours is saved at 390 and 1280 px
(``test-artifacts/screens/``) and must not scroll sideways at either width.
"""

import base64
import itertools
import os
import secrets
from collections.abc import Iterator

import attrs
import httpx
import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait
from tests.support.browser import capture
from tests.support.e2e_server import serving

from ecp_billing.standin import StandinMerchant
from ecp_http.cli.dev_cloud import CLIENT_ID, SOLO_PRICE, hosted_locally, introduce
from ecp_http.config.backtests import backtest_fields
from ecp_http.config.settings import Settings
from ecp_http.outbound.model_calls.standin import StandinModels
from ecp_idp.standin import Login, StandinIdentityProvider
from ecp_postgres import create_database, drop_database

pytestmark = pytest.mark.e2e

_names = itertools.count()
MODELS = ("incumbent-model", "candidate-model", "judge-model")
BACKTEST = {
    "instruction": "Answer with the refund amount only.",
    "cases": [{"input": f"order {n}", "expected": f"{n}.00"} for n in range(5)],
    "incumbent": {"model": "incumbent-model", "max_tokens": 32},
    "candidate": {"model": "candidate-model"},
    "judge": "judge-model",
    "constraints": {"min_success_rate": 0.8},
}


@attrs.frozen
class Hosted:
    """The running hosted server and the stand-ins it talks to."""

    base_url: str
    client: httpx.Client
    idp: StandinIdentityProvider
    merchant: StandinMerchant


@pytest.fixture(scope="module")
def hosted(postgres_url, migrated_template) -> Iterator[Hosted]:
    """A hosted server (identity, billing and entitlements on) on its own database."""
    name = f"ecp_hosted_{os.getpid()}_{next(_names)}"
    database = create_database(postgres_url, name, template=migrated_template)
    base = Settings(
        database_url=database,
        jwt_secret=secrets.token_urlsafe(32),
        audit_signing_key=base64.b64encode(secrets.token_bytes(32)).decode("ascii"),
        dispatch_poll_seconds=0.05,
    )
    idp = StandinIdentityProvider(client_id=CLIENT_ID, api_key="")
    models = StandinModels()
    try:
        with idp, StandinMerchant(api_key="", webhook_secret="") as merchant:

            def settings_for(origin: str) -> Settings:
                hosted = hosted_locally(base, origin, idp.url, merchant.url)
                introduce(hosted, idp, merchant, origin)  # the same wiring as `ecp dev-cloud`
                catalog = {ref: models.entry(ref) for ref in MODELS}
                digest = backtest_fields({"ECP_BACKTEST_DIGEST_KEY": secrets.token_urlsafe(32)})
                return attrs.evolve(hosted, model_catalog=catalog, **digest)

            with models, serving(settings_for) as (base_url, client, _):
                yield Hosted(base_url=base_url, client=client, idp=idp, merchant=merchant)
    finally:
        drop_database(postgres_url, name)


def _until(browser, condition) -> None:
    WebDriverWait(browser, 30).until(lambda _: condition())


@pytest.mark.spec("§4.5 hosted-pages", "§9.1 hosted-activation", "C12 pages-csp")
def test_the_hosted_offer_from_landing_to_cancellation(hosted, browser):
    hosted.idp.next_login = Login(user_id="user_e2e", organization_id="org_e2e", roles=("admin",))
    # The landing page: the Solo offer and a login link, no script.
    browser.get(hosted.base_url + "/")
    assert "39 USD" in browser.page_source
    assert "<script" not in browser.page_source.lower()
    capture(browser, "landing")
    # Login at the provider; the first login lands on the activation page with the key, once.
    browser.find_element(By.LINK_TEXT, "Start the free trial").click()
    _until(browser, lambda: browser.find_elements(By.ID, "api-key"))
    key = browser.find_element(By.ID, "api-key").text.strip()
    assert key
    capture(browser, "activation")
    # The key works on the API (an Analyst key: it reads, it does not administer).
    api = {"X-API-Key": key}
    assert hosted.client.get("/v1/graphs", headers=api).status_code == 200
    assert hosted.client.get("/v1/api-keys", headers=api).status_code == 403
    # The account page: the trial, its meters, the key by fingerprint only.
    browser.get(hosted.base_url + "/account")
    _until(browser, lambda: "Your account" in browser.page_source)
    assert "Trial" in browser.page_source
    assert key not in browser.page_source
    capture(browser, "account-trial")
    # Checkout at the merchant: going there changes nothing; the signed event does.
    browser.find_element(By.XPATH, "//button[normalize-space()='Subscribe to Solo']").click()
    _until(browser, lambda: browser.current_url.startswith(hosted.merchant.url))
    (checkout,) = hosted.merchant.checkouts
    tenant = checkout.tenant_id
    assert checkout.price_id == SOLO_PRICE
    browser.get(hosted.base_url + "/account")
    assert "Trial" in browser.page_source
    browser.get(hosted.merchant.url + f"/checkout/{checkout.transaction_id}")
    browser.find_element(By.XPATH, "//button[normalize-space()='Pay']").click()
    _until(browser, lambda: "the service answered 200" in browser.page_source)
    # /account shows Solo, active, with the portal hand-off for this admin.
    browser.get(hosted.base_url + "/account")
    _until(browser, lambda: "Solo" in browser.page_source)
    assert "active" in browser.page_source
    assert "Manage billing" in browser.page_source
    capture(browser, "account-solo")
    # While Solo is active a backtest is accepted (queued; it runs off the request).
    accepted = hosted.client.post("/v1/backtests", json=BACKTEST, headers=api)
    assert accepted.status_code == 202, accepted.text
    # A signed cancel revokes the entitlement: a new backtest gets 402.
    canceled = hosted.merchant.send(
        "subscription.canceled",
        tenant_id=tenant,
        status="canceled",
        price_ids=(SOLO_PRICE,),
        subscription_id="sub_" + checkout.transaction_id.removeprefix("txn_"),
        customer_id=checkout.customer_id,
    )
    assert canceled.status_code == 200, canceled.text
    other = {**BACKTEST, "instruction": "Answer with the amount, in cents."}
    refused = hosted.client.post("/v1/backtests", json=other, headers=api)
    assert refused.status_code == 402, refused.text
    assert refused.json()["code"] == "subscription_inactive"
    browser.get(hosted.base_url + "/account")
    _until(browser, lambda: "canceled" in browser.page_source)
    capture(browser, "account-canceled")
