"""Graph definitions: validation, builder equivalence, versions and CEL conditions."""

import copy

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import Ecp, GraphBuilder, GraphDefinition, structure, unstructure
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.errors import NotFound, ValidationFailed
from ecp_core.graphs import Condition, condition_holds, graph_digest, graph_errors
from ecp_core.graphs.conditions import ConditionError
from ecp_core.types import Capability

pytestmark = pytest.mark.unit


def example():
    return structure(copy.deepcopy(EXAMPLE_GRAPH), GraphDefinition)


def locs(definition):
    return {error.loc for error in graph_errors(structure(definition, GraphDefinition))}


@pytest.mark.spec("C3 graph-validation")
def test_the_contract_example_is_valid():
    assert graph_errors(example()) == []


@pytest.mark.spec("C3 graph-registration")
def test_the_builder_makes_the_same_graph_as_the_json():
    built = (
        GraphBuilder("refund-triage")
        .action("classify", "set", arguments={"values": {"category": "refund"}})
        .approval("review", summary="Approve the refund", rationale="Refunds need a person")
        .action(
            "notify", "echo", arguments={"to": "customer"}, capabilities=(Capability.NETWORK_WRITE,)
        )
        .end("done")
        .chain("classify", "review", "notify")
        .edge("notify", "done", when="state.category == 'refund'")
        .build()
    )
    assert built == example()
    assert graph_digest(built) == graph_digest(example())


@pytest.mark.spec("C3 graph-validation")
def test_unknown_entry_and_dangling_edges():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["entry"] = "nowhere"
    bad["edges"].append({"source": "ghost", "target": "done"})
    assert locs(bad) == {("entry",), ("edges", 3, "source")}


@pytest.mark.spec("C3 graph-validation")
def test_duplicate_node_ids():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["nodes"].append({"id": "done", "kind": "end"})
    assert ("nodes", 4, "id") in locs(bad)


@pytest.mark.spec("C3 graph-validation")
def test_kind_specific_fields():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    del bad["nodes"][0]["action"]
    del bad["nodes"][1]["summary"]
    bad["nodes"][3]["operations"] = [{"target_path": "a", "value": 1}]
    assert locs(bad) == {
        ("nodes", 0, "action"),
        ("nodes", 1, "summary"),
        ("nodes", 3, "operations"),
    }


@pytest.mark.spec("C3 graph-validation")
def test_end_nodes_have_no_exits():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["edges"].append({"source": "done", "target": "classify"})
    assert ("edges", 3, "source") in locs(bad)


@pytest.mark.spec("C3 graph-validation", "§2.1 condition")
def test_a_cycle_needs_an_edge_that_allows_it():
    cyclic = {
        "graph_id": "loop",
        "entry": "a",
        "nodes": [
            {"id": "a", "kind": "action", "action": {"name": "echo", "fingerprint": "echo/1"}},
            {"id": "b", "kind": "end"},
        ],
        "edges": [
            {"source": "a", "target": "a", "condition": {"expression": "true"}},
            {"source": "a", "target": "b"},
        ],
    }
    assert locs(cyclic) == {("edges",)}
    cyclic["edges"][0]["condition"]["allow_cycle_traversal"] = True
    assert locs(cyclic) == set()


@pytest.mark.spec("C3 graph-validation")
def test_unreachable_nodes_are_rejected():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["nodes"].append({"id": "orphan", "kind": "end"})
    assert locs(bad) == {("nodes", 4, "id")}


@pytest.mark.spec("C3 cel-conditions")
def test_cel_syntax_errors_are_located():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["edges"][2]["condition"]["expression"] = "state.category == "
    assert locs(bad) == {("edges", 2, "condition", "expression")}


@pytest.mark.spec("C3 graph-validation", "C10 action-plugins")
def test_unknown_actions_when_the_registry_is_known():
    errors = graph_errors(example(), known_actions={"set"})
    assert [e.loc for e in errors] == [("nodes", 2, "action", "name")]


