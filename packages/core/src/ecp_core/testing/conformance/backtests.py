"""BacktestRepository on the adapter under test: store, find by digests, page, claim, finish."""

from datetime import timedelta

import attrs
import pytest

from ecp_core.backtests.model import (
    CLAIM_CLASS,
    METHOD_VERSION,
    Backtest,
    BacktestStatus,
    EvaluationEvidence,
    Metering,
    ResolvedModel,
    SealedInputs,
)
from ecp_core.backtests.rules import LIMITATIONS, RUBRIC_HASH, not_run
from ecp_core.errors import Conflict
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW


def _model(ref: str) -> ResolvedModel:
    return ResolvedModel(model_ref=ref, provider="openai", model=ref, family=f"{ref}-family")


def backtest(number: int, *, tenant: str = "acme", minutes: int = 0) -> Backtest:
    """A queued backtest of five cases, created ``minutes`` after :data:`NOW`."""
    return Backtest(
        backtest_id=f"bt-{number:04d}",
        tenant_id=tenant,
        status=BacktestStatus.QUEUED,
        created_at=NOW + timedelta(minutes=minutes),
        requested_by="analyst",
        request_digest=f"hmac-sha256:{number:064x}",
        digest_key_id="current",
        claim_class=CLAIM_CLASS,
        method_version=METHOD_VERSION,
        case_count=5,
        min_success_rate=0.8,
        limitations=LIMITATIONS,
        evaluation_evidence=EvaluationEvidence(
            incumbent=_model("big"),
            candidate=_model("small"),
            judge=_model("judge"),
            evaluator_version="ecp-replay-judge/1",
            rubric="correctness-replay/4",
            rubric_hash=RUBRIC_HASH,
            judge_parameter="judge_max_tokens_8192",
        ),
        metering=Metering(calls_reserved=20, backtests_reserved=1, period_start=NOW),
    )


SEALED = SealedInputs(key_id="current", box=b"\x00sealed\xff")


class BacktestRepositoryConformance(StoreSuite):
    """The backtest repository's behaviour every adapter shares."""

    def test_a_backtest_is_stored_once_and_found_by_any_of_its_digests(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Found under a list of digests, by its tenant only; a second digest is a conflict."""
        stored = backtest(1)
        with uow() as tx:
            tx.backtests.add(stored, SEALED)
            tx.commit()
        with uow() as tx:
            assert tx.backtests.find("acme", ["hmac-sha256:other", stored.request_digest]) == stored
            assert tx.backtests.find("other", [stored.request_digest]) is None
            assert tx.backtests.get("acme", stored.backtest_id) == stored
            assert tx.backtests.get("other", stored.backtest_id) is None
            with pytest.raises(Conflict):
                tx.backtests.add(attrs.evolve(stored, backtest_id="bt-9999"), SEALED)

    def test_pages_run_newest_first_and_calls_count_per_tenant(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Newest first by (created_at, id); calls_since counts reserved, or used once done."""
        with uow() as tx:
            for number in range(4):
                tx.backtests.add(backtest(number, minutes=number // 2), SEALED)
            tx.backtests.add(backtest(7, tenant="other"), SEALED)
            tx.commit()
        with uow() as tx:
            first = tx.backtests.page("acme", limit=3)
            assert [b.backtest_id for b in first] == ["bt-0003", "bt-0002", "bt-0001"]
            last = first[-1]
            rest = tx.backtests.page("acme", limit=3, before=(last.created_at, last.backtest_id))
            assert [b.backtest_id for b in rest] == ["bt-0000"]
            assert tx.backtests.calls_since("acme", NOW) == 80
            done = attrs.evolve(
                backtest(0),
                status=BacktestStatus.FINISHED,
                metering=attrs.evolve(backtest(0).metering, calls_used=3, calls_returned=17),
            )
            tx.backtests.save(done)
            assert tx.backtests.calls_since("acme", NOW) == 63
            assert tx.backtests.calls_since("acme", NOW + timedelta(minutes=1)) == 40

    def test_claims_take_the_oldest_waiting_and_stale_running_ones(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Queued first by age; running only past ``stale_before``; finished never."""
        with uow() as tx:
            tx.backtests.add(backtest(1), SEALED)
            tx.commit()
        with uow() as tx:
            claimed = tx.backtests.claim(NOW)
            assert claimed == (backtest(1), SEALED)
            running = attrs.evolve(
                backtest(1), status=BacktestStatus.RUNNING, deadline_at=NOW, claims=1
            )
            tx.backtests.save(running)
            tx.commit()
        with uow() as tx:
            assert tx.backtests.claim(NOW) is None
            assert tx.backtests.claim(NOW + timedelta(seconds=1)) == (running, SEALED)
            cases = tuple(not_run(i) for i in range(5))
            finished = attrs.evolve(
                running,
                status=BacktestStatus.FINISHED,
                evaluation_evidence=attrs.evolve(running.evaluation_evidence, cases=cases),
            )
            tx.backtests.save(finished)
            tx.backtests.drop_inputs(finished.backtest_id)
            tx.commit()
        with uow() as tx:
            assert tx.backtests.claim(NOW + timedelta(days=1)) is None
            assert tx.backtests.get("acme", finished.backtest_id, lock=True) == finished

    def test_a_claim_left_uncommitted_is_rolled_back(self, uow: UnitOfWorkFactory) -> None:
        """Leaving without commit keeps the backtest queued with its sealed request."""
        with uow() as tx:
            tx.backtests.add(backtest(1), SEALED)
            tx.commit()
        with uow() as tx:
            tx.backtests.save(attrs.evolve(backtest(1), status=BacktestStatus.RUNNING))
            tx.backtests.drop_inputs("bt-0001")
        with uow() as tx:
            assert tx.backtests.claim(NOW) == (backtest(1), SEALED)


__all__ = ["BacktestRepositoryConformance", "backtest"]
