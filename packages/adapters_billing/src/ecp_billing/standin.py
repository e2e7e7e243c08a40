"""A loopback stand-in for Paddle Billing: a real HTTP server for tests and local walkthroughs.

It answers the two API calls the adapter makes (``POST /transactions``, ``POST
/customers/{id}/portal-sessions``, each only with the right bearer key), serves a checkout page
whose "Pay" button completes the checkout, and sends signed subscription events to the server's
webhook, as Paddle does::

    with StandinMerchant(api_key="k", webhook_secret="s", webhook_url=hook) as merchant:
        ...  # ECP_BILLING_BASE_URL=merchant.url
        merchant.send("subscription.canceled", tenant_id="acme", status="canceled", period=None)

Nothing here is used by the server itself.
"""

import html
import json
import re
import threading
import uuid
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import attrs
import httpx

from ecp_billing.signature import signature_header
from ecp_core.wire import format_timestamp

MONTH = timedelta(days=30)
"""The billing period the stand-in gives an active subscription."""

_PORTAL = re.compile(r"^/customers/([^/]+)/portal-sessions$")
_CHECKOUT = re.compile(r"^/checkout/(txn_[0-9a-f]+)(/pay)?$")


def paddle_id(prefix: str) -> str:
    """A Paddle-style id: ``prefix_`` and 26 lowercase hex digits."""
    return f"{prefix}_{uuid.uuid4().hex[:26]}"


def subscription_payload(
    event_type: str,
    *,
    tenant_id: str | None,
    status: str,
    price_ids: tuple[str, ...],
    period: tuple[datetime, datetime] | None,
    occurred_at: datetime,
    subscription_id: str,
    customer_id: str,
    event_id: str | None = None,
) -> dict[str, Any]:
    """A Paddle subscription event as JSON (``tenant_id`` None leaves the custom data out)."""
    billing_period = None
    if period is not None:
        billing_period = {
            "starts_at": format_timestamp(period[0]),
            "ends_at": format_timestamp(period[1]),
        }
    return {
        "event_id": event_id or paddle_id("evt"),
        "event_type": event_type,
        "occurred_at": format_timestamp(occurred_at),
        "notification_id": paddle_id("ntf"),
        "data": {
            "id": subscription_id,
            "status": status,
            "customer_id": customer_id,
            "currency_code": "USD",
            "items": [
                {"status": "active", "quantity": 1, "price": {"id": price}} for price in price_ids
            ],
            "custom_data": None if tenant_id is None else {"tenant_id": tenant_id},
            "current_billing_period": billing_period,
        },
    }


def deliver(
    webhook_url: str, body: bytes, secret: str, *, signed_at: datetime | None = None
) -> httpx.Response:
    """POST ``body`` to ``webhook_url`` signed with ``secret``, as Paddle does."""
    header = signature_header(secret, body, signed_at or datetime.now(UTC))
    headers = {"Content-Type": "application/json", "Paddle-Signature": header}
    return httpx.post(webhook_url, content=body, headers=headers, timeout=10.0)


@attrs.frozen
class Checkout:
    """A checkout the stand-in opened: its transaction and what the server asked for."""

    transaction_id: str
    tenant_id: str
    price_id: str
    customer_id: str


