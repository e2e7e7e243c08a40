"""The Merchant port over Paddle Billing's API (httpx) and its signed webhooks.

A checkout is a Paddle transaction for the Solo price with ``custom_data.tenant_id``; its
``checkout.url`` is where the browser goes. The portal is a customer-portal session; its
``urls.general.overview`` is the hand-off. Transport failures, error answers and answers without
the URL all become MerchantUnavailable, with one line that never names the API key.
"""

from collections.abc import Mapping
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from ecp_billing.events import normalized
from ecp_billing.signature import SIGNATURE_HEADER, verify
from ecp_core.billing.events import MerchantEvent
from ecp_core.errors import MerchantUnavailable

TIMEOUT_SECONDS = 10.0
"""How long one call to the merchant's API may take."""

MAX_URL = 2048
"""The longest hand-off URL passed on."""


def _dig(answer: Any, *path: str) -> str | None:  # noqa: ANN401 - JSON
    for step in path:
        if not isinstance(answer, dict):
            return None
        answer = answer.get(step)
    return answer if isinstance(answer, str) and answer else None


class PaddleMerchant:
    """Paddle Billing behind the core's Merchant port."""

    def __init__(
        self,
        *,
        base_url: str,
        api_key: str,
        webhook_secret: str,
        timeout: float = TIMEOUT_SECONDS,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        """Speak to the API at ``base_url`` with ``api_key``; verify webhooks with the secret."""
        self._base_url = base_url.rstrip("/")
        self._api_key = api_key
        self._webhook_secret = webhook_secret
        self._timeout = timeout
        self._transport = transport

    def event(self, headers: Mapping[str, str], body: bytes, now: datetime) -> MerchantEvent | None:
        """The subscription event in a webhook whose ``Paddle-Signature`` verifies at ``now``."""
        verify(self._webhook_secret, headers.get(SIGNATURE_HEADER), body, now)
        return normalized(body)

    def checkout(self, tenant_id: str, price_id: str, customer_id: str | None) -> str:
        """A Paddle transaction for one ``price_id`` carrying the tenant; its checkout URL."""
        request: dict[str, Any] = {
            "items": [{"price_id": price_id, "quantity": 1}],
            "custom_data": {"tenant_id": tenant_id},
            "collection_mode": "automatic",
        }
        if customer_id is not None:
            request["customer_id"] = customer_id
        answer = self._post("/transactions", request)
        return self._url(answer, "data", "checkout", "url")

    def portal(self, customer_id: str, subscription_id: str | None) -> str:
        """A customer-portal session for ``customer_id``; its overview URL."""
        request = {"subscription_ids": [subscription_id] if subscription_id else []}
        answer = self._post(f"/customers/{quote(customer_id, safe='')}/portal-sessions", request)
        return self._url(answer, "data", "urls", "general", "overview")

    def _post(self, path: str, request: dict[str, Any]) -> Any:  # noqa: ANN401 - JSON
        try:
            with httpx.Client(timeout=self._timeout, transport=self._transport) as client:
                answer = client.post(
                    self._base_url + path,
                    json=request,
                    headers={"Authorization": f"Bearer {self._api_key}"},
                )
        except httpx.HTTPError as exc:
            raise MerchantUnavailable(
                f"the merchant could not be reached: {type(exc).__name__}"
            ) from exc
        if not answer.is_success:
            raise MerchantUnavailable(f"the merchant answered {path} with {answer.status_code}")
        try:
            return answer.json()
        except ValueError as exc:
            raise MerchantUnavailable(f"the merchant answered {path} without JSON") from exc

    @staticmethod
    def _url(answer: Any, *path: str) -> str:  # noqa: ANN401 - JSON
        url = _dig(answer, *path)
        if url is None or len(url) > MAX_URL or not url.startswith(("https://", "http://")):
            raise MerchantUnavailable(f"the merchant's answer has no {'.'.join(path[1:])}")
        return url


__all__ = ["TIMEOUT_SECONDS", "PaddleMerchant"]
