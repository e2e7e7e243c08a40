"""Merchant-of-record adapter for hosted ECP: Paddle Billing behind the core's Merchant port.

:class:`PaddleMerchant` verifies ``Paddle-Signature`` over the raw webhook body, normalizes
subscription events to :class:`ecp_core.billing.events.MerchantEvent`, and opens checkouts and
customer-portal sessions over httpx. :class:`StandinMerchant` is a loopback Paddle for tests and
local walkthroughs.
"""

from ecp_billing.events import normalized
from ecp_billing.merchant import PaddleMerchant
from ecp_billing.signature import MAX_SKEW, SIGNATURE_HEADER, signature_header, verify
from ecp_billing.standin import StandinMerchant, deliver, subscription_payload

__all__ = [
    "MAX_SKEW",
    "SIGNATURE_HEADER",
    "PaddleMerchant",
    "StandinMerchant",
    "deliver",
    "normalized",
    "signature_header",
    "subscription_payload",
    "verify",
]
