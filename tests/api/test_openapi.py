"""The OpenAPI document: valid 3.1, complete, with the models' constraints; /docs renders it."""

import base64
import pathlib
import re
import string
from collections.abc import Iterator
from decimal import Decimal
from typing import Annotated, Any, Literal

import jsonschema
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from openapi_spec_validator import validate
from starlette.testclient import TestClient

from ecp_core.constraints import Range, Text
from ecp_core.types import ApprovalDecision
from ecp_http.config.settings import Settings
from ecp_http.openapi import api_docs, build_document, document_path
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.wire.json_schema import SchemaBuilder
from ecp_http.wire.query import parameters
from ecp_http.wire.schema_constraints import NO_WHITESPACE_PATTERN, TRIMMED_PATTERN, anchored

pytestmark = [pytest.mark.integration, pytest.mark.spec("C1 openapi")]

JWT_SECRET = "openapi-" + "x" * 32


@pytest.fixture
def client(fresh_database) -> Iterator[TestClient]:
    settings = Settings(
        database_url=fresh_database,
        jwt_secret=JWT_SECRET,
        audit_signing_key=base64.b64encode(bytes(range(32))).decode("ascii"),
    )
    with TestClient(create_app(settings, start_workers=False)) as test_client:
        yield test_client


@pytest.fixture
def document(client) -> dict:
    response = client.get("/openapi.json")  # public: no credentials
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/json")
    return response.json()


def _schema(document: dict, name: str) -> dict:
    return document["components"]["schemas"][name]


def _bare(prop: dict) -> dict:
    """A property's schema without its description (tested on its own)."""
    return {key: value for key, value in prop.items() if key != "description"}


def test_the_document_is_valid_openapi_3_1(document):
    validate(document)
    assert document["openapi"].startswith("3.1")
    assert document["info"]["title"] == "ECP"
    assert document["info"]["version"]
    assert document["info"]["description"]


def test_every_operation_appears_with_its_method_status_and_security(client, document):
    operations = client.app.state.operations
    documented = {
        (path, method.upper()) for path, methods in document["paths"].items() for method in methods
    }
    assert documented == {(document_path(op.path), op.method) for op in operations}
    ids = [op.operation_id for op in operations]
    assert len(ids) == len(set(ids))
    for op in operations:
        entry = document["paths"][document_path(op.path)][op.method.lower()]
        assert entry["operationId"] == op.operation_id
        assert entry["tags"] == [op.tag]
        responses = entry["responses"]
        for status in (op.status, *op.extra_statuses):
            assert str(status) in responses
        if op.public:
            assert entry["security"] == []
            # a console page or its live stream checks its own session cookie (ADR 0080, 0084)
            if op.media_type not in ("text/html", "text/event-stream"):
                assert "401" not in responses
                assert "403" not in responses
        else:
            assert entry["security"] == [{"bearerAuth": []}, {"apiKey": []}]
            assert "application/problem+json" in responses["401"]["content"]
        if op.form:  # an HTML form post (the console's, the account page's)
            assert "415" in responses
        elif op.body is None:
            assert "requestBody" not in entry
            assert "400" not in responses
            assert "415" not in responses
        else:
            body = entry["requestBody"]["content"]["application/json"]["schema"]
            assert body == {"$ref": f"#/components/schemas/{op.body.__name__}"}
            assert {"400", "413", "415"} <= responses.keys()
        assert "422" in responses  # any operation refuses a query parameter it does not declare
        path_params = set(re.findall(r"{(\w+)}", document_path(op.path)))
        params = {(p["name"], p["in"]) for p in entry.get("parameters", [])}
        assert params == {(name, "path") for name in path_params} | {
            (q.name, "query") for q in (parameters(op.query) if op.query else ())
        } | {(h.name, "header") for h in op.headers}
    schemes = document["components"]["securitySchemes"]
    assert schemes["bearerAuth"] == {**schemes["bearerAuth"], "type": "http", "scheme": "bearer"}
    assert schemes["apiKey"] == {
        **schemes["apiKey"],
        "type": "apiKey",
        "in": "header",
        "name": "X-API-Key",
    }


