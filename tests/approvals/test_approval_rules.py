"""Approval rules on the memory store, through the ``Ecp`` facade (ADR 0075).

An approval node (or a gated one) may ask for ``min_approvals`` distinct approvers, refuse the
run's starter (``forbid_self_approval``) and name who may resolve it (``approver_roles``,
``approver_subjects``). Each approval is its own audit record counting the approvals so far; the
last one needed moves the run on, one rejection rejects.
"""

from typing import Any

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.support.child_runs import TENANT, World

from ecp_core.canonical import json_digest
from ecp_core.errors import (
    AlreadyApproved,
    ApprovalAlreadyResolved,
    NotAnApprover,
    SelfApprovalForbidden,
    ValidationFailed,
)
from ecp_core.graphs import ApprovalRules, GraphBuilder
from ecp_core.graphs.definition import GraphDefinition, graph_digest
from ecp_core.graphs.validation import APPROVAL_RULES
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.model import ApprovalRecord, ApprovalResolutionRequest
from ecp_core.runs.run.model import Run, RunStatusResponse, StartRunRequest
from ecp_core.types import (
    ApprovalDecision,
    ApprovalStatus,
    AttemptStatus,
    AuthMethod,
    RunPublicStatus,
    RunStatus,
    ServiceRole,
)
from ecp_core.wire import structure, unstructure

pytestmark = pytest.mark.unit

RULES = "C14 approval-rules"
FOUR_EYES = "C14 four-eyes"
APPROVERS = "C14 approvers"
APPROVE = ApprovalResolutionRequest(decision=ApprovalDecision.APPROVE)
REJECT = ApprovalResolutionRequest(decision=ApprovalDecision.REJECT)


def person(subject: str, *roles: ServiceRole) -> ActorIdentity:
    return ActorIdentity(
        subject=subject,
        auth_method=AuthMethod.BEARER,
        tenant_id=TENANT,
        roles=roles or (ServiceRole.APPROVER,),
    )


ALICE, BOB, CAROL = person("alice"), person("bob"), person("carol")
ADMIN = person("root", ServiceRole.ADMIN)


def reviewed(rules: ApprovalRules, graph_id: str = "reviewed") -> GraphDefinition:
    """``review`` (an approval with ``rules``) → ``done``."""
    return (
        GraphBuilder(graph_id)
        .approval("review", summary="Check it", rationale="Four eyes", rules=rules)
        .end("done")
        .chain("review", "done")
        .build()
    )


def started(world: World, ref: str, by: str | None = "alice") -> tuple[Run, str]:
    """A run of ``ref`` started by ``by``, waiting for its approval, and that approval's id."""
    run, _ = world.ecp.runs.start(
        TENANT, StartRunRequest(deployment_ref=ref, input={"amount": 10}), started_by=by
    )
    world.settle()
    run = world.ecp.runs.get(TENANT, run.run_id)
    assert run.status is RunStatus.WAITING_APPROVAL
    return run, run.pending_approval_ids[0]


def setup(rules: ApprovalRules, by: str | None = "alice") -> tuple[World, Run, str]:
    world = World()
    world.deploy("g", reviewed(rules))
    return (world, *started(world, "g", by))


def approved_records(world: World, run_id: str) -> list[Any]:
    return [
        r
        for r in world.records(run_id)
        if r.status in (AttemptStatus.APPROVED, AttemptStatus.DENIED)
    ]


@pytest.mark.spec(APPROVERS)
def test_a_run_records_who_started_it_and_a_child_its_roots_starter() -> None:
    world = World()
    world.deploy("g", reviewed(ApprovalRules()))
    run, approval_id = started(world, "g", by="alice")
    assert run.started_by == "alice"
    assert RunStatusResponse.of(run).started_by == "alice"
    assert world.ecp.approvals.get(TENANT, approval_id).run_started_by == "alice"
    unknown, _ = started(world, "g", by=None)
    assert unknown.started_by is None
    child_graph = GraphBuilder("parent").subgraph("call", "g").end("done").chain("call", "done")
    world.deploy("p", child_graph.build())
    parent, _ = world.ecp.runs.start(TENANT, StartRunRequest(deployment_ref="p"), started_by="dan")
    world.settle()
    (child,) = world.children(parent.run_id)
    assert child.started_by == "dan"


