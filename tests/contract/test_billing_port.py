"""SubscriptionRepository and MerchantEventRepository: the kit's suites on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.billing import (
    MerchantEventRepositoryConformance,
    SubscriptionRepositoryConformance,
)


class TestSubscriptionRepository(OnEveryStore, SubscriptionRepositoryConformance):
    pass


class TestMerchantEventRepository(OnEveryStore, MerchantEventRepositoryConformance):
    pass
