"""Properties of merchant events: the stored subscription is a fold over the valid, newest events.

Deliveries are drawn from a few events with colliding times, each delivered exactly, changed
under its id, signed with the wrong secret or too long ago, made invalid, or with a byte flipped;
a reference fold written here, independently of the service, says what must be stored.
"""

import json
from datetime import timedelta

import hypothesis.strategies as st
import pytest
from hypothesis import given
from tests.support.billing import SECRET, SOLO, T0, billing, body_of, payload, signed

from ecp_billing import PaddleMerchant
from ecp_core.billing.events import EventOutcome
from ecp_core.billing.model import trial_subscription
from ecp_core.errors import Conflict, WebhookRejected
from ecp_core.wire import format_timestamp

pytestmark = pytest.mark.unit

STATES = {
    "subscription.activated": ("active", True),
    "subscription.trialing": ("trialing", True),
    "subscription.past_due": ("past_due", True),
    "subscription.paused": ("paused", False),
    "subscription.canceled": ("canceled", False),
}
"""Event type → (status, whether it carries a period)."""

TRIAL = trial_subscription("acme", T0 - timedelta(days=1))
BAD = ("wrong_secret", "stale_signature", "unknown_price", "no_tenant", "bad_period", "flipped")


@st.composite
def events(draw, event_id: str) -> dict:
    kind = draw(st.sampled_from(sorted(STATES)))
    status, has_period = STATES[kind]
    at = T0 + timedelta(minutes=draw(st.integers(0, 3)))  # few times: equal times happen
    length = timedelta(days=draw(st.integers(1, 40)))
    period = (at, at + length) if has_period else None
    return payload(kind, event_id=event_id, status=status, at=at, period=period)


@st.composite
def deliveries(draw) -> list[tuple[str, dict]]:
    pool = [draw(events(f"evt_{n}")) for n in range(4)]
    steps = draw(
        st.lists(
            st.tuples(st.integers(0, 3), st.sampled_from(("exact", "exact", "changed", *BAD))),
            max_size=14,
        )
    )
    found = []
    for index, variant in steps:
        event = pool[index]
        if variant == "changed":
            event = draw(events(event["event_id"]))
        found.append((variant, event))
    return found


def _invalid(variant: str, event: dict) -> dict:
    event = json.loads(json.dumps(event))
    if variant == "unknown_price":
        event["data"]["items"] = [{"price": {"id": "pri_other"}}]
    elif variant == "no_tenant":
        event["data"]["custom_data"] = None
    elif variant == "bad_period":
        event["data"]["current_billing_period"] = {"starts_at": "2026-03-02T00:00:00Z"}
    return event


def _send(found, variant: str, event: dict):
    """Deliver one drawn delivery as the variant says; the receipt or the error raised."""
    now = found.clock.now()
    body = body_of(_invalid(variant, event))
    headers = signed(body, now)
    if variant == "wrong_secret":
        headers = signed(body, now, "not-the-secret")
    elif variant == "stale_signature":
        headers = signed(body, now - timedelta(minutes=6))
    elif variant == "flipped":
        body = bytes([body[0] ^ 0x20]) + body[1:]
    try:
        return found.service.receive(headers, body)
    except (WebhookRejected, Conflict) as refused:
        return refused


def _content(event: dict) -> str:
    return json.dumps({k: v for k, v in event.items() if k != "notification_id"}, sort_keys=True)


def _reference(steps: list[tuple[str, dict]]) -> tuple[dict, list[object]]:
    """The subscription's fields and each delivery's answer, folded by hand."""
    state = {"status": "trialing", "plan": "trial", "last_event_id": None, "last_at": None}
    state["period"] = (format_timestamp(TRIAL.period_start), format_timestamp(TRIAL.period_end))
    seen: dict[str, str] = {}
    answers: list[object] = []
    for variant, event in steps:
        if variant in BAD:
            answers.append(WebhookRejected)
            continue
        event_id, content = event["event_id"], _content(event)
        if event_id in seen:
            answers.append(EventOutcome.DUPLICATE if seen[event_id] == content else Conflict)
            continue
        seen[event_id] = content
        at = event["occurred_at"]
        if state["last_at"] is not None and at <= state["last_at"]:
            answers.append(EventOutcome.RETAINED)
            continue
        period = event["data"]["current_billing_period"]
        state.update(
            status=event["data"]["status"],
            plan="solo",
            last_event_id=event_id,
            last_at=at,
            period=state["period"] if period is None else (period["starts_at"], period["ends_at"]),
        )
        answers.append(EventOutcome.APPLIED)
    return state, answers


def _kind(answer: object) -> object:
    return type(answer) if isinstance(answer, Exception) else answer.outcome


def _fields(subscription) -> dict:
    """The fields the reference folds, in its (wire) form."""
    last = subscription.last_event_at
    return {
        "status": subscription.status.value,
        "plan": subscription.plan.value,
        "last_event_id": subscription.last_event_id,
        "last_at": None if last is None else format_timestamp(last),
        "period": (
            format_timestamp(subscription.period_start),
            format_timestamp(subscription.period_end),
        ),
    }


@pytest.mark.spec("§3.6 subscription-transitions", "§6.3 merchant-events")
@given(steps=deliveries())
def test_the_stored_subscription_is_the_fold_over_the_valid_newest_events(steps):
    found = billing()
    with found.store.unit_of_work() as uow:
        uow.subscriptions.add(TRIAL)
        uow.commit()
    expected, answers = _reference(steps)
    for (variant, event), answer in zip(steps, answers, strict=True):
        before = found.subscription()
        got = _send(found, variant, event)
        assert _kind(got) is answer, (variant, event["event_id"])
        if answer is not EventOutcome.APPLIED:
            assert found.subscription() == before  # nothing rejected or retained changes anything
    assert _fields(found.subscription()) == expected


@pytest.mark.spec("§5 merchant-signature", "C12 paddle-webhooks")
@given(data=st.data())
def test_every_single_byte_flip_of_a_signed_body_is_rejected(data):
    body = body_of(payload(prices=("pri_addon", SOLO)))
    headers = signed(body, T0)
    position = data.draw(st.integers(0, len(body) - 1))
    flip = data.draw(st.integers(1, 255))
    changed = body[:position] + bytes([body[position] ^ flip]) + body[position + 1 :]
    merchant = PaddleMerchant(base_url="http://127.0.0.1:9", api_key="k", webhook_secret=SECRET)
    assert merchant.event(headers, body, T0) is not None
    with pytest.raises(WebhookRejected):
        merchant.event(headers, changed, T0)