@pytest.mark.spec(FOUR_EYES)
def test_the_starter_may_not_approve_when_self_approval_is_forbidden() -> None:
    world, run, approval_id = setup(ApprovalRules(forbid_self_approval=True))
    for decision in (APPROVE, REJECT):
        with pytest.raises(SelfApprovalForbidden):
            world.ecp.resolve(ALICE, "g", approval_id, decision)
    assert world.ecp.approvals.get(TENANT, approval_id).status is ApprovalStatus.PENDING
    world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(FOUR_EYES)
def test_a_run_started_without_a_subject_has_no_starter_to_refuse() -> None:
    world, run, approval_id = setup(ApprovalRules(forbid_self_approval=True), by=None)
    world.ecp.resolve(ALICE, "g", approval_id, APPROVE)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(FOUR_EYES)
def test_two_approvals_by_two_people_move_the_run_on_and_each_is_recorded() -> None:
    world, run, approval_id = setup(ApprovalRules(min_approvals=2, forbid_self_approval=True))

    answer = world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    first, waiting = answer.approval, answer.run
    assert first.status is ApprovalStatus.PENDING
    assert first.resolution is None
    assert [given.actor.subject for given in first.approvals] == ["bob"]
    assert waiting.status is RunPublicStatus.WAITING_APPROVAL
    assert waiting.pending_approval_ids == (approval_id,)
    with pytest.raises(AlreadyApproved):
        world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    with pytest.raises(AlreadyApproved):
        world.ecp.resolve(BOB, "g", approval_id, REJECT)

    answer = world.ecp.resolve(CAROL, "g", approval_id, APPROVE)
    second, moved = answer.approval, answer.run
    world.settle()

    assert second.status is ApprovalStatus.RESOLVED
    assert second.resolution is not None
    assert second.resolution.actor.subject == "carol"
    assert [given.actor.subject for given in second.approvals] == ["bob", "carol"]
    assert moved.status is not RunPublicStatus.WAITING_APPROVAL
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED
    records = approved_records(world, run.run_id)
    assert [r.execution_metadata["approval_count"] for r in records] == [1, 2]
    assert {r.execution_metadata["min_approvals"] for r in records} == {2}
    assert [r.execution_metadata["actor"]["subject"] for r in records] == ["bob", "carol"]
    assert "next_node_id" not in records[0].execution_metadata
    assert records[1].execution_metadata["next_node_id"] == "done"
    trail = world.ecp.approvals.actions(TENANT, approval_id)
    assert [(a.action, a.actor and a.actor.subject) for a in trail] == [
        ("requested", None),
        ("approved", "bob"),
        ("approved", "carol"),
    ]
    assert world.verified(run.run_id)
    with pytest.raises(ApprovalAlreadyResolved):
        world.ecp.resolve(ADMIN, "g", approval_id, APPROVE)


@pytest.mark.spec(FOUR_EYES)
def test_a_rejection_after_one_approval_rejects() -> None:
    world, run, approval_id = setup(ApprovalRules(min_approvals=3))
    world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    answer = world.ecp.resolve(CAROL, "g", approval_id, REJECT)
    rejected, failed = answer.approval, answer.run
    assert rejected.status is ApprovalStatus.RESOLVED
    assert rejected.resolution is not None
    assert rejected.resolution.decision is ApprovalDecision.REJECT
    assert len(rejected.approvals) == 1
    assert failed.status is RunPublicStatus.FAILED
    records = approved_records(world, run.run_id)
    assert [r.status for r in records] == [AttemptStatus.APPROVED, AttemptStatus.DENIED]
    assert [r.execution_metadata["approval_count"] for r in records] == [1, 1]
    assert world.verified(run.run_id)


