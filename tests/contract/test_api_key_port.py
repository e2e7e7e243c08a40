"""ApiKeyRepository: the kit's suite on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.api_keys import ApiKeyRepositoryConformance


class TestApiKeyRepository(OnEveryStore, ApiKeyRepositoryConformance):
    pass