@pytest.mark.spec("C3 graph-registration")
def test_registration_versions_by_content():
    ecp = Ecp.in_memory()
    first = ecp.graphs.register("t", example())
    again = ecp.graphs.register("t", structure(copy.deepcopy(EXAMPLE_GRAPH), GraphDefinition))
    assert (first.version, first.created) == (1, True)
    assert (again.version, again.created, again.digest) == (1, False, first.digest)
    changed = copy.deepcopy(EXAMPLE_GRAPH)
    changed["nodes"][1]["summary"] = "Approve the refund, please"
    second = ecp.graphs.register("t", structure(changed, GraphDefinition))
    assert (second.version, second.created) == (2, True)
    assert second.digest != first.digest
    assert ecp.graphs.version("t", "refund-triage").version == 2
    assert ecp.graphs.version("t", "refund-triage", 1).definition == example()
    other_tenant = ecp.graphs.register("u", example())
    assert other_tenant.version == 1
    with pytest.raises(NotFound):
        ecp.graphs.version("u", "refund-triage", 2)


@pytest.mark.spec("C3 graph-validation")
def test_invalid_graphs_are_not_stored():
    ecp = Ecp.in_memory()
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["entry"] = "nowhere"
    with pytest.raises(ValidationFailed):
        ecp.graphs.register("t", structure(bad, GraphDefinition))
    with pytest.raises(NotFound):
        ecp.graphs.version("t", "refund-triage")


@pytest.mark.spec("C3 graph-registration")
def test_digest_ignores_key_order_and_explicit_defaults():
    explicit = copy.deepcopy(EXAMPLE_GRAPH)
    explicit["max_steps"] = 1000
    explicit["nodes"][0]["action"]["requires_approval"] = False
    reordered = dict(reversed(list(explicit.items())))
    assert graph_digest(structure(reordered, GraphDefinition)) == graph_digest(example())


@pytest.mark.spec("C3 cel-conditions")
@pytest.mark.parametrize(
    ("condition", "state", "expected"),
    [
        ({"expression": "state.n > 2"}, {"n": 3}, True),
        ({"expression": "state.n > 2"}, {"n": 1}, False),
        (
            {"expression": "operand > 0", "branch_rule": "all", "operand_refs": ["a", "b.c"]},
            {"a": 1, "b": {"c": 2}},
            True,
        ),
        (
            {"expression": "operand > 0", "branch_rule": "all", "operand_refs": ["a", "b.c"]},
            {"a": 1, "b": {"c": 0}},
            False,
        ),
        (
            {"expression": "operand > 0", "branch_rule": "any", "operand_refs": ["a", "b.c"]},
            {"a": 0, "b": {"c": 2}},
            True,
        ),
        (
            {"expression": "operand == null", "branch_rule": "any", "operand_refs": ["missing"]},
            {},
            True,
        ),
        ({"expression": "operand", "branch_rule": "all", "operand_refs": []}, {}, True),
        ({"expression": "operand", "branch_rule": "any", "operand_refs": []}, {}, False),
        ({"expression": "has(state.x) && state.x == 'y'"}, {}, False),
    ],
)
def test_conditions(condition, state, expected):
    assert condition_holds(structure(condition, Condition), state) is expected


@pytest.mark.spec("C3 cel-conditions")
@pytest.mark.parametrize("expression", ["state.n + 1", "state.missing == 1", "'a' + 1"])
def test_conditions_that_cannot_decide_raise(expression):
    with pytest.raises(ConditionError):
        condition_holds(Condition(expression=expression), {"n": 1})


@pytest.mark.spec("C3 cel-conditions")
def test_no_condition_always_holds():
    assert condition_holds(None, {}) is True


@pytest.mark.spec("C3 cel-conditions")
@given(st.integers(), st.integers())
def test_cel_comparisons_agree_with_python(a, b):
    safe = 2**63 - 1
    if abs(a) > safe or abs(b) > safe:
        return
    assert condition_holds(Condition(expression="state.a < state.b"), {"a": a, "b": b}) is (a < b)


@pytest.mark.spec("C3 graph-registration")
def test_definitions_round_trip_through_the_wire():
    assert structure(unstructure(example()), GraphDefinition) == example()