@pytest.mark.spec(FOUR_EYES)
def test_every_approval_approves_the_same_payload() -> None:
    edited = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 5}
    )
    world, run, approval_id = setup(ApprovalRules(min_approvals=2))
    world.ecp.resolve(BOB, "g", approval_id, edited)
    with pytest.raises(ValidationFailed) as plain:
        world.ecp.resolve(CAROL, "g", approval_id, APPROVE)
    assert plain.value.errors[0].loc == ("decision",)
    other = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 6}
    )
    with pytest.raises(ValidationFailed) as differing:
        world.ecp.resolve(CAROL, "g", approval_id, other)
    assert differing.value.errors[0].loc == ("edited_payload",)
    world.ecp.resolve(CAROL, "g", approval_id, edited)
    world.settle()
    done = world.ecp.runs.get(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.output == {"amount": 5}

    world2, _, second_id = setup(ApprovalRules(min_approvals=2))
    world2.ecp.resolve(BOB, "g", second_id, APPROVE)
    with pytest.raises(ValidationFailed) as late_edit:
        world2.ecp.resolve(CAROL, "g", second_id, edited)
    assert late_edit.value.errors[0].loc == ("edited_payload",)


@pytest.mark.spec(APPROVERS)
def test_approver_lists_restrict_who_resolves_and_whose_inbox_shows_it() -> None:
    world = World()
    world.deploy("roles", reviewed(ApprovalRules(approver_roles=(ServiceRole.ADMIN,)), "r"))
    world.deploy("named", reviewed(ApprovalRules(approver_subjects=("carol",)), "n"))
    world.deploy(
        "both",
        reviewed(
            ApprovalRules(approver_subjects=("bob",), approver_roles=(ServiceRole.ADMIN,)), "b"
        ),
    )
    world.deploy("open", reviewed(ApprovalRules(forbid_self_approval=True), "o"))
    ids = {ref: started(world, ref, by="alice")[1] for ref in ("roles", "named", "both", "open")}

    def inbox(actor: ActorIdentity) -> set[str]:
        found, _ = world.ecp.approvals.page(TENANT, approver=actor)
        return {
            ref for ref, approval_id in ids.items() if approval_id in {a.approval_id for a in found}
        }

    assert inbox(ALICE) == set()
    assert inbox(BOB) == {"both", "open"}
    assert inbox(CAROL) == {"named", "open"}
    assert inbox(ADMIN) == {"roles", "both", "open"}
    assert len(world.ecp.approvals.page(TENANT)[0]) == len(ids)
    with pytest.raises(NotAnApprover):
        world.ecp.resolve(BOB, "roles", ids["roles"], APPROVE)
    with pytest.raises(NotAnApprover):
        world.ecp.resolve(ADMIN, "named", ids["named"], REJECT)
    with pytest.raises(NotAnApprover):
        world.ecp.resolve(ALICE, "both", ids["both"], APPROVE)
    world.ecp.resolve(ADMIN, "roles", ids["roles"], APPROVE)
    world.ecp.resolve(CAROL, "named", ids["named"], APPROVE)
    world.ecp.resolve(BOB, "both", ids["both"], APPROVE)
    resolved = world.ecp.approvals.page(TENANT, status=ApprovalStatus.RESOLVED)[0]
    assert len(resolved) == 3


@pytest.mark.spec(FOUR_EYES)
def test_an_escalated_approval_keeps_the_approvals_given_so_far() -> None:
    world = World()
    graph = (
        GraphBuilder("late")
        .approval(
            "review",
            summary="Check it",
            rationale="Four eyes",
            sla_seconds=60,
            rules=ApprovalRules(min_approvals=2),
        )
        .end("done")
        .chain("review", "done")
        .build()
    )
    world.deploy("g", graph)
    run, approval_id = started(world, "g")
    world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    world.clock.advance(120)
    (fresh,) = world.ecp.approvals.escalate_overdue()
    assert [given.actor.subject for given in fresh.approvals] == ["bob"]
    assert fresh.min_approvals == 2
    with pytest.raises(AlreadyApproved):
        world.ecp.resolve(BOB, "g", fresh.approval_id, APPROVE)
    world.ecp.resolve(CAROL, "g", fresh.approval_id, APPROVE)
    world.settle()
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.COMPLETED


@pytest.mark.spec(FOUR_EYES)
def test_a_gated_action_is_granted_by_its_last_needed_approval() -> None:
    world = World()
    graph = (
        GraphBuilder("gated")
        .action(
            "pay",
            "set",
            arguments={"values": {"paid": True}},
            requires_approval=True,
            rules=ApprovalRules(min_approvals=2, approver_roles=(ServiceRole.APPROVER,)),
        )
        .end("done")
        .chain("pay", "done")
        .build()
    )
    world.deploy("g", graph)
    run, approval_id = started(world, "g")
    with pytest.raises(NotAnApprover):
        world.ecp.resolve(ADMIN, "g", approval_id, APPROVE)
    world.ecp.resolve(BOB, "g", approval_id, APPROVE)
    assert world.ecp.runs.get(TENANT, run.run_id).status is RunStatus.WAITING_APPROVAL
    world.ecp.resolve(CAROL, "g", approval_id, APPROVE)
    world.settle()
    done = world.ecp.runs.get(TENANT, run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert done.output == {"amount": 10, "paid": True}


def _node(**fields: Any) -> dict[str, Any]:
    return {"id": "n", **fields}


@pytest.mark.spec(RULES)
@pytest.mark.parametrize(
    ("node", "loc"),
    [
        (
            _node(kind="approval", summary="s", rationale="r", min_approvals=0),
            ("nodes", 0, "min_approvals"),
        ),
        (
            _node(kind="approval", summary="s", rationale="r", min_approvals=11),
            ("nodes", 0, "min_approvals"),
        ),
        (
            _node(kind="approval", summary="s", rationale="r", approver_roles=["auditor"]),
            ("nodes", 0, "approver_roles", 0),
        ),
        (
            _node(kind="approval", summary="s", rationale="r", approver_roles=["viewer"]),
            ("nodes", 0, "approver_roles", 0),
        ),
        (
            _node(kind="approval", summary="s", rationale="r", approver_subjects=["bob", ""]),
            ("nodes", 0, "approver_subjects", 1),
        ),
        (
            _node(kind="approval", summary="s", rationale="r", approver_subjects=[]),
            ("nodes", 0, "approver_subjects"),
        ),
        (
            _node(
                kind="approval",
                summary="s",
                rationale="r",
                approver_subjects=["bob"],
                min_approvals=2,
            ),
            ("nodes", 0, "min_approvals"),
        ),
        (
            _node(kind="action", action={"name": "set", "fingerprint": "set/1"}, min_approvals=2),
            ("nodes", 0, "min_approvals"),
        ),
        (
            _node(
                kind="task", action={"name": "t", "fingerprint": "t/1"}, approver_roles=["admin"]
            ),
            ("nodes", 0, "approver_roles"),
        ),
        (
            _node(kind="subgraph", subgraph={"deployment_ref": "x"}, forbid_self_approval=True),
            ("nodes", 0, "forbid_self_approval"),
        ),
        (
            _node(
                kind="mapping",
                operations=[{"target_path": "a", "value": 1}],
                approver_subjects=["b"],
            ),
            ("nodes", 0, "approver_subjects"),
        ),
    ],
)
def test_a_bad_rule_is_refused_where_it_is_and_nothing_is_stored(
    node: dict[str, Any], loc: tuple[str | int, ...]
) -> None:
    world = World()
    graph = {
        "graph_id": "bad",
        "entry": "n",
        "nodes": [node, {"id": "done", "kind": "end"}],
        "edges": [{"source": "n", "target": "done"}],
    }
    with pytest.raises(ValidationFailed) as refused:
        world.ecp.graphs.register(TENANT, structure(graph, GraphDefinition))
    assert loc in [error.loc for error in refused.value.errors]
    assert world.ecp.graphs.graphs_page(TENANT)[0] == []


@pytest.mark.spec(RULES)
def test_rules_on_a_gated_node_are_accepted_and_left_out_keep_the_digest() -> None:
    plain = reviewed(ApprovalRules())
    before_rules = unstructure(plain)
    for node in before_rules["nodes"]:
        later = ("lock_seconds", "max_attempts", "subgraph", "seconds", "until_path")
        for field in (*APPROVAL_RULES, *later):
            assert node.pop(field) is None
    assert graph_digest(plain) == json_digest(before_rules)  # as stored before the rules
    assert graph_digest(plain) != graph_digest(reviewed(ApprovalRules(min_approvals=1)))
    gated = (
        GraphBuilder("gated")
        .task("work", "pack", requires_approval=True, rules=ApprovalRules(min_approvals=2))
        .end("done")
        .chain("work", "done")
        .build()
    )
    assert gated.node("work").min_approvals == 2


SUBJECTS = ("alice", "bob", "carol", "dan")
ROLE_SETS = st.sampled_from(
    [(ServiceRole.APPROVER,), (ServiceRole.ADMIN,), (ServiceRole.ADMIN, ServiceRole.APPROVER)]
)
VOTES = st.lists(
    st.tuples(
        st.sampled_from(SUBJECTS),
        ROLE_SETS,
        st.sampled_from([ApprovalDecision.APPROVE, ApprovalDecision.REJECT]),
    ),
    max_size=8,
)
RANDOM_RULES = st.builds(
    ApprovalRules,
    min_approvals=st.none() | st.integers(1, 3),
    forbid_self_approval=st.none() | st.booleans(),
    approver_roles=st.none() | st.just((ServiceRole.ADMIN,)),
    approver_subjects=st.none()
    | st.lists(st.sampled_from(SUBJECTS), min_size=3, max_size=4, unique=True).map(tuple),
)


def _permitted(rules: ApprovalRules, subject: str, roles: tuple[ServiceRole, ...]) -> bool:
    if rules.forbid_self_approval and subject == "alice":
        return False
    if rules.approver_roles is None and rules.approver_subjects is None:
        return True
    return subject in (rules.approver_subjects or ()) or any(
        role in (rules.approver_roles or ()) for role in roles
    )


@pytest.mark.spec(FOUR_EYES, APPROVERS)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=RANDOM_RULES, votes=VOTES)
def test_a_run_moves_on_exactly_when_enough_distinct_approvers_approved(
    rules: ApprovalRules, votes: list[tuple[str, tuple[ServiceRole, ...], ApprovalDecision]]
) -> None:
    world, run, approval_id = setup(rules, by="alice")
    needed = rules.min_approvals or 1
    approvers: list[str] = []
    rejected = False
    for subject, roles, decision in votes:
        actor = person(subject, *roles)
        ended = rejected or len(approvers) >= needed
        expected: type[Exception] | None = None
        if ended:
            expected = ApprovalAlreadyResolved
        elif not _permitted(rules, subject, roles):
            named = _permitted(attrs.evolve(rules, forbid_self_approval=False), subject, roles)
            expected = SelfApprovalForbidden if named else NotAnApprover
        elif subject in approvers:
            expected = AlreadyApproved
        request = ApprovalResolutionRequest(decision=decision)
        if expected is not None:
            with pytest.raises(expected):
                world.ecp.resolve(actor, "g", approval_id, request)
            continue
        world.ecp.resolve(actor, "g", approval_id, request)
        if decision is ApprovalDecision.REJECT:
            rejected = True
        else:
            approvers.append(subject)
    world.settle()
    after = world.ecp.runs.get(TENANT, run.run_id)
    approval: ApprovalRecord = world.ecp.approvals.get(TENANT, approval_id)
    assert [given.actor.subject for given in approval.approvals] == approvers
    if rejected:
        assert after.status is RunStatus.FAILED
    elif len(approvers) >= needed:
        assert after.status is RunStatus.COMPLETED
        assert len(set(approvers)) == needed
    else:
        assert after.status is RunStatus.WAITING_APPROVAL
        assert approval.status is ApprovalStatus.PENDING
    counts = [r.execution_metadata["approval_count"] for r in approved_records(world, run.run_id)]
    assert counts == [*range(1, len(approvers) + 1), *([len(approvers)] if rejected else [])]
    assert world.verified(run.run_id)
