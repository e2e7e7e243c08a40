"""When the next webhook delivery is due, on both stores: the quiet delivery sweep sleeps until
then instead of polling (ADR 0099)."""

import pytest
from tests.support.receiver import receiver
from tests.support.stores import OnEveryStore

from ecp_core import CreateDeploymentRequest, Ecp, Ed25519Signer, GraphBuilder, StartRunRequest
from ecp_core.identity import ActorIdentity
from ecp_core.types import AuthMethod
from ecp_core.webhooks import CreateSubscriptionRequest, RetrySchedule
from ecp_core.webhooks.model import WebhookEventType
from ecp_http.outbound.webhook_sender import HttpxSender

pytestmark = pytest.mark.contract

SIGNER = Ed25519Signer(bytes(range(21, 53)), key_id="due")
SLOW = RetrySchedule(max_attempts=5, base_seconds=40.0, max_seconds=80.0)


ADMIN = ActorIdentity(subject="ops", auth_method=AuthMethod.BEARER, tenant_id="t")


def subscribed(uow, url: str) -> Ecp:
    """A deployment of a two-node graph whose run.completed events go to ``url``."""
    ecp = Ecp.build(uow, signer=SIGNER, webhook_retry=SLOW)
    graph = GraphBuilder("g").action("a", "set", arguments={"values": {"x": 1}}).end("b")
    ecp.graphs.register("t", graph.chain("a", "b").build())
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    request = CreateSubscriptionRequest(
        deployment_ref="d", target_url=url, event_types=(WebhookEventType.RUN_COMPLETED,)
    )
    ecp.webhooks.subscribe(ADMIN, request)
    return ecp


class TestNextDeliveryDue(OnEveryStore):
    @pytest.mark.spec("C20 idle-server-quiet")
    def test_a_failed_attempt_sets_when_the_next_delivery_is_due(self, uow):
        sender = HttpxSender(timeout_seconds=5, allow_private=True)
        with receiver(script=[500]) as hook:
            ecp = subscribed(uow, hook.url)
            assert ecp.webhooks.seconds_to_next_due() is None  # nothing queued
            run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
            ecp.runs.drive("t", run.run_id)
            assert ecp.webhooks.seconds_to_next_due() == 0.0  # queued, due now
            assert ecp.webhooks.deliver_due(sender) == 1  # answered 500: a retry 20 to 40 s on
            seconds = ecp.webhooks.seconds_to_next_due()
            assert seconds is not None
            assert 15.0 < seconds <= 40.0
