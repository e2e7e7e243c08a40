"""Component names: a model takes its class name; a reserved or taken name is refused (ADR 0055)."""

import attrs
import pytest

from ecp_http.openapi import PROBLEM, build_document
from ecp_http.server.routing import Operation
from ecp_http.wire.json_schema import SchemaBuilder

pytestmark = [pytest.mark.unit, pytest.mark.spec("C1 openapi-schema-names")]


@attrs.frozen
class Problem:
    """A model whose class name is the one the problem detail schema uses."""

    note: str


def _problem_answer(call: object, services: object) -> None:
    """A stand-in handler: only its name is read."""


def test_a_reserved_name_is_refused_not_qualified_by_the_module():
    assert SchemaBuilder().ref(Problem) == {"$ref": "#/components/schemas/Problem"}
    builder = SchemaBuilder(reserved={PROBLEM})
    with pytest.raises(TypeError, match=r"tests\.graphs\.test_json_schema\.Problem .* 'Problem'"):
        builder.ref(Problem)
    assert builder.components == {}


def test_the_document_keeps_problem_for_the_problem_detail():
    operation = Operation(
        method="GET",
        path="/problem",
        handler=_problem_answer,
        operation_id="t_problem",
        summary="s",
        tag="t",
        permission=None,
        response=Problem,
    )
    with pytest.raises(TypeError, match="'Problem'"):
        build_document([operation])
