"""Contracts and approval edits validated against ``resolution_schema_ref``."""

import pytest

from ecp_core import (
    ActorIdentity,
    ApprovalDecision,
    ApprovalResolutionRequest,
    AuthMethod,
    CreateDeploymentRequest,
    Ecp,
    GraphBuilder,
    StartRunRequest,
    structure,
)
from ecp_core.contracts import CreateContractRequest
from ecp_core.errors import Conflict, NotFound, ValidationFailed

pytestmark = pytest.mark.unit

SCHEMA = {
    "type": "object",
    "properties": {"amount": {"type": "number", "maximum": 100}},
    "required": ["amount"],
    "additionalProperties": False,
}
REVIEWER = ActorIdentity(subject="r", auth_method=AuthMethod.BEARER, tenant_id="t")


def contract(schema=SCHEMA, name="refund-edit"):
    return CreateContractRequest(name=name, json_schema=schema)


@pytest.mark.spec("§2.1 create-contract")
def test_create_replay_conflict_and_scope():
    ecp = Ecp.in_memory()
    first, created = ecp.contracts.create("t", contract())
    again, created_again = ecp.contracts.create("t", contract())
    assert (created, created_again) == (True, False)
    assert again == first
    assert first.digest.startswith("sha256:")
    with pytest.raises(Conflict):
        ecp.contracts.create("t", contract({"type": "string"}))
    with pytest.raises(NotFound):
        ecp.contracts.get("u", "refund-edit")


@pytest.mark.spec("§2.1 create-contract")
def test_an_invalid_schema_is_refused_with_its_location():
    ecp = Ecp.in_memory()
    with pytest.raises(ValidationFailed) as caught:
        ecp.contracts.create("t", contract({"type": 5}))
    assert caught.value.errors[0].loc == ("json_schema", "type")


@pytest.mark.spec("§2.1 create-contract")
@pytest.mark.parametrize("name", ["", "has space", "x" * 201])
def test_contract_names(name):
    with pytest.raises(ValidationFailed) as caught:
        structure({"name": name, "json_schema": {}}, CreateContractRequest)
    assert [e.loc for e in caught.value.errors] == [("name",)]


def gated(ecp):
    ecp.contracts.create("t", contract())
    graph = (
        GraphBuilder("g")
        .action(
            "pay",
            "echo",
            arguments={"amount": 10},
            requires_approval=True,
            resolution_schema_ref="refund-edit",
        )
        .end("done")
        .chain("pay", "done")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    return ecp.runs.drive("t", run.run_id)


@pytest.mark.spec("C3 edit-needs-payload")
def test_edits_must_satisfy_the_contract():
    ecp = Ecp.in_memory()
    run = gated(ecp)
    approval_id = run.pending_approval_ids[0]
    bad = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 500, "extra": True}
    )
    with pytest.raises(ValidationFailed) as caught:
        ecp.resolve(REVIEWER, "d", approval_id, bad)
    assert {e.loc for e in caught.value.errors} == {
        ("edited_payload",),
        ("edited_payload", "amount"),
    }
    assert ecp.approvals.get("t", approval_id).status.value == "pending"
    good = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 50}
    )
    answer = ecp.resolve(REVIEWER, "d", approval_id, good)
    assert answer.run.status.value == "completed"
    assert answer.run.output == {"amount": 50}


@pytest.mark.spec("C3 graph-validation")
def test_graphs_must_name_existing_contracts():
    ecp = Ecp.in_memory()
    graph = (
        GraphBuilder("g")
        .approval("a", summary="s", rationale="r", resolution_schema_ref="nope")
        .build()
    )
    with pytest.raises(ValidationFailed) as caught:
        ecp.graphs.register("t", graph)
    assert [e.loc for e in caught.value.errors] == [("nodes", 0, "resolution_schema_ref")]


@pytest.mark.spec("§2.1 create-contract")
@pytest.mark.parametrize(
    ("schema", "loc"),
    [
        ({"type": "string", "pattern": "("}, ("json_schema", "pattern")),
        ({"$ref": "https://example.com/remote.json"}, ("json_schema", "$ref")),
        ({"$ref": "#/$defs/missing"}, ("json_schema", "$ref")),
        (
            {"properties": {"a": {"$ref": "other.json#/x"}}},
            ("json_schema", "properties", "a", "$ref"),
        ),
        ({"patternProperties": {"[": {}}}, ("json_schema", "patternProperties")),
    ],
)
def test_a_schema_that_cannot_stand_alone_is_refused_where_it_breaks(schema, loc):
    ecp = Ecp.in_memory()
    with pytest.raises(ValidationFailed) as caught:
        ecp.contracts.create("t", contract(schema))
    assert loc in {e.loc for e in caught.value.errors}
    with pytest.raises(NotFound):
        ecp.contracts.get("t", "refund-edit")


def test_a_schema_that_loops_on_itself_refuses_the_edit_and_changes_nothing():
    ecp = Ecp.in_memory()
    ecp.contracts.create("t", contract({"$ref": "#"}, name="loops"))
    graph = (
        GraphBuilder("g")
        .action("pay", "echo", requires_approval=True, resolution_schema_ref="loops")
        .end("done")
        .chain("pay", "done")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="d", graph_id="g"))
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="d"))
    approval_id = ecp.runs.drive("t", run.run_id).pending_approval_ids[0]
    edit = ApprovalResolutionRequest(
        decision=ApprovalDecision.EDIT_AND_APPROVE, edited_payload={"amount": 1}
    )
    with pytest.raises(ValidationFailed) as caught:
        ecp.resolve(REVIEWER, "d", approval_id, edit)
    assert caught.value.code == "schema_not_applicable"
    assert ecp.approvals.get("t", approval_id).status.value == "pending"
