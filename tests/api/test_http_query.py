"""Query strings as models: one declaration read by the routing and rendered into OpenAPI."""

import string

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.debugger.model import DebuggerQuery
from ecp_core.errors import ValidationFailed
from ecp_http.openapi import _parameters
from ecp_http.server.routing import Operation
from ecp_http.wire.json_schema import SchemaBuilder
from ecp_http.wire.models import (
    DebuggerReportQuery,
    GraphVersionQuery,
    PageQuery,
    ReportFormatQuery,
)
from ecp_http.wire.query import parameters, structure_query

pytestmark = pytest.mark.unit

WINDOW = {"workflow_id": "w", "start": "2026-03-01T00:00:00Z", "end": "2026-03-02T00:00:00Z"}


@given(st.text(string.digits + "²①５+- x", max_size=5))
def test_a_whole_number_is_ascii_digits_within_its_range(raw):
    if raw.isascii() and raw.isdigit() and len(raw) <= 3 and 1 <= int(raw) <= 500:
        assert structure_query(PageQuery, {"limit": raw}) == PageQuery(limit=int(raw))
        return
    with pytest.raises(ValidationFailed) as refused:
        structure_query(PageQuery, {"limit": raw})
    assert refused.value.detail == "invalid limit"
    assert [(e.loc, e.msg) for e in refused.value.errors] == [
        (("query", "limit"), "must be a whole number from 1 to 500")
    ]


@given(st.text(max_size=12))
def test_a_choice_takes_exactly_its_literals(raw):
    if raw in {"json", "markdown"}:
        assert structure_query(ReportFormatQuery, {"format": raw}).format == raw
        return
    with pytest.raises(ValidationFailed) as refused:
        structure_query(ReportFormatQuery, {"format": raw})
    assert [(e.loc, e.msg) for e in refused.value.errors] == [
        (("query", "format"), "must be json or markdown")
    ]


def test_absent_parameters_take_the_model_defaults():
    assert structure_query(PageQuery, {}) == PageQuery(limit=50, cursor=None)
    assert structure_query(GraphVersionQuery, {}).version is None


def test_the_choices_are_read_before_the_rest():
    with pytest.raises(ValidationFailed) as refused:
        structure_query(DebuggerReportQuery, {"format": "pdf"})  # the window is missing too
    assert refused.value.detail == "invalid format"


def test_the_rest_is_refused_together_with_every_location_under_query():
    with pytest.raises(ValidationFailed) as refused:
        structure_query(DebuggerQuery, {**WINDOW, "start": "yesterday", "granularity": "week"})
    assert refused.value.detail == "the query is invalid"
    assert {e.loc for e in refused.value.errors} == {("query", "start"), ("query", "granularity")}


def test_the_document_lists_the_model_fields_as_parameters():
    operation = Operation(
        method="GET",
        path="/things/{thing_id}",
        handler=lambda call, services: None,
        summary="s",
        tag="t",
        permission=None,
        query=DebuggerReportQuery,
    )
    found = _parameters(operation, SchemaBuilder())
    assert [(p["name"], p["in"], p["required"]) for p in found] == [
        ("thing_id", "path", True),
        *((param.name, "query", param.required) for param in parameters(DebuggerReportQuery)),
    ]
    by_name = {p["name"]: p for p in found}
    assert by_name["start"]["description"] == "Window start (inclusive)."
    assert by_name["format"]["schema"] == {"type": "string", "enum": ["json", "markdown"]}
    assert by_name["workflow_id"]["schema"] == {"type": "string", "minLength": 1, "maxLength": 256}
    limit = _parameters(
        Operation(
            method="GET",
            path="/p",
            handler=lambda call, services: None,
            summary="s",
            tag="t",
            permission=None,
            query=PageQuery,
        ),
        SchemaBuilder(),
    )[0]
    assert limit == {
        "name": "limit",
        "in": "query",
        "required": False,
        "schema": {"type": "integer", "minimum": 1, "maximum": 500},
    }
