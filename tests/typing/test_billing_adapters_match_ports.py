"""The billing adapters are their ports: a drift between them fails type-checking.

``mypy --strict`` checks this module, like ``test_adapters_match_ports``; pytest only imports it.
"""

from ecp_billing import PaddleMerchant
from ecp_core.memory.billing import MemoryMerchantEvents, MemorySubscriptions
from ecp_core.ports.billing import Merchant, MerchantEventRepository, SubscriptionRepository
from ecp_postgres.billing import PostgresMerchantEvents, PostgresSubscriptions


def memory_subscriptions(x: MemorySubscriptions) -> SubscriptionRepository:
    """MemorySubscriptions is a SubscriptionRepository."""
    return x


def memory_merchant_events(x: MemoryMerchantEvents) -> MerchantEventRepository:
    """MemoryMerchantEvents is a MerchantEventRepository."""
    return x


def postgres_subscriptions(x: PostgresSubscriptions) -> SubscriptionRepository:
    """PostgresSubscriptions is a SubscriptionRepository."""
    return x


def postgres_merchant_events(x: PostgresMerchantEvents) -> MerchantEventRepository:
    """PostgresMerchantEvents is a MerchantEventRepository."""
    return x


def paddle_merchant(x: PaddleMerchant) -> Merchant:
    """PaddleMerchant is a Merchant."""
    return x