RESOURCE_SCHEMAS = frozenset(
    {
        "ActionDescriptorV1",
        "ActorIdentity",
        "AdminRunListResponse",
        "ApprovalActionRecord",
        "ApprovalDecision",
        "ApprovalPausedState",
        "ApprovalRecord",
        "ApprovalResolution",
        "ApprovalResolutionRequest",
        "ApprovalResolutionResponse",
        "ApprovalStatus",
        "AttestationAck",
        "AttestationSubmission",
        "AttestationVerificationResponse",
        "AuditDeliveryHealth",
        "AuditReadinessResponse",
        "AuditRecordListResponse",
        "AuditTimelineResponse",
        "AuditVerificationResponse",
        "AuthMethod",
        "CandidateOutcome",
        "Capability",
        "CertificationBlocker",
        "CertificationEvaluation",
        "CertificationEvent",
        "CertificationOverride",
        "CertificationOverrideRequest",
        "CertificationResponse",
        "CertificationState",
        "ChildRunSummaryResponse",
        "Condition",
        "ConnectorCreateRequest",
        "ConnectorSummaryResponse",
        "ConnectorTestRequest",
        "ConnectorTestResponse",
        "ConnectorUpdateRequest",
        "ConstantMappingOperation",
        "CreateContractRequest",
        "CreateDeploymentRequest",
        "CreateSubscriptionRequest",
        "CreateTemplateRequest",
        "HumanInteractionType",
        "NodeAuditRecord",
        "OverrideScope",
        "RunStatusResponse",
        "ServiceRole",
        "SideEffectClass",
        "WebhookEventPayload",
        "WebhookEventType",
    }
)
"""Every schema the specification's "Resources and their fields" section defines (its bold names)."""

SPEC = pathlib.Path(__file__).parents[3] / "shared" / "spec" / "governed-workflow-service.md"
"""The specification, where the workplace keeps it beside the checkout (absent elsewhere)."""


@pytest.mark.spec("§2.1 every-resource-has-a-home")
def test_every_schema_of_the_specs_resources_has_a_home(document):
    assert sorted(RESOURCE_SCHEMAS - set(document["components"]["schemas"])) == []
    if SPEC.exists():  # the list above is the specification's, name for name
        text = SPEC.read_text(encoding="utf-8")
        section = text[text.index("## Resources and their fields") : text.index("## States and")]
        assert set(re.findall(r"\*\*([A-Z][A-Za-z0-9]+)\*\*", section)) == RESOURCE_SCHEMAS


def test_problem_responses_refer_to_the_problem_schema(document):
    problem = _schema(document, "Problem")
    assert set(problem["required"]) == {"type", "title", "status", "detail", "code"}
    assert "errors" in problem["properties"]
    resolve = document["paths"]["/deployments/{ref}/approvals/{approval_id}/resolve"]["post"]
    for status in ("400", "401", "403", "404", "409", "422"):
        content = resolve["responses"][status]["content"]
        assert list(content) == ["application/problem+json"]
        problem_json = content["application/problem+json"]
        assert problem_json["schema"] == {"$ref": "#/components/schemas/Problem"}
        assert problem_json["example"]["status"] == int(status)


def test_constraints_are_rendered(document):
    action = _schema(document, "ActionDescriptorV1")
    assert action["additionalProperties"] is False
    assert action["required"] == ["name", "fingerprint"]
    tool_call_id = action["properties"]["tool_call_id"]
    assert tool_call_id["type"] == ["string", "null"]
    assert tool_call_id["minLength"] == 1
    assert tool_call_id["maxLength"] == 256
    assert tool_call_id["pattern"] == TRIMMED_PATTERN
    assert tool_call_id["default"] is None
    assert _bare(action["properties"]["side_effect"]) == {
        "$ref": "#/components/schemas/SideEffectClass",
        "default": "unknown",
    }
    assert _bare(action["properties"]["arguments"]) == {"type": "object", "default": {}}

    reason = _schema(document, "ApprovalResolutionRequest")["properties"]["reason"]
    assert (reason["minLength"], reason["maxLength"]) == (1, 1000)
    assert "null" in reason["type"]

    graph = _schema(document, "GraphDefinition")
    assert graph["additionalProperties"] is False
    assert set(graph["required"]) == {"graph_id", "entry", "nodes"}
    graph_id = graph["properties"]["graph_id"]
    assert graph_id["pattern"] == r"^(?:[A-Za-z0-9][A-Za-z0-9_.:-]*)$"
    assert (graph_id["minLength"], graph_id["maxLength"]) == (1, 200)
    nodes = graph["properties"]["nodes"]
    assert (nodes["minItems"], nodes["maxItems"]) == (1, 1000)
    assert nodes["items"] == {"$ref": "#/components/schemas/NodeDefinition"}
    steps = graph["properties"]["max_steps"]
    assert _bare(steps) == {"type": "integer", "minimum": 1, "maximum": 100_000, "default": 1000}

    deny = _schema(document, "DeploymentPolicyRequest")["properties"]["deny_capabilities"]
    assert deny["uniqueItems"] is True
    assert deny["maxItems"] == 64
    assert deny["items"] == {"$ref": "#/components/schemas/Capability"}
    assert _schema(document, "Capability")["enum"][:2] == ["network_read", "network_write"]

    name = _schema(document, "CreateContractRequest")["properties"]["name"]
    assert name["pattern"] == NO_WHITESPACE_PATTERN

    created_at = _schema(document, "GraphVersion")["properties"]["created_at"]
    assert _bare(created_at) == {"type": "string", "format": "date-time"}
    run = _schema(document, "RunStatusResponse")
    assert _bare(run["properties"]["status"]) == {"$ref": "#/components/schemas/RunPublicStatus"}
    assert _bare(run["properties"]["output"]) == {"type": ["object", "null"]}


