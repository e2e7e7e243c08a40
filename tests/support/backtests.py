"""A backtest world for tests: the loopback stand-in provider scripted as three models.

``big`` is the dear incumbent, ``small`` the cheap candidate, ``judge`` a third family. Each
case's input is ``q<i>`` and its expected answer ``a<i>``; the replays answer from
``answers[model]`` (``a<i>`` unless told otherwise) and the judge compares the replay output with
the expected answer, answering ``correct`` or ``incorrect`` (or what ``judge_says`` scripts).
Provider calls go over real HTTP to 127.0.0.1; each port call is one HTTP call (no retries).
"""

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import attrs

from ecp_core.backtests.digest import DigestKeys
from ecp_core.backtests.limits import BacktestLimits, BacktestSetup
from ecp_http.action_secrets import ActionSecrets
from ecp_http.model_calls.provider import RetryPolicy
from ecp_http.model_calls.providers import catalog_models
from ecp_http.model_calls.standin import Reply, StandinModels

KEY = "k" * 40
OLD_KEY = "o" * 40
NO_RETRY = RetryPolicy(attempts=1, wait_initial=0, wait_max=0, wait_jitter=0)


def request_body(count: int = 5, **changes: Any) -> dict[str, Any]:
    """A valid ``POST /v1/backtests`` body."""
    body: dict[str, Any] = {
        "instruction": "Answer with the code for the question.",
        "cases": [{"input": f"q{i}", "expected": f"a{i}"} for i in range(count)],
        "incumbent": {"model": "big", "max_tokens": 64},
        "candidate": {"model": "small"},
        "judge": "judge",
        "constraints": {"min_success_rate": 0.8},
    }
    body.update(changes)
    return body


@attrs.define
class World:
    """The stand-in, scripted; ``answers`` per model override the right answer per case."""

    standin: StandinModels
    answers: dict[str, dict[str, str]] = attrs.field(factory=dict)
    judge_says: dict[str, str] = attrs.field(factory=dict)
    """Per expected answer, the judge's raw reply text (instead of judging)."""

    def setup(
        self, *, keys: DigestKeys | None = None, judge_family: str = "judges", **limits: Any
    ) -> BacktestSetup:
        """A backtest setup over the stand-in's three models."""
        s = self.standin
        catalog = {
            "big": s.entry("big", family="large", input_price="10", output_price="30"),
            "small": s.entry("small", family="compact", input_price="1", output_price="2"),
            "judge": s.entry("judge", family=judge_family, input_price="3", output_price="6"),
        }
        provider = catalog_models(catalog, ActionSecrets({}, None), policy=NO_RETRY)
        return BacktestSetup(
            provider=provider,
            keys=keys or DigestKeys(key_id="current", key=KEY),
            limits=BacktestLimits(**{"call_timeout_seconds": 5.0, **limits}),
        )

    def _replay(self, model: str) -> Any:
        def answer(body: dict[str, Any]) -> Reply:
            question = body["messages"][-1]["content"]
            right = "a" + question.removeprefix("q")
            return Reply(
                self.answers.get(model, {}).get(question, right), input_tokens=20, output_tokens=4
            )

        return answer

    def _judge(self, body: dict[str, Any]) -> Reply:
        material = json.loads(body["messages"][-1]["content"])
        scripted = self.judge_says.get(material["expected"])
        if scripted is not None:
            return Reply(scripted, input_tokens=50, output_tokens=10)
        verdict = "correct" if material["replay_output"] == material["expected"] else "incorrect"
        return Reply(json.dumps({"verdict": verdict, "rationale": "x"}), 50, 10)

    def arm(self) -> "World":
        """Install the responders."""
        self.standin.respond("big", self._replay("big"))
        self.standin.respond("small", self._replay("small"))
        self.standin.respond("judge", self._judge)
        return self


@contextmanager
def world() -> Iterator[World]:
    """A running stand-in with the three models armed."""
    with StandinModels() as standin:
        yield World(standin).arm()
