"""The backtest rules, pure: verdicts, the success rate, abstention, the pass, the digest."""

import json
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.backtests import request_body

from ecp_core.backtests.digest import DigestKeys, key_id_of
from ecp_core.backtests.model import (
    BacktestAction,
    BacktestRequest,
    BacktestVerdict,
    CaseOutcome,
    CaseVerdict,
    SideObservation,
)
from ecp_core.backtests.rules import (
    CANDIDATE_SETTINGS,
    JUDGE_FAMILY_CLASH,
    NO_SAVINGS,
    calls_reserved,
    catalog_evidence,
    decide,
    preflight,
    read_judgement,
)
from ecp_core.errors import ValidationFailed
from ecp_core.models.model import CatalogEntry, ProviderKind
from ecp_core.wire import structure

pytestmark = pytest.mark.unit


def side(verdict: CaseVerdict, cost: str | None = "0.001") -> SideObservation:
    replayed = verdict not in (CaseVerdict.REPLAY_ERROR, CaseVerdict.NOT_RUN)
    return SideObservation(
        verdict=verdict,
        value=verdict.value_of,
        calls=0 if verdict is CaseVerdict.NOT_RUN else 2 if replayed else 1,
        replay_cost_usd=Decimal(cost) if replayed and cost is not None else None,
    )


def outcomes(pairs, inc_cost="0.002", cand_cost="0.001"):
    return [
        CaseOutcome(case_index=i, incumbent=side(a, inc_cost), candidate=side(b, cand_cost))
        for i, (a, b) in enumerate(pairs)
    ]


verdicts = st.sampled_from(list(CaseVerdict))
pairs = st.lists(st.tuples(verdicts, verdicts), min_size=5, max_size=25)


@pytest.mark.spec("§4.4 backtest-case-verdicts")
@given(pairs, st.floats(0, 1))
def test_the_success_rate_is_passed_over_all_cases_and_unsettled_verdicts_abstain(found, floor):
    result = decide(outcomes(found), floor, ())
    for summary, index in ((result.incumbent, 0), (result.candidate, 1)):
        passed = sum(pair[index] is CaseVerdict.CORRECT for pair in found)
        assert summary.passed == passed
        assert summary.success_rate == passed / len(found)
    unsettled = {v for pair in found for v in pair} - {CaseVerdict.CORRECT, CaseVerdict.INCORRECT}
    assert (result.verdict is BacktestVerdict.ABSTAIN) == bool(unsettled)
    if unsettled:
        assert result.recommended_action is BacktestAction.KEEP_INCUMBENT
    assert result.provider_calls <= calls_reserved(len(found))


@pytest.mark.spec("§4.4 backtest-case-verdicts")
def test_verdict_values_are_one_zero_or_null():
    assert [v.value_of for v in CaseVerdict] == [1, 0, None, None, None, None]


@pytest.mark.spec("§4.4 backtest-pass")
@given(
    st.integers(0, 5),
    st.decimals(Decimal("0.0001"), Decimal(1), places=4),
    st.decimals(Decimal("0.0001"), Decimal(1), places=4),
    st.sampled_from([0.0, 0.6, 0.8, 1.0]),
)
def test_a_pass_needs_positive_savings_and_the_floor(wrong, inc, cand, floor):
    found = [(CaseVerdict.CORRECT, CaseVerdict.CORRECT)] * (5 - wrong)
    found += [(CaseVerdict.CORRECT, CaseVerdict.INCORRECT)] * wrong
    result = decide(outcomes(found, str(inc), str(cand)), floor, ())
    passes = (5 - wrong) / 5 >= floor and inc > cand
    assert (result.verdict is BacktestVerdict.PASS) == passes
    assert result.recommended_action is (
        BacktestAction.REVIEW_CANDIDATE if passes else BacktestAction.KEEP_INCUMBENT
    )
    assert result.projected_savings_per_case_usd == inc - cand
    if not passes:
        assert result.verdict is BacktestVerdict.FAIL


@pytest.mark.spec("§4.4 backtest-pass")
def test_a_dearer_candidate_fails_on_savings():
    found = [(CaseVerdict.CORRECT, CaseVerdict.CORRECT)] * 5
    result = decide(outcomes(found, "0.001", "0.001"), 0.5, ())
    assert (result.verdict, result.fail_reasons) == (BacktestVerdict.FAIL, (NO_SAVINGS,))


