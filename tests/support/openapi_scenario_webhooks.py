"""The scenario's webhook calls: a subscription, a test event that dies, its replay (ADR 0055).

The server of the examples test gives a delivery one attempt and may post to loopback; the
receiver there answers 500, so the test event becomes a dead letter at its first attempt.
"""

from typing import Any

from tests.support.openapi_scenario import Step

RECEIVER = "target_url"
"""The name under which the examples test keeps its receiver's URL among the scenario's ids."""


def _subscription(ids: Any) -> dict[str, str]:
    return {"subscription_id": ids["subscription_id"]}


def _dead_letter(ids: Any) -> dict[str, str]:
    return {"delivery_id": ids["delivery_id"]}


WEBHOOKS = [
    Step(
        "webhooks_create_subscription",
        lambda ids: {
            "deployment_ref": "refunds",
            "target_url": ids[RECEIVER],
            "event_types": ["run.completed", "approval.requested"],
        },
        keep=lambda made: {"subscription_id": made["subscription"]["subscription_id"]},
    ),
    Step("webhooks_list_subscriptions"),
    Step("webhooks_rotate_secret", path=_subscription),
    Step("webhooks_send_test_event", path=_subscription),
    Step(
        "webhooks_list_dead_letters",
        until=lambda page: bool(page["dead_letters"]),
        keep=lambda page: {"delivery_id": page["dead_letters"][0]["delivery_id"]},
    ),
    Step("webhooks_get_dead_letter", path=_dead_letter),
    Step("webhooks_replay_dead_letter", path=_dead_letter),
]
"""Subscribe the receiver to the quickstart's deployment, then test, read and replay."""
