"""Certification rules, pure: the transition table edge by edge, blockers, evaluation, overrides.

The table is written out again by hand (``tests.support.certification.DRAWN``), as the ADR and
``docs/certification.md`` draw it, so a change to ``TRANSITIONS`` the documents do not share fails.
"""

import itertools
import pathlib
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.certification import DRAWN

from ecp_core.certification.blockers import (
    OVERRIDABLE,
    BlockerCode,
    BrokenChain,
    CertificationFacts,
    blockers_of,
    evaluate,
    unapproved_consequential_nodes,
)
from ecp_core.certification.model import (
    CertificationEvaluation,
    CertificationOverride,
    CertificationState,
    OverrideScope,
)
from ecp_core.certification.transitions import TRANSITIONS, check_transition
from ecp_core.errors import CertificationBlocked, CertificationTransitionNotAllowed
from ecp_core.graphs import GraphBuilder
from ecp_core.graphs.definition import (
    ActionDescriptorV1,
    EdgeDefinition,
    GraphDefinition,
    NodeDefinition,
)
from ecp_core.types import NodeKind, SideEffectClass

pytestmark = pytest.mark.unit

S = CertificationState
NOW = datetime(2026, 11, 22, 5, 0, tzinfo=UTC)


CONDITIONS = {
    "blocked": CertificationEvaluation(test_deployable=False, production_ready=False),
    "test_deployable": CertificationEvaluation(test_deployable=True, production_ready=False),
    "production_ready": CertificationEvaluation(test_deployable=True, production_ready=True),
}
"""The three evaluations a move can meet (production_ready implies test_deployable)."""


def _allowed(needs: str | None, condition: str) -> bool:
    if needs is None:
        return False
    order = ["blocked", "test_deployable", "production_ready"]
    return needs == "nothing" or order.index(condition) >= order.index(needs)


@pytest.mark.spec("§3.4 certification-states", "§3.4 certification-transitions")
@pytest.mark.parametrize("condition", list(CONDITIONS))
@pytest.mark.parametrize(("current", "to"), list(itertools.product(S, S)))
def test_every_pair_of_states_under_every_condition(current, to, condition):
    """25 pairs by 3 evaluations: allowed exactly as drawn, refused naming both states."""
    needs = DRAWN.get((current, to))
    if _allowed(needs, condition):
        check_transition(current, to, CONDITIONS[condition])
        return
    expected = CertificationTransitionNotAllowed if needs is None else CertificationBlocked
    with pytest.raises(expected) as refused:
        check_transition(current, to, CONDITIONS[condition])
    assert current.value in refused.value.detail
    assert to.value in refused.value.detail


@pytest.mark.spec("§3.4 certification-states", "§3.4 certification-transitions")
def test_the_table_is_the_one_drawn_and_nothing_leaves_revoked():
    assert {pair: need.value for pair, need in TRANSITIONS.items()} == DRAWN
    assert not [pair for pair in TRANSITIONS if pair[0] is S.REVOKED]
    assert [s.value for s in S] == [
        "buildable",
        "test_deployable",
        "certified",
        "promoted",
        "revoked",
    ]


def test_a_blocked_move_lists_the_blockers_that_stand():
    blocker = blockers_of(_facts(policy_found=False))[0]
    evaluation = CertificationEvaluation(
        test_deployable=True, production_ready=False, blockers=(blocker,)
    )
    with pytest.raises(CertificationBlocked) as refused:
        check_transition(S.TEST_DEPLOYABLE, S.CERTIFIED, evaluation)
    assert [e.loc for e in refused.value.errors] == [("blockers", "policy_missing")]


def _facts(**changes) -> CertificationFacts:
    ready = {
        "deployment_ref": "refunds",
        "deployment_found": True,
        "signer_available": True,
        "graph_version_ref": "refund-triage@2",
        "graph_version": 2,
        "policy_found": True,
        "attested_graph_version": "refund-triage@2",
        "audited_runs": 3,
    }
    return CertificationFacts(**{**ready, **changes})


facts_strategy = st.builds(
    _facts,
    deployment_found=st.booleans(),
    signer_available=st.booleans(),
    policy_found=st.booleans(),
    attested_graph_version=st.sampled_from([None, "refund-triage@2", "2", "refund-triage@1", "1"]),
    broken_chain=st.none() | st.just(BrokenChain(run_id="r1", error="record_digest differs")),
    unapproved_actions=st.sampled_from([(), ("pay",), ("pay", "ship")]),
)
overrides = st.none() | st.builds(
    CertificationOverride,
    scopes=st.lists(st.sampled_from(OverrideScope), min_size=1, unique=True).map(tuple),
    reason=st.just("pilot"),
    actor_id=st.just("admin"),
    created_at=st.just(NOW - timedelta(days=1)),
    expires_at=st.sampled_from([NOW - timedelta(seconds=1), NOW, NOW + timedelta(seconds=1)]),
)


@pytest.mark.spec("§2.5 certification-evaluation", "§2.5 certification-override-time-boxed")
@given(facts=facts_strategy, override=overrides)
def test_evaluation_follows_from_blockers_and_the_active_override(facts, override):
    evaluation = evaluate(facts, override, NOW, certification_id="c1", state=S.CERTIFIED)
    every = blockers_of(facts)
    active = override is not None and override.expires_at > NOW
    waived = {s.value for s in override.scopes} if active else set()
    assert evaluation.override_active is active
    assert [b.code for b in evaluation.blockers] == [
        b.code for b in every if not (b.overridable and b.code in waived)
    ]
    assert evaluation.production_ready is (not evaluation.blockers)
    assert evaluation.test_deployable is all(b.overridable for b in every)
    # an override never waives what cannot be overridden, nor anything once expired
    assert {b.code for b in every if not b.overridable} <= {b.code for b in evaluation.blockers}
    if not active:
        assert evaluation.blockers == every
    assert (evaluation.certification_id, evaluation.state) == ("c1", S.CERTIFIED)


