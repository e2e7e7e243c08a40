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
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.provider import RetryPolicy
from ecp_http.outbound.model_calls.providers import catalog_models
from ecp_http.outbound.model_calls.standin import Reply, StandinModels

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


OLD_RECORD = """{"backtest_id": "bt-old", "tenant_id": "acme", "status": "finished",
 "created_at": "2025-11-03T09:00:00Z", "requested_by": "analyst",
 "request_digest": "hmac-sha256:00", "digest_key_id": "k-0123456789ab",
 "claim_class": "exploratory_model_experiment", "method_version": "observed-replay-policy/1",
 "case_count": 5, "min_success_rate": 0.6, "limitations": ["exploratory_small_labeled_sample"],
 "evaluation_evidence": {
  "incumbent": {"model_ref": "big", "provider": "openai", "model": "gpt-big", "family": "a"},
  "candidate": {"model_ref": "small", "provider": "anthropic", "model": "c-small", "family": "b"},
  "judge": {"model_ref": "judge", "provider": "openai", "model": "gpt-judge", "family": "c"},
  "evaluator_version": "ecp-replay-judge/1", "rubric": "correctness-replay/2",
  "rubric_hash": "sha256:00", "judge_parameter": "judge_max_tokens_8192",
  "cases": [%s]},
 "metering": {"calls_reserved": 20, "backtests_reserved": 1, "calls_used": 20,
              "calls_returned": 0, "backtests_used": 1},
 "finished_at": "2025-11-03T09:01:00Z", "claims": 1,
 "result": {"verdict": "pass", "recommended_action": "review_candidate", "abstain_reasons": [],
  "fail_reasons": [], "min_success_rate": 0.6, "provider_calls": 20,
  "incumbent": {"passed": 5, "cases": 5, "success_rate": 1.0, "replay_cost_usd": "0.03",
                "judge_cost_usd": "0.01", "cost_per_case_usd": "0.006"},
  "candidate": {"passed": 3, "cases": 5, "success_rate": 0.6, "replay_cost_usd": "0.01",
                "judge_cost_usd": "0.01", "cost_per_case_usd": "0.002"},
  "projected_savings_per_case_usd": "0.004"}}"""
"""A finished record's JSON as stored before CandidateOutcome existed (its cases go in ``%s``)."""
OLD_CASE = """{"case_index": %d,
 "incumbent": {"verdict": "correct", "value": 1, "calls": 2, "replay_cost_usd": "0.006"},
 "candidate": {"verdict": "%s", "value": %d, "calls": 2, "replay_cost_usd": "0.002"}}"""


def old_record() -> dict[str, Any]:
    """A finished record as it was stored before outcomes existed (rubric /2, no preflight)."""
    found = ["correct", "correct", "correct", "incorrect", "incorrect"]
    text = ", ".join(OLD_CASE % (i, v, v == "correct") for i, v in enumerate(found))
    return json.loads(OLD_RECORD % text)
