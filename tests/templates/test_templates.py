"""Template use cases on the memory store: create, versions, checks, instantiation (ADR 0045)."""

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import NotFound, UnknownAction, ValidationFailed
from ecp_core.graphs import graph_digest
from ecp_core.service import Ecp
from ecp_core.templates.model import CreateTemplateRequest, InstantiateTemplateRequest
from ecp_core.templates.rules import checked_payload
from ecp_core.testing.strategies.text import json_values, text
from ecp_core.wire import structure

pytestmark = pytest.mark.unit

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "category": {"type": "string", "default": "refund"},
        "steps": {"type": "integer", "minimum": 3},
        "extra": {},
    },
    "required": ["steps"],
}


def graph(values: Any = None, action: str = "set") -> dict[str, Any]:
    """A two-node template graph: ``set`` of ``values`` (holes by default), then the end."""
    if values is None:
        values = {"category": {"$param": "category"}, "raw": {"$literal": {"$param": "x"}}}
    return {
        "entry": "a",
        "nodes": [
            {
                "id": "a",
                "kind": "action",
                "action": {
                    "name": action,
                    "fingerprint": f"{action}/1",
                    "arguments": {"values": values},
                },
            },
            {"id": "b", "kind": "end"},
        ],
        "edges": [{"source": "a", "target": "b"}],
        "max_steps": {"$param": "steps"},
    }


def request(name: str = "triage", **fields: Any) -> CreateTemplateRequest:
    body = {"name": name, "parameters": PARAMETERS, "graph": graph(), **fields}
    return structure(body, CreateTemplateRequest)


def arguments(graph_id: str = "g", **values: Any) -> InstantiateTemplateRequest:
    return InstantiateTemplateRequest(graph_id=graph_id, arguments=values)


@pytest.fixture
def ecp() -> Ecp:
    return Ecp.in_memory(refuse_unknown_actions=True)


@pytest.mark.spec("§2.1 create-template")
def test_versions_grow_with_content_and_an_identical_create_is_its_version(ecp: Ecp) -> None:
    first, created = ecp.templates.create("t1", request())
    assert (first.version, created) == (1, True)
    again, created = ecp.templates.create("t1", request())
    assert (again, created) == (first, False)
    second, created = ecp.templates.create("t1", request(description="Triage, with notes"))
    assert (second.version, created) == (2, True)
    assert ecp.templates.create("t1", request())[0] == first  # an earlier content is its version
    assert ecp.templates.version("t1", "triage") == second
    assert ecp.templates.version("t1", "triage", 1) == first
    assert ecp.templates.create("t2", request())[0].version == 1  # tenants number apart
    with pytest.raises(NotFound):
        ecp.templates.version("t1", "triage", 3)
    with pytest.raises(NotFound):
        ecp.templates.version("t3", "triage")


def refused(ecp: Ecp, body: CreateTemplateRequest) -> list[tuple[Any, ...]]:
    with pytest.raises(ValidationFailed) as caught:
        ecp.templates.create("t1", body)
    with pytest.raises(NotFound):
        ecp.templates.version("t1", body.name)
    return [e.loc for e in caught.value.errors]