@pytest.mark.spec("§2.5 certification-evaluation")
@given(facts=facts_strategy)
def test_blockers_come_in_a_fixed_order_and_only_the_scoped_ones_are_overridable(facts):
    found = blockers_of(facts)
    order = list(BlockerCode)
    codes = [BlockerCode(b.code) for b in found]
    assert codes == sorted(codes, key=order.index)
    assert all(b.overridable is (BlockerCode(b.code) in OVERRIDABLE) for b in found)
    assert all(b.message and b.remediation for b in found)
    if not facts.deployment_found:
        assert set(codes) <= {BlockerCode.DEPLOYMENT_MISSING, BlockerCode.SIGNER_UNAVAILABLE}
        assert BlockerCode.DEPLOYMENT_MISSING in codes


def test_override_scopes_are_exactly_the_overridable_blockers():
    assert {s.value for s in OverrideScope} == {
        "policy_missing",
        "attestation_missing",
        "unapproved_consequential_action",
    }
    assert {
        BlockerCode.DEPLOYMENT_MISSING,
        BlockerCode.SIGNER_UNAVAILABLE,
        BlockerCode.AUDIT_CHAIN_BROKEN,
    }.isdisjoint(OVERRIDABLE)


def test_a_ready_deployment_has_no_blocker():
    assert blockers_of(_facts()) == ()


@pytest.mark.parametrize(
    ("attested", "blocked"),
    [
        ("refund-triage@2", False),
        ("2", False),
        ("refund-triage@1", True),
        ("1", True),
        (None, True),
    ],
)
def test_the_attestation_must_name_the_deployed_graph_version(attested, blocked):
    codes = [b.code for b in blockers_of(_facts(attested_graph_version=attested))]
    assert ("attestation_missing" in codes) is blocked


def _action(name, side_effect, *, requires_approval=False):
    return ActionDescriptorV1(
        name="echo",
        fingerprint=f"{name}/1",
        side_effect=side_effect,
        requires_approval=requires_approval,
    )


def _graph(*nodes, edges=()):
    return GraphDefinition(
        graph_id="g",
        entry=nodes[0].id,
        nodes=nodes,
        edges=tuple(EdgeDefinition(source=s, target=t) for s, t in edges),
    )


def _node(node_id, kind=NodeKind.ACTION, side_effect=SideEffectClass.NONE, **action):
    if kind is not NodeKind.ACTION:
        return NodeDefinition(id=node_id, kind=kind, summary="s", rationale="r")
    return NodeDefinition(id=node_id, kind=kind, action=_action(node_id, side_effect, **action))


IRREVERSIBLE = SideEffectClass.IRREVERSIBLE


def test_consequential_actions_need_an_approval_on_every_path_before_them():
    pay = _node("pay", side_effect=IRREVERSIBLE)
    review = _node("review", NodeKind.APPROVAL)
    start = _node("start")
    end = _node("end", NodeKind.END)
    gated = _graph(
        start, review, pay, end, edges=[("start", "review"), ("review", "pay"), ("pay", "end")]
    )
    assert unapproved_consequential_nodes(gated) == ()
    bypass = _graph(
        start,
        review,
        pay,
        end,
        edges=[("start", "review"), ("start", "pay"), ("review", "pay"), ("pay", "end")],
    )
    assert unapproved_consequential_nodes(bypass) == ("pay",)
    self_gated = _node("pay", side_effect=IRREVERSIBLE, requires_approval=True)
    assert unapproved_consequential_nodes(_graph(start, self_gated, edges=[("start", "pay")])) == ()
    first = _node("send", side_effect=SideEffectClass.NON_IDEMPOTENT)
    assert unapproved_consequential_nodes(_graph(first)) == ("send",)


@given(
    side_effects=st.lists(st.sampled_from(SideEffectClass), min_size=1, max_size=6),
    approvals=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_a_chain_is_unapproved_exactly_until_its_first_approval(side_effects, approvals):
    """Actions in a chain, some preceded by an approval node: only those before any approval,
    whose side effect is consequential, are named."""
    nodes, edges, names, gated = [], [], [], False
    expected = []
    for index, side_effect in enumerate(side_effects):
        if approvals[index]:
            nodes.append(_node(f"ok{index}", NodeKind.APPROVAL))
            gated = True
        nodes.append(_node(f"a{index}", side_effect=side_effect))
        if not gated and side_effect in {SideEffectClass.NON_IDEMPOTENT, IRREVERSIBLE}:
            expected.append(f"a{index}")
    names = [n.id for n in nodes]
    edges = list(itertools.pairwise(names))
    assert unapproved_consequential_nodes(_graph(*nodes, edges=edges)) == tuple(expected)


def test_the_builder_graph_of_the_samples_has_no_consequential_action():
    definition = GraphBuilder("g").action("a", "echo").end("b").chain("a", "b").build()
    assert unapproved_consequential_nodes(definition) == ()


DOC = pathlib.Path(__file__).parents[2] / "docs" / "certification.md"


def test_the_documented_table_is_the_table():
    """docs/certification.md draws every pair: 'refused', or 'allowed' with what it needs."""
    drawn = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if not cells[0].startswith("**"):
            continue
        current = S(cells[0].strip("*"))
        for to, cell in zip(S, cells[1:], strict=True):
            if cell == "refused":
                continue
            assert cell.startswith("allowed"), cell
            needs = next(
                (n for n in ("test_deployable", "production_ready") if n in cell), "nothing"
            )
            drawn[current, to] = needs
    assert drawn == DRAWN
