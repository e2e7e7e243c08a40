"""ApiKeyRepository: the kit's suite on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.api_keys import ApiKeyRepositoryConformance

pytestmark = pytest.mark.contract


class TestApiKeyRepository(OnEveryStore, ApiKeyRepositoryConformance):
    pass