@pytest.mark.spec("§2.1 create-template")
@pytest.mark.parametrize(
    ("parameters", "loc"),
    [
        ({"type": 12}, ("parameters", "type")),
        ({"type": "array"}, ("parameters", "type")),
        ({"properties": {}}, ("parameters", "type")),
        (
            {"type": "object", "properties": {"steps": {"type": "integer", "default": "x"}}},
            ("parameters", "properties", "steps", "default"),
        ),
        (
            {"type": "object", "properties": {"steps": {"type": "string", "pattern": "("}}},
            ("parameters", "properties", "steps", "pattern"),
        ),
        ({"type": "object", "allOf": [{"$ref": "#"}]}, ("parameters",)),
    ],
)
def test_a_bad_parameters_schema_is_refused_and_nothing_stored(
    ecp: Ecp, parameters: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    assert refused(ecp, request(parameters=parameters)) == [loc]


@pytest.mark.spec("§2.1 create-template")
def test_holes_must_name_declared_parameters(ecp: Ecp) -> None:
    body = request(graph=graph({"who": {"$param": "nobody"}, "bad": {"$param": 3}}))
    locs = refused(ecp, body)
    values = ("graph", "nodes", 0, "action", "arguments", "values")
    assert sorted(map(str, locs)) == sorted(map(str, [(*values, "who"), (*values, "bad")]))


@pytest.mark.spec("§2.1 create-template")
@pytest.mark.parametrize(
    ("changed", "loc"),
    [
        ({"$param": "steps"}, ("graph",)),
        ({"$literal": {}}, ("graph",)),
        ({**graph(), "graph_id": "fixed"}, ("graph", "graph_id")),
    ],
)
def test_the_graph_is_a_graph_without_its_id(
    ecp: Ecp, changed: dict[str, Any], loc: tuple[Any, ...]
) -> None:
    assert refused(ecp, request(graph=changed)) == [loc]


@pytest.mark.spec("§2.1 create-template", "C10 action-plugins")
def test_a_template_whose_defaults_make_a_bad_graph_is_refused(ecp: Ecp) -> None:
    defaulted = {"type": "object", "properties": {"steps": {"type": "integer", "default": 5}}}
    unknown = request(parameters=defaulted, graph=graph({}, action="nope"))
    with pytest.raises(UnknownAction) as caught:
        ecp.templates.create("t1", unknown)
    assert caught.value.errors[0].loc[:2] == ("graph", "nodes")
    broken = {**graph({}), "entry": "missing"}
    assert refused(ecp, request(parameters=defaulted, graph=broken))[0][0] == "graph"
    # With a parameter to give, the same graph is stored: it is checked at instantiation.
    assert ecp.templates.create("t1", request(graph=graph({}, action="nope")))[1]


@pytest.mark.spec("§2.1 instantiate-template")
def test_instantiation_registers_the_graph_as_post_graphs_does(ecp: Ecp) -> None:
    template, _ = ecp.templates.create("t1", request())
    made = ecp.templates.instantiate("t1", "triage", arguments(steps=7))
    assert (made.graph_id, made.version, made.created) == ("g", 1, True)
    assert (made.template.name, made.template.version) == ("triage", 1)
    assert made.template.digest == template.digest
    stored = ecp.graphs.version("t1", "g")
    assert made.digest == stored.digest == graph_digest(stored.definition)
    assert stored.definition.max_steps == 7
    action = stored.definition.node("a").action
    assert action is not None
    assert action.arguments["values"] == {"category": "refund", "raw": {"$param": "x"}}
    repeat = ecp.templates.instantiate("t1", "triage", arguments(steps=7, category="refund"))
    assert (repeat.version, repeat.created, repeat.digest) == (1, False, made.digest)
    assert repeat.template.arguments_digest == made.template.arguments_digest
    other = ecp.templates.instantiate("t1", "triage", arguments(steps=8))
    assert (other.version, other.created) == (2, True)
    with pytest.raises(NotFound):
        ecp.templates.instantiate("t2", "triage", arguments(steps=7))


def refused_arguments(ecp: Ecp, request: InstantiateTemplateRequest) -> list[tuple[Any, ...]]:
    with pytest.raises(ValidationFailed) as caught:
        ecp.templates.instantiate("t1", "triage", request)
    with pytest.raises(NotFound):
        ecp.graphs.version("t1", request.graph_id)
    return [e.loc for e in caught.value.errors]


@pytest.mark.spec("§2.1 instantiate-template")
def test_bad_arguments_are_located_and_nothing_is_registered(ecp: Ecp) -> None:
    ecp.templates.create("t1", request())
    assert refused_arguments(ecp, arguments()) == [("arguments",)]  # steps is required
    assert refused_arguments(ecp, arguments(steps=2)) == [("arguments", "steps")]
    assert refused_arguments(ecp, arguments(steps=3, category=1)) == [("arguments", "category")]
    assert refused_arguments(ecp, arguments(steps=3, typo=1)) == [("arguments", "typo")]
    # A value the schema allows but the graph cannot take: located in the built graph.
    loose = {"type": "object", "properties": {"steps": {}, "category": {}}}
    ecp.templates.create("t1", request(parameters=loose))
    assert refused_arguments(ecp, arguments(steps="many", category="x")) == [("graph", "max_steps")]
    assert refused_arguments(ecp, arguments(steps=3)) == [("arguments",)]  # category is used


@pytest.mark.spec("§2.1 instantiate-template", "C10 action-plugins")
def test_an_instantiated_graph_naming_an_unknown_action_is_refused(ecp: Ecp) -> None:
    ecp.templates.create("t1", request(graph=graph({}, action="nope")))
    with pytest.raises(UnknownAction) as caught:
        ecp.templates.instantiate("t1", "triage", arguments(steps=3))
    assert caught.value.errors[0].loc[:2] == ("graph", "nodes")


@pytest.mark.spec("§2.1 instantiate-template")
def test_an_older_version_instantiates_on_request(ecp: Ecp) -> None:
    ecp.templates.create("t1", request())
    ecp.templates.create("t1", request(description="second"))
    older = InstantiateTemplateRequest(graph_id="g", version=1, arguments={"steps": 4})
    assert ecp.templates.instantiate("t1", "triage", older).template.version == 1
    with pytest.raises(NotFound):
        ecp.templates.instantiate(
            "t1", "triage", InstantiateTemplateRequest(graph_id="g", version=9)
        )


@pytest.mark.spec("§2.1 create-template", "C1 list-paging")
def test_the_list_pages_the_latest_version_of_each_template(ecp: Ecp) -> None:
    for name in ("b", "a", "c"):
        ecp.templates.create("t1", request(name))
    ecp.templates.create("t1", request("a", description="again"))
    page, cursor = ecp.templates.page("t1", limit=2)
    assert [(t.name, t.version) for t in page] == [("a", 2), ("b", 1)]
    rest, end = ecp.templates.page("t1", limit=2, cursor=cursor)
    assert ([t.name for t in rest], end) == (["c"], None)
    assert ecp.templates.page("t2") == ([], None)
    with pytest.raises(ValidationFailed):
        ecp.templates.page("t1", cursor="not-a-cursor")


@pytest.mark.spec("§2.1 instantiate-template")
@given(
    st.dictionaries(text(min_size=1, max_size=8), json_values, max_size=4),
    st.randoms(use_true_random=False),
)
def test_instantiation_is_deterministic(values: dict[str, Any], random: Any) -> None:
    """The same arguments, in any member order, make the same graph version and digest."""
    ecp = Ecp.in_memory()
    names = sorted(values)
    parameters = {"type": "object", "properties": {name: {} for name in names}}
    holes = {name: {"$param": name} for name in names}
    ecp.templates.create(
        "t1", request(parameters=parameters, graph={**graph(holes), "max_steps": 9})
    )
    first = ecp.templates.instantiate(
        "t1", "triage", InstantiateTemplateRequest(graph_id="g", arguments=values)
    )
    shuffled = list(copy.deepcopy(values).items())
    random.shuffle(shuffled)
    again = ecp.templates.instantiate(
        "t1", "triage", InstantiateTemplateRequest(graph_id="g", arguments=dict(shuffled))
    )
    assert (again.version, again.digest, again.created) == (first.version, first.digest, False)
    assert again.template.arguments_digest == first.template.arguments_digest
    action = ecp.graphs.version("t1", "g").definition.node("a").action
    assert action is not None
    assert action.arguments["values"] == values


@pytest.mark.spec("§2.1 create-template")
def test_references_stay_inside_the_parameters_schema(ecp: Ecp) -> None:
    """Local pointers resolve and validate; remote or dangling ones are refused at creation."""
    local = {
        "type": "object",
        "$defs": {"count": {"type": "integer", "minimum": 3}},
        "properties": {"steps": {"$ref": "#/$defs/count"}, "category": {"default": "x"}},
    }
    ecp.templates.create("t1", request(parameters=local))
    assert refused_arguments(ecp, arguments(steps=1)) == [("arguments", "steps")]
    assert ecp.templates.instantiate("t1", "triage", arguments(steps=3)).created
    for ref in ("https://schemas.test/count", "#/$defs/nowhere", "#anchor", "other#/a"):
        broken = {**local, "properties": {"steps": {"$ref": ref}}}
        loc = ("parameters", "properties", "steps", "$ref")
        assert refused(ecp, request("broken", parameters=broken)) == [loc]


@pytest.mark.spec("§2.1 instantiate-template")
def test_an_unresolvable_reference_is_an_error_never_a_crash() -> None:
    errors = checked_payload({"$ref": "#/nowhere"}, 1, ("arguments",))
    assert [e.loc for e in errors] == [("parameters",)]
    errors = checked_payload({"pattern": "("}, "x", ("arguments",))
    assert [e.loc for e in errors] == [("parameters",)]
    looping = {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}
    assert [e.loc for e in checked_payload(looping, {"a": 1}, ())] == [("parameters",)]
