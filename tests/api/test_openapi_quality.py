"""What makes the OpenAPI document fit for client generators (ADR 0055).

Operation ids that read as method names, schema names that are class names, a node schema per
kind that agrees with the graph validation, a description on every property, and only the error
statuses an operation can give.
"""

import base64
import re
from collections.abc import Iterator
from typing import Any

import attrs
import jsonschema
import pytest
from starlette.testclient import TestClient

from ecp_core.graphs import ActionDescriptorV1, ConstantMappingOperation, SubgraphCall
from ecp_core.graphs.definition import GraphDefinition, NodeDefinition
from ecp_core.graphs.node_kinds import NODE_FIELDS
from ecp_core.graphs.validation import graph_errors
from ecp_core.memory import MemoryStore
from ecp_core.types import ApprovalDecision, NodeKind, ServiceRole
from ecp_core.wire import unstructure
from ecp_http.config.settings import Settings
from ecp_http.openapi import build_document, document_path
from ecp_http.server.handlers import all_operations
from ecp_http.server.routing import Operation
from ecp_http.startup.app import create_app
from ecp_http.wire.json_schema import SchemaBuilder

pytestmark = pytest.mark.integration

OPERATIONS = all_operations(billing_enabled=True, identity_enabled=True)


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    return build_document(OPERATIONS)


@pytest.mark.spec("C1 openapi-operation-ids")
def test_operation_ids_read_as_method_names():
    ids = [operation.operation_id for operation in OPERATIONS]
    assert len(ids) == len(set(ids))
    for operation in OPERATIONS:
        tag = operation.tag.replace("-", "_")
        assert re.fullmatch(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)+", operation.operation_id), operation
        assert operation.operation_id.startswith(f"{tag}_"), operation.operation_id
    by_id = {operation.operation_id: operation for operation in OPERATIONS}
    assert (by_id["runs_start"].method, by_id["runs_start"].path) == ("POST", "/runs")
    resolve = by_id["approvals_resolve"].path
    assert resolve == "/deployments/{ref}/approvals/{approval_id}/resolve"


@pytest.mark.spec("C1 openapi-schema-names")
def test_schema_names_are_unique_class_names(document):
    for name in document["components"]["schemas"]:
        assert re.fullmatch(r"[A-Z][A-Za-z0-9]*", name), name

    def model(name: str) -> type:
        return attrs.make_class(name, {"value": attrs.field(type=int)})

    builder = SchemaBuilder(reserved={"Problem"})
    builder.schema(model("Twin"))
    with pytest.raises(TypeError, match="'Twin'"):
        builder.schema(model("Twin"))  # another class of the same name: refused, not renamed
    with pytest.raises(TypeError, match="'Problem'"):
        builder.schema(model("Problem"))


SAMPLES: dict[str, Any] = {
    "action": ActionDescriptorV1(name="set", fingerprint="set/1", requires_approval=True),
    "summary": "Approve it",
    "rationale": "A person decides",
    "allowed_actions": (ApprovalDecision.APPROVE,),
    "resolution_schema_ref": "refund",
    "sla_seconds": 60,
    "operations": (ConstantMappingOperation(target_path="a", value=1),),
    "target_path": "answer",
    "prompt": "Which one?",
    "lock_seconds": 30,
    "max_attempts": 2,
    "subgraph": SubgraphCall(deployment_ref="child", requires_approval=True),
    "min_approvals": 2,
    "forbid_self_approval": True,
    "approver_roles": (ServiceRole.APPROVER,),
    "approver_subjects": ("carol", "dave"),
    "seconds": 60,
    "until_path": "wake_at",
}
"""A valid value of every field a kind may take (gated work, so the approval fields apply)."""


def _field_errors(node: NodeDefinition) -> set[str]:
    graph = GraphDefinition(graph_id="g", entry=node.id, nodes=(node,))
    return {str(error.loc[2]) for error in graph_errors(graph) if error.loc[:2] == ("nodes", 0)}


def _schema_accepts(document: dict[str, Any], node: NodeDefinition) -> bool:
    root = {**document, "$ref": "#/components/schemas/NodeDefinition"}
    return jsonschema.Draft202012Validator(root).is_valid(unstructure(node))


