"""Tenant ``pattern``s in JSON Schemas run in linear time, by RE2 (ADR 0097)."""

import re
import subprocess
import sys
import textwrap

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import Ecp
from ecp_core.contracts import CreateContractRequest, payload_errors, schema_errors
from ecp_core.contracts.patterns import search
from ecp_core.errors import NotFound, SchemaNotApplicable, ValidationFailed
from ecp_core.templates.model import CreateTemplateRequest
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

EVIL = "^(a+)+$"
"""Backtracks exponentially in ``re`` on ``"a" * n + "b"``; linear in RE2."""

_SPIN = textwrap.dedent(
    """
    from ecp_core import Ecp
    from ecp_core.contracts import payload_errors
    from ecp_core.errors import ValidationFailed
    from ecp_core.templates.model import CreateTemplateRequest, InstantiateTemplateRequest
    from ecp_core.wire import structure

    EVIL, SUBJECT = "^(a+)+$", "a" * 100_000 + "b"
    ecp = Ecp.in_memory()
    parameters = {
        "type": "object",
        "properties": {"name": {"type": "string", "pattern": EVIL, "default": "a"}},
    }
    graph = {
        "entry": "a",
        "nodes": [
            {"id": "a", "kind": "action", "action": {"name": "set", "fingerprint": "set/1",
                "arguments": {"values": {"name": {"$param": "name"}}}}},
            {"id": "b", "kind": "end"},
        ],
        "edges": [{"source": "a", "target": "b"}],
    }
    body = {"name": "evil", "parameters": parameters, "graph": graph}
    ecp.templates.create("t", structure(body, CreateTemplateRequest))
    try:
        ecp.templates.instantiate(
            "t", "evil", InstantiateTemplateRequest(graph_id="g", arguments={"name": SUBJECT})
        )
    except ValidationFailed as refused:
        print("template", [e.loc for e in refused.errors])
    keyed = {"type": "object", "patternProperties": {EVIL: {"type": "string"}}}
    print("patternProperties", [e.loc for e in payload_errors(keyed, {SUBJECT: 1, "aaa": 1})])
    closed = {"type": "object", "patternProperties": {EVIL: {}}, "additionalProperties": False}
    print("additionalProperties", len(payload_errors(closed, {SUBJECT: 1})))
    print("propertyNames", len(payload_errors({"propertyNames": {"pattern": EVIL}}, {SUBJECT: 1})))
    """
)


@pytest.mark.spec("C19 linear-patterns")
def test_a_backtracking_pattern_against_a_long_subject_is_answered() -> None:
    """``re`` would run for ever on these; RE2 answers each with its errors at once.

    A child process, so that a spinning match (which holds the GIL) fails the test at the
    timeout instead of hanging the suite; the timeout is a ceiling for ``ecp_core``'s import
    on a loaded machine, never a measurement.
    """
    done = subprocess.run(  # this interpreter, a fixed script
        [sys.executable, "-c", _SPIN], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "template [('arguments', 'name')]",
        "patternProperties [('aaa',)]",
        "additionalProperties 1",
        "propertyNames 1",
    ]


@pytest.mark.spec("C19 linear-patterns")
@pytest.mark.parametrize(
    ("schema", "loc"),
    [
        ({"type": "string", "pattern": "(a)\\1"}, ("json_schema", "pattern")),
        (
            {"properties": {"code": {"type": "string", "pattern": "^(?=x)"}}},
            ("json_schema", "properties", "code", "pattern"),
        ),
        ({"patternProperties": {"(?<!a)b": {}}}, ("json_schema", "patternProperties")),
        ({"pattern": "a{1001}"}, ("json_schema", "pattern")),  # past RE2's repeat bound
        (  # a dialect whose meta-schema does not say these keys are regular expressions
            {
                "$schema": "http://json-schema.org/draft-04/schema#",
                "patternProperties": {"(a)\\1": {}},
            },
            ("json_schema", "patternProperties"),
        ),
        (
            {"patternProperties": {"^x": {}}, "unevaluatedProperties": False},
            ("json_schema", "unevaluatedProperties"),
        ),
    ],
)
def test_a_pattern_re2_cannot_run_is_refused_where_it_is_stored(schema, loc) -> None:
    ecp = Ecp.in_memory()
    with pytest.raises(ValidationFailed) as caught:
        ecp.contracts.create("t", CreateContractRequest(name="c", json_schema=schema))
    assert [e.loc for e in caught.value.errors] == [loc]
    assert "RE2" in caught.value.errors[0].msg or "unevaluated" in str(loc)
    with pytest.raises(NotFound):
        ecp.contracts.get("t", "c")


