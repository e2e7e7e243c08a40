"""SubscriptionRepository and MerchantEventRepository: the kit's suites on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.billing import (
    MerchantEventRepositoryConformance,
    SubscriptionRepositoryConformance,
)

pytestmark = pytest.mark.contract


class TestSubscriptionRepository(OnEveryStore, SubscriptionRepositoryConformance):
    pass


class TestMerchantEventRepository(OnEveryStore, MerchantEventRepositoryConformance):
    pass
