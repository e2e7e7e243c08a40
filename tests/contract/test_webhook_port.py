"""Webhook repository: the kit's suite on memory and PostgreSQL."""

from tests.contract.stores import OnEveryStore

from ecp_core.testing.conformance.webhooks import WebhookRepositoryConformance


class TestWebhookRepository(OnEveryStore, WebhookRepositoryConformance):
    pass
