"""Webhook repository: the kit's suite on memory and PostgreSQL."""

import pytest
from tests.support.stores import OnEveryStore

from ecp_core.testing.conformance.webhooks import WebhookRepositoryConformance

pytestmark = pytest.mark.contract


class TestWebhookRepository(OnEveryStore, WebhookRepositoryConformance):
    pass