def test_extras_allowed_models_are_open_and_unions_are_discriminated(document):
    assert "additionalProperties" not in _schema(document, "Condition")
    assert "additionalProperties" not in _schema(document, "NodeAuditRecord")
    snapshot = _schema(document, "NodeAuditRecord")["properties"]["input_snapshot"]
    assert _bare(snapshot) == {"default": None}
    operations = _schema(document, "MappingNode")["properties"]["operations"]["items"]
    assert operations["discriminator"] == {
        "propertyName": "operation",
        "mapping": {
            "constant": "#/components/schemas/ConstantMappingOperation",
            "copy": "#/components/schemas/CopyMappingOperation",
        },
    }
    constant = _schema(document, "ConstantMappingOperation")
    assert _bare(constant["properties"]["operation"]) == {
        "type": "string",
        "enum": ["constant"],
        "default": "constant",
    }
    assert _bare(constant["properties"]["value"]) == {}
    assert set(constant["required"]) == {"target_path", "value"}
    action_node = _schema(document, "ActionNode")
    assert _bare(action_node["properties"]["action"]) == {
        "$ref": "#/components/schemas/ActionDescriptorV1"
    }
    assert {"kind", "id", "action"} == set(action_node["required"])
    assert _bare(_schema(document, "ApprovalNode")["properties"]["action"]) == {"type": "null"}


def _ecma_search(pattern: str, text: str) -> bool:
    """ECMA-262 ``$`` is the end of the input; Python's also matches before a final newline."""
    assert pattern.endswith("$")
    return re.search(pattern[:-1] + r"\Z", text) is not None


_TRICKY = st.sampled_from(
    [" ", "\t", "\n", "\x1c", "\x85", "\xa0", "\u2028", "\u3000", "\ufeff", "a", "é"]
)


@given(st.text(st.one_of(_TRICKY, st.characters()), max_size=8))
@example(" a")
@example("a\n")
@example("a\u3000")
@example("a b")
def test_whitespace_patterns_agree_with_the_converter(text):
    trimmed = Text(trimmed=True).check(text) is None
    assert _ecma_search(TRIMMED_PATTERN, text) == trimmed
    no_whitespace = Text(no_whitespace=True).check(text) is None
    assert _ecma_search(NO_WHITESPACE_PATTERN, text) == no_whitespace


@given(st.text(string.ascii_letters + string.digits + "_.:-/ ", max_size=6))
def test_anchored_patterns_match_like_fullmatch(text):
    pattern = r"[A-Za-z0-9][A-Za-z0-9_.:-]*"
    assert _ecma_search(anchored(pattern), text) == (re.fullmatch(pattern, text) is not None)


def test_public_routes_answer_without_credentials(client):
    docs = client.get("/docs")
    assert docs.status_code == 200
    assert docs.headers["content-type"].startswith("text/html")
    page = docs.text
    assert page.startswith("<!doctype html>")
    assert 'href="openapi.json"' in page
    # Swagger UI from this server's own files (tests/docs/test_api_reference.py, ADR 0056)
    assert '<script src="static/docs/' in page
    assert client.get("/health/live").status_code == 200


def test_the_document_is_generated_once(client, monkeypatch):
    calls = []

    def counting(operations):
        calls.append(len(operations))
        return build_document(operations)

    monkeypatch.setattr(api_docs, "build_document", counting)
    first = client.get("/openapi.json").json()
    assert client.get("/openapi.json").json() == first
    assert client.get("/docs").text == client.get("/docs").text
    assert calls == [len(client.app.state.operations)]


def _validator(document: dict, schema: dict) -> jsonschema.Draft202012Validator:
    root = {**document, **schema}  # "#/components/..." refers into the document
    return jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())