def catalog(judge_family="c"):
    def entry(ref, family):
        return CatalogEntry(
            model_ref=ref,
            provider=ProviderKind.OPENAI,
            model=ref,
            base_url="http://127.0.0.1:1/v1",
            secret_name=None,
            family=family,
            input_usd_per_million=Decimal(1),
            output_usd_per_million=Decimal(1),
        )

    return {
        "big": entry("big", "a"),
        "small": entry("small", "b"),
        "judge": entry("judge", judge_family),
    }


@pytest.mark.spec("§4.4 backtest-judge")
@pytest.mark.parametrize("family", ["a", "b"])
def test_a_judge_of_a_compared_family_abstains_before_any_call(family):
    request = structure(request_body(), BacktestRequest)
    assert preflight(request, catalog_evidence(request, catalog(family))) == (JUDGE_FAMILY_CLASH,)
    assert preflight(request, catalog_evidence(request, catalog("c"))) == ()


@pytest.mark.spec("§4.4 backtest-judge")
@pytest.mark.parametrize("judge", ["big", "small"])
def test_the_judge_must_differ_from_both_models(judge):
    request = structure(request_body(judge=judge), BacktestRequest)
    with pytest.raises(ValidationFailed) as refused:
        catalog_evidence(request, catalog())
    assert refused.value.errors[0].loc == ("judge",)


def test_unknown_model_refs_are_refused_by_field():
    request = structure(request_body(judge="nope", candidate={"model": "gone"}), BacktestRequest)
    with pytest.raises(ValidationFailed) as refused:
        catalog_evidence(request, catalog())
    assert [e.loc for e in refused.value.errors] == [("candidate", "model"), ("judge",)]


@pytest.mark.spec("§4.4 backtest-judge")
@pytest.mark.parametrize("settings", [{"max_tokens": 64}, {"temperature": 0.0}])
def test_candidate_settings_besides_the_model_abstain(settings):
    request = structure(request_body(candidate={"model": "small", **settings}), BacktestRequest)
    assert preflight(request, catalog_evidence(request, catalog())) == (CANDIDATE_SETTINGS,)


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ('{"verdict": "correct", "rationale": "same"}', CaseVerdict.CORRECT),
        ('Sure.\n```json\n{"verdict": "INCORRECT"}\n```', CaseVerdict.INCORRECT),
        ('{"verdict": "unresolved"}', CaseVerdict.UNRESOLVED),
        ('{"verdict": "maybe"}', None),
        ("correct", None),
        ("{not json}", None),
        ('["correct"]', None),
    ],
)
def test_the_judge_answer_is_read_strictly(text, verdict):
    assert read_judgement(text) is verdict


requests = st.builds(
    lambda n, floor, text: structure(
        request_body(n, instruction=text, constraints={"min_success_rate": floor}),
        BacktestRequest,
    ),
    st.integers(5, 25),
    st.floats(0, 1),
    st.text(st.characters(codec="utf-8", exclude_characters="\x00"), min_size=1, max_size=40),
)
secrets = st.text(alphabet="abcdefghij0123456789", min_size=32, max_size=48)


@pytest.mark.spec("§4.4 backtest-call-reservation", "§4.4 backtest-retains-no-raw-data")
@given(requests, secrets, secrets)
def test_a_retry_under_a_rotated_key_is_still_recognised(request, old, new):
    before = DigestKeys(key_id="old", key=old)
    stored = before.digest(request)
    if old == new:
        return
    after = DigestKeys(key_id="new", key=new, retired={"old": old})
    assert stored in after.known_digests(request)
    assert after.digest(request) != stored
    assert stored.startswith("hmac-sha256:")
    assert DigestKeys(key_id="new", key=new).known_digests(request) == [after.digest(request)]


@given(requests)
def test_sealed_inputs_open_under_a_retired_key_only_when_it_is_known(request):
    sealed = DigestKeys(key_id="old", key="o" * 32).seal(request)
    assert b'"instruction"' not in sealed.box
    rotated = DigestKeys(key_id="new", key="n" * 32, retired={"old": "o" * 32})
    assert structure(json.loads(rotated.open(sealed)), BacktestRequest) == request
    assert DigestKeys(key_id="new", key="n" * 32).open(sealed) is None


def test_short_or_doubled_keys_are_refused_and_ids_do_not_reveal_keys():
    with pytest.raises(ValueError, match="at least 32"):
        DigestKeys(key_id="k", key="short")
    with pytest.raises(ValueError, match="both current and retired"):
        DigestKeys(key_id="k", key="x" * 32, retired={"k": "y" * 32})
    assert "x" * 32 not in key_id_of("x" * 32)
    assert "x" * 32 not in repr(DigestKeys(key_id="k", key="x" * 32))