@pytest.mark.spec("C19 linear-patterns")
def test_a_template_parameter_pattern_re2_cannot_run_is_refused() -> None:
    ecp = Ecp.in_memory()
    parameters = {"type": "object", "properties": {"p": {"type": "string", "pattern": "(a)\\1"}}}
    graph = {"entry": "e", "nodes": [{"id": "e", "kind": "end"}]}
    body = {"name": "x", "parameters": parameters, "graph": graph}
    with pytest.raises(ValidationFailed) as caught:
        ecp.templates.create("t", structure(body, CreateTemplateRequest))
    assert [e.loc for e in caught.value.errors] == [("parameters", "properties", "p", "pattern")]


@pytest.mark.spec("C19 linear-patterns")
def test_a_stored_schema_re2_cannot_run_is_not_applicable_never_a_crash() -> None:
    """Schemas stored before these rules: refused when applied, as an error of the schema."""
    for schema in (
        {"pattern": "(a)\\1"},
        {"patternProperties": {"(?=a)": {}}},
        {"patternProperties": {"^x": {}}, "unevaluatedProperties": False},
    ):
        with pytest.raises(SchemaNotApplicable):
            payload_errors(schema, {"a": "a"} if "pattern" not in schema else "a")


@pytest.mark.spec("C19 linear-patterns")
def test_lone_surrogates_are_an_error_of_the_pattern_and_never_a_crash() -> None:
    [error] = schema_errors({"pattern": "a\ud800"})
    assert error.loc == ("pattern",)
    assert "lone surrogate" in error.msg
    assert payload_errors({"pattern": "^a"}, "a\ud800") == []
    assert [e.loc for e in payload_errors({"pattern": "^b"}, "a\ud800")] == [()]
    keyed = {"patternProperties": {"^a": {"type": "string"}}}
    assert [e.loc for e in payload_errors(keyed, {"a\ud800": 1})] == [("a\ud800",)]


@pytest.mark.spec("C19 linear-patterns")
def test_patterns_keep_their_meaning_under_re2() -> None:
    schema = {
        "type": "object",
        "properties": {"word": {"type": "string", "pattern": "^\\u00e9t\\u00E9$"}},
        "patternProperties": {"^x-": {"type": "integer"}},
        "additionalProperties": {"type": "boolean"},
    }
    assert schema_errors(schema) == []
    assert payload_errors(schema, {"word": "été", "x-a": 1, "flag": True}) == []
    errors = payload_errors(schema, {"word": "ete", "x-a": "1", "flag": 1})
    assert [e.loc for e in errors] == [("flag",), ("word",), ("x-a",)]
    assert payload_errors({"pattern": "\\\\u00e9"}, "\\u00e9") == []  # an escaped backslash
    closed = {"patternProperties": {"^x-": {}}, "additionalProperties": False}
    assert [e.msg for e in payload_errors(closed, {"x-a": 1, "y": 2})] == [
        "'y' does not match any of the regexes: '^x-'"
    ]
    assert [e.msg for e in payload_errors({"additionalProperties": False}, {"y": 2})] == [
        "Additional properties are not allowed ('y' was unexpected)"
    ]


_ATOMS = st.sampled_from(["a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "\\d", "\\w", "\\."])
_QUANTIFIERS = st.sampled_from(["", "", "*", "+", "?", "{2}", "{1,3}", "*?", "+?"])


@st.composite
def _simple_patterns(draw: st.DrawFn) -> str:
    """Literals, classes, quantifiers, groups, alternation and anchors."""

    def branch() -> str:
        pieces = draw(st.lists(st.tuples(_ATOMS, _QUANTIFIERS), min_size=1, max_size=4))
        body = "".join(atom + quantifier for atom, quantifier in pieces)
        if draw(st.booleans()):
            body = f"({body}){draw(_QUANTIFIERS)}"
        return body

    alternatives = [branch() for _ in range(draw(st.integers(1, 3)))]
    start = "^" if draw(st.booleans()) else ""
    end = "$" if draw(st.booleans()) else ""
    return (
        start + "|".join(alternatives) + end
        if len(alternatives) == 1
        else (f"{start}(?:{'|'.join(alternatives)}){end}")
    )


@pytest.mark.spec("C19 re2-agrees")
@given(pattern=_simple_patterns(), text=st.text(alphabet="abc.1_- ", max_size=12))
def test_re2_and_re_agree_on_simple_patterns(pattern: str, text: str) -> None:
    """On ASCII subjects without line breaks, the patterns RE2 now runs mean what ``re`` did."""
    assert search(pattern, text) == (re.search(pattern, text) is not None)