@pytest.mark.spec("C1 openapi-node-kinds")
@pytest.mark.parametrize("kind", list(NodeKind))
def test_each_kind_of_node_has_a_schema_that_agrees_with_the_validation(document, kind):
    fields = NODE_FIELDS[kind]
    assert set(SAMPLES) == {f.name for f in attrs.fields(NodeDefinition)} - {"id", "kind"}
    variant = document["components"]["schemas"][fields.title]
    assert variant["properties"]["kind"]["const"] == kind.value
    assert variant["required"] == ["kind", "id", *fields.required]
    mapping = document["components"]["schemas"]["NodeDefinition"]["discriminator"]["mapping"]
    assert mapping[kind.value] == f"#/components/schemas/{fields.title}"

    given = (*fields.required, *fields.one_of[:1])
    base = NodeDefinition(id="n", kind=kind, **{name: SAMPLES[name] for name in given})
    assert _field_errors(base) == set()
    assert _schema_accepts(document, base)
    for name in fields.required:  # left out: refused by both
        without = attrs.evolve(base, **{name: () if name == "operations" else None})
        assert name in _field_errors(without), name
        assert not _schema_accepts(document, without), name
    for name in fields.optional:  # taken: accepted by both
        with_it = attrs.evolve(base, **{name: SAMPLES[name]})
        assert _field_errors(with_it) == set(), name
        assert _schema_accepts(document, with_it), name
    if fields.one_of:  # exactly one: none, or two, refused by both; each alone accepted
        nothing = attrs.evolve(base, **dict.fromkeys(fields.one_of))
        assert _field_errors(nothing) != set()
        assert not _schema_accepts(document, nothing)
        every = attrs.evolve(base, **{name: SAMPLES[name] for name in fields.one_of})
        assert _field_errors(every) != set()
        assert not _schema_accepts(document, every)
        for name in fields.one_of:
            alone = attrs.evolve(nothing, **{name: SAMPLES[name]})
            assert _field_errors(alone) == set(), name
            assert _schema_accepts(document, alone), name
    taken = {*fields.required, *fields.optional, *fields.one_of}
    for name in set(SAMPLES) - taken:  # not taken: refused by both
        with_it = attrs.evolve(base, **{name: SAMPLES[name]})
        assert name in _field_errors(with_it), name
        assert not _schema_accepts(document, with_it), name


NOT_YET_DESCRIBED: frozenset[str] = frozenset()
"""Schemas with a property that has no description yet: this list only shrinks (ADR 0055)."""


@pytest.mark.spec("C1 openapi-descriptions")
def test_every_property_has_a_description(document):
    undescribed: dict[str, list[str]] = {}
    for name, schema in document["components"]["schemas"].items():
        missing = [
            p for p, prop in schema.get("properties", {}).items() if not prop.get("description")
        ]
        if missing:
            undescribed[name] = missing
    newly = {name: props for name, props in undescribed.items() if name not in NOT_YET_DESCRIBED}
    assert newly == {}, "describe these fields with a docstring below each"
    assert sorted(NOT_YET_DESCRIBED - set(undescribed)) == []  # described now: take it off
    quickstart = ("GraphDefinition", "ActionNode", "ApprovalNode", "EdgeDefinition")
    quickstart += ("StartRunRequest", "RunStatusResponse", "ApprovalRecord", "NodeAuditRecord")
    assert not set(quickstart) & NOT_YET_DESCRIBED


def _statuses(document: dict[str, Any], operation: Operation) -> set[int]:
    entry = document["paths"][document_path(operation.path)][operation.method.lower()]
    return {int(status) for status in entry["responses"]}


@pytest.mark.spec("C1 openapi-error-responses")
def test_an_operation_lists_only_the_errors_it_can_give(document):
    for operation in OPERATIONS:
        statuses = _statuses(document, operation)
        declared = {operation.status, *operation.extra_statuses}  # stated by the operation itself
        reads_body = operation.body is not None or operation.raw_body or operation.form
        writes = operation.method not in ("GET", "HEAD")
        expected = {
            400: operation.body is not None,
            401: not operation.public,
            403: operation.permission is not None and not operation.public,
            404: "{" in operation.path or (writes and operation.body is not None),
            409: writes and not operation.public,  # no 409 on a plain read
            413: reads_body,
            415: reads_body,
            422: True,  # every operation refuses a query parameter it does not declare
        }
        for status, listed in expected.items():
            if status not in declared:
                assert (status in statuses) == listed, (operation.operation_id, status)
    live = document["paths"]["/health/live"]["get"]["responses"]
    assert set(live) == {"200", "422"}
    assert live["422"]["description"].endswith("(code: `unknown_parameter`)")


@pytest.fixture
def client() -> Iterator[TestClient]:
    settings = Settings(
        jwt_secret="q" * 40, audit_signing_key=base64.b64encode(bytes(32)).decode("ascii")
    )
    with TestClient(create_app(settings, storage=MemoryStore(), start_workers=False)) as served:
        yield served


@pytest.mark.spec("C1 openapi-error-responses")
def test_an_operation_without_input_still_refuses_an_undeclared_parameter(client):
    answer = client.get("/health/live", params={"verbose": "1"})
    assert answer.status_code == 422
    assert answer.json()["code"] == "unknown_parameter"