@attrs.define
class StandinMerchant:
    """A loopback Paddle; use as a context manager, then point ``ECP_BILLING_BASE_URL`` at ``url``."""

    api_key: str
    webhook_secret: str
    webhook_url: str | None = None
    """Where signed events go (``send`` and the checkout page's "Pay" button)."""
    url: str = ""
    checkouts: list[Checkout] = attrs.field(factory=list)
    portal_customers: list[str] = attrs.field(factory=list)
    refused: int = 0
    """API calls refused for a wrong or missing bearer key."""
    _server: ThreadingHTTPServer | None = attrs.field(default=None, init=False)

    def __enter__(self) -> Self:
        """Serve on a free loopback port."""
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Stop serving."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def send(
        self,
        event_type: str,
        *,
        tenant_id: str | None,
        status: str,
        price_ids: tuple[str, ...] = (),
        period: tuple[datetime, datetime] | None = None,
        occurred_at: datetime | None = None,
        subscription_id: str = "sub_standin",
        customer_id: str = "ctm_standin",
        event_id: str | None = None,
    ) -> httpx.Response:
        """Send one signed subscription event to ``webhook_url``; the server's answer."""
        assert self.webhook_url is not None, "set webhook_url first"  # noqa: S101
        payload = subscription_payload(
            event_type,
            tenant_id=tenant_id,
            status=status,
            price_ids=price_ids,
            period=period,
            occurred_at=occurred_at or datetime.now(UTC),
            subscription_id=subscription_id,
            customer_id=customer_id,
            event_id=event_id,
        )
        return deliver(self.webhook_url, json.dumps(payload).encode(), self.webhook_secret)

    def complete(self, transaction_id: str) -> httpx.Response:
        """Pay a checkout: ``subscription.activated`` for its tenant and price, a month long."""
        checkout = next(c for c in self.checkouts if c.transaction_id == transaction_id)
        now = datetime.now(UTC)
        return self.send(
            "subscription.activated",
            tenant_id=checkout.tenant_id,
            status="active",
            price_ids=(checkout.price_id,),
            period=(now, now + MONTH),
            occurred_at=now,
            subscription_id="sub_" + transaction_id.removeprefix("txn_"),
            customer_id=checkout.customer_id,
        )

    def open_checkout(self, request: dict[str, Any]) -> str:
        """Record a ``POST /transactions`` body; the new transaction's id."""
        items = request.get("items") or [{}]
        checkout = Checkout(
            transaction_id=paddle_id("txn"),
            tenant_id=str((request.get("custom_data") or {}).get("tenant_id", "")),
            price_id=str(items[0].get("price_id", "")),
            customer_id=str(request.get("customer_id") or paddle_id("ctm")),
        )
        self.checkouts.append(checkout)
        return checkout.transaction_id


def _handler(merchant: StandinMerchant) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``merchant``."""

    class Handler(BaseHTTPRequestHandler):
        def _answer(self, status: int, body: bytes, media: str = "application/json") -> None:
            self.send_response(status)
            self.send_header("Content-Type", media)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _json(self, status: int, value: object) -> None:
            self._answer(status, json.dumps(value).encode())

        def _page(self, text: str) -> None:
            page = f"<!doctype html><title>Stand-in checkout</title><main>{text}</main>"
            self._answer(200, page.encode(), "text/html; charset=utf-8")

        def do_GET(self) -> None:
            found = _CHECKOUT.match(self.path)
            if found is None or found.group(2):
                self._json(404, {"error": {"code": "not_found"}})
                return
            txn = html.escape(found.group(1))
            self._page(
                f"<h1>Solo, 39 USD a month</h1><p>Transaction {txn}</p>"
                f'<form method="post" action="/checkout/{txn}/pay"><button>Pay</button></form>'
            )

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            paid = _CHECKOUT.match(self.path)
            if paid is not None and paid.group(2):
                delivered = merchant.complete(paid.group(1))
                self._page(f"<p>Paid; the service answered {delivered.status_code}.</p>")
            elif self.headers.get("Authorization") != f"Bearer {merchant.api_key}":
                merchant.refused += 1
                self._json(403, {"error": {"code": "forbidden"}})
            else:
                status, answer = _api(merchant, self.path, body)
                self._json(status, answer)

        def log_message(self, *_: object) -> None:
            return

    return Handler


def _api(merchant: StandinMerchant, path: str, body: bytes) -> tuple[int, object]:
    """The stand-in's answer to an authorized API call."""
    if path == "/transactions":
        txn = merchant.open_checkout(json.loads(body or b"{}"))
        return 201, {"data": {"id": txn, "checkout": {"url": f"{merchant.url}/checkout/{txn}"}}}
    portal = _PORTAL.match(path)
    if portal is None:
        return 404, {"error": {"code": "not_found"}}
    merchant.portal_customers.append(portal.group(1))
    urls = {"general": {"overview": f"{merchant.url}/portal/{portal.group(1)}"}}
    return 201, {"data": {"id": paddle_id("cpls"), "urls": urls}}


__all__ = [
    "MONTH",
    "Checkout",
    "StandinMerchant",
    "deliver",
    "paddle_id",
    "subscription_payload",
]
