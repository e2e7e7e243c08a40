"""Component names: a model takes its class name unless that name is reserved or taken."""

import attrs
import pytest

from ecp_http.json_schema import SchemaBuilder
from ecp_http.openapi import PROBLEM, build_document
from ecp_http.routing import Operation

pytestmark = pytest.mark.spec("C1 openapi")

QUALIFIED = "tests.unit.test_json_schema.Problem"


@attrs.frozen
class Problem:
    """A model whose class name is the one the problem detail schema uses."""

    note: str


def _problem_answer(call: object, services: object) -> None:
    """A stand-in handler: only its name (the operation id) is read."""


def test_a_reserved_name_is_qualified_by_the_module():
    assert SchemaBuilder().ref(Problem) == {"$ref": "#/components/schemas/Problem"}
    builder = SchemaBuilder(reserved={PROBLEM})
    assert builder.ref(Problem) == {"$ref": f"#/components/schemas/{QUALIFIED}"}
    assert builder.ref(Problem) == {"$ref": f"#/components/schemas/{QUALIFIED}"}
    assert list(builder.components) == [QUALIFIED]


def test_the_document_keeps_problem_for_the_problem_detail():
    operation = Operation(
        method="GET",
        path="/problem",
        handler=_problem_answer,
        summary="s",
        tag="t",
        permission=None,
        response=Problem,
    )
    document = build_document([operation])
    schemas = document["components"]["schemas"]
    assert schemas[QUALIFIED]["properties"] == {"note": {"type": "string"}}
    assert schemas[PROBLEM]["required"] == ["type", "title", "status", "detail", "code"]
    success = document["paths"]["/problem"]["get"]["responses"]["200"]
    assert success["content"]["application/json"]["schema"] == {
        "$ref": f"#/components/schemas/{QUALIFIED}"
    }