def test_real_responses_match_the_document(client, document):
    """A whole run through the API, every answer checked against the documented schema."""
    token = mint_token(JWT_SECRET, tenant="docs", roles=["admin"])
    headers = {"Authorization": f"Bearer {token}"}
    seen = set()

    def call(method, template, body=None, **params):
        response = client.request(method, template.format(**params), json=body, headers=headers)
        entry = document["paths"][template.split("?")[0]][method.lower()]
        documented = entry["responses"][str(response.status_code)]
        media = response.headers["content-type"].split(";")[0]
        _validator(document, documented["content"][media]["schema"]).validate(response.json())
        seen.add((template.split("?")[0], method))
        return response.json()

    graph = {
        "graph_id": "refunds",
        "entry": "classify",
        "nodes": [
            {
                "id": "classify",
                "kind": "action",
                "action": {
                    "name": "set",
                    "fingerprint": "set/1",
                    "arguments": {"values": {"ok": True}},
                },
            },
            {
                "id": "review",
                "kind": "approval",
                "summary": "Approve",
                "rationale": "A person decides",
            },
            {"id": "done", "kind": "end"},
        ],
        "edges": [
            {"source": "classify", "target": "review"},
            {"source": "review", "target": "done"},
        ],
    }
    call("POST", "/v1/graphs", graph)
    call("GET", "/v1/graphs/{graph_id}?version=1", graph_id="refunds")
    call("POST", "/v1/deployments", {"deployment_ref": "refunds", "graph_id": "refunds"})
    call("GET", "/v1/deployments/{ref}/policy", ref="refunds")  # 404: no policy yet
    call(
        "PUT",
        "/v1/deployments/{ref}/policy",
        {"deny_capabilities": ["process_spawn"]},
        ref="refunds",
    )
    call("GET", "/v1/deployments/{ref}/policy", ref="refunds")
    call("GET", "/v1/deployments/{ref}", ref="refunds")
    call("POST", "/v1/contracts", {"name": "refund", "json_schema": {"type": "object"}})
    call("GET", "/v1/contracts/{name}", name="refund")
    run = call("POST", "/runs", {"deployment_ref": "refunds", "input": {"order": "A-1"}})
    client.app.state.runtime.ecp.runs.drive("docs", run["run_id"])  # workers are not started
    run = call("GET", "/runs/{run_id}", run_id=run["run_id"])
    assert run["status"] == "waiting_approval"
    approvals = call("GET", "/runs/{run_id}/approvals?status=pending", run_id=run["run_id"])
    approval_id = approvals["approvals"][0]["approval_id"]
    resolved = call(
        "POST",
        "/deployments/{ref}/approvals/{approval_id}/resolve",
        {"decision": "approve", "reason": "fine"},
        ref="refunds",
        approval_id=approval_id,
    )
    assert resolved["approval"]["status"] == "resolved"
    call(
        "POST",
        "/deployments/{ref}/approvals/{approval_id}/resolve",  # 409: already resolved
        {"decision": "approve"},
        ref="refunds",
        approval_id=approval_id,
    )
    call("GET", "/runs/{run_id}/timeline", run_id=run["run_id"])
    call("GET", "/runs/{run_id}/audit/verify", run_id=run["run_id"])
    call("GET", "/deployments/{ref}/audits?run_id={run_id}", ref="refunds", run_id=run["run_id"])
    call("GET", "/deployments/{ref}/audits/verify", ref="refunds")
    call("GET", "/v1/audit/signing-keys")
    call("GET", "/admin/runs?limit=1")
    call("GET", "/health/live")
    call("GET", "/health/ready")  # 503 here: the dispatcher is not running
    call("GET", "/runs/{run_id}", run_id="no-such-run")  # 404 problem
    call("POST", "/v1/contracts", {"name": "bad name", "json_schema": {}})  # 422 problem
    call("GET", "/openapi.json")
    assert len(seen) >= 20


def test_the_schema_builder_covers_the_wire_types():
    builder = SchemaBuilder()
    assert builder.schema(tuple[int, str]) == {
        "type": "array",
        "prefixItems": [{"type": "integer"}, {"type": "string"}],
        "minItems": 2,
        "maxItems": 2,
    }
    assert builder.schema(frozenset[str]) == {
        "type": "array",
        "items": {"type": "string"},
        "uniqueItems": True,
    }
    assert builder.schema(dict[str, int]) == {
        "type": "object",
        "additionalProperties": {"type": "integer"},
    }
    assert builder.schema(dict[str, Any]) == {"type": "object"}
    assert builder.schema(Any) == {}
    assert builder.schema(Decimal)["type"] == "string"
    assert builder.schema(Literal["a", 1]) == {"enum": ["a", 1]}
    assert builder.schema(int | str) == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert builder.schema(int | None) == {"type": ["integer", "null"]}
    assert builder.schema(Annotated[int, Range(0, 9)] | None) == {
        "type": ["integer", "null"],
        "minimum": 0,
        "maximum": 9,
    }
    assert builder.schema(ApprovalDecision | None) == {
        "anyOf": [{"$ref": "#/components/schemas/ApprovalDecision"}, {"type": "null"}]
    }
    assert builder.components["ApprovalDecision"]["enum"] == [
        "approve",
        "reject",
        "edit_and_approve",
    ]
    both = builder.schema(Annotated[str, Text(pattern="[a-z]+", no_whitespace=True)])
    assert both["pattern"] == "^(?:[a-z]+)$"
    assert both["allOf"] == [{"pattern": NO_WHITESPACE_PATTERN}]
    with pytest.raises(TypeError, match="no JSON Schema"):
        builder.schema(bytes)
