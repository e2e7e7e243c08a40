"""The scenario's calls that reach a model provider: a backtest and a connector test (ADR 0055).

The examples test serves the models of ``tests.support.backtests`` (``big``, ``small`` and the
``judge``) from the loopback stand-in and arms them with :func:`arm`: both replay models answer
each ticket with a queue, the candidate misroutes one, and the judge compares with the label.
"""

from typing import Any

from tests.support.backtests import World
from tests.support.openapi_scenario import Step

TICKETS = {
    "My parcel arrived crushed and I want my money back.": "refunds",
    "How do I change the delivery address of order A-1002?": "shipping",
    "I was charged twice for order A-1003.": "billing",
    "The app closes every time I open my orders.": "technical",
    "Please end my subscription at the end of the month.": "cancellations",
}
"""Support tickets and the queue each belongs to: the backtest's labeled cases."""
MISROUTED = {"I was charged twice for order A-1003.": "refunds"}
"""The one ticket the candidate model sends to the wrong queue."""


def arm(world: World) -> World:
    """Script the stand-in: the incumbent routes every ticket right, the candidate all but one."""
    world.answers["big"] = dict(TICKETS)
    world.answers["small"] = {**TICKETS, **MISROUTED}
    return world


BACKTEST = {
    "instruction": "Name the support queue for the ticket: refunds, shipping, billing,"
    " technical or cancellations. Answer with the queue's name only.",
    "cases": [{"input": ticket, "expected": queue} for ticket, queue in TICKETS.items()],
    "incumbent": {"model": "big", "max_tokens": 16},
    "candidate": {"model": "small"},  # the incumbent's settings (any of its own: abstain)
    "judge": "judge",
    "constraints": {"min_success_rate": 0.8},
}


def _backtest(ids: Any) -> dict[str, str]:
    return {"backtest_id": ids["backtest_id"]}


BACKTESTS = [
    Step(
        "backtests_request",
        BACKTEST,
        role="analyst",
        keep=lambda queued: {"backtest_id": queued["backtest_id"]},
    ),
    Step(
        "backtests_get",
        role="analyst",
        path=_backtest,
        until=lambda backtest: backtest["status"] == "finished",
    ),
    Step("backtests_list", role="analyst", query={"limit": "10"}),
    Step("backtests_get_migration", role="analyst", path=_backtest),
]

ASSISTANT = {"ref": "assistant", "backend_type": "model", "params": {"model_ref": "small"}}

CONNECTOR_TESTS = [
    Step("connectors_create", ASSISTANT, record=False),
    Step(
        "connectors_test",
        {
            "campaign_id": "launch",
            "operation_id": "smoke-1",
            "max_cost_usd": "0.05",
            "run_cap_usd": "1.00",
        },
        role="operator",
        path=lambda _: {"ref": "assistant"},
    ),
]

MODELS = [*BACKTESTS, *CONNECTOR_TESTS]
"""A backtest run to its end by the server's worker, then a connector test under its caps."""
