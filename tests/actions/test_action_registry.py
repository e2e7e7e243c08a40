"""The action registry: descriptor metadata per action, and graphs refused for unknown actions."""

import copy
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core import Ecp, GraphDefinition, structure, unstructure
from ecp_core.demo import EXAMPLE_GRAPH
from ecp_core.errors import NotCanonicalizable, NotFound, UnknownAction, ValidationFailed
from ecp_core.runs.run.actions import (
    ActionAlreadyRegistered,
    ActionRegistry,
    ActionSource,
    RegisteredAction,
)
from ecp_core.types import Capability, SideEffectClass

pytestmark = pytest.mark.unit

NAMES = ("echo", "set", "fetch", "charge", "notify")


def noop(_context):
    return {}


def graph_of(nodes: list[tuple[str, str | None]]) -> GraphDefinition:
    """A chain of ``(kind, action name)`` nodes ending in an end node."""
    definitions = []
    for index, (kind, name) in enumerate(nodes):
        node = {"id": f"n{index}", "kind": kind}
        if kind == "action":
            node["action"] = {"name": name, "fingerprint": f"{name}/1"}
        else:
            node |= {"summary": "Look", "rationale": "A person looks"}
        definitions.append(node)
    definitions.append({"id": "end", "kind": "end"})
    ids = [node["id"] for node in definitions]
    edges = [{"source": a, "target": b} for a, b in itertools.pairwise(ids)]
    raw = {"graph_id": "g", "entry": ids[0], "nodes": definitions, "edges": edges}
    return structure(raw, GraphDefinition)


nodes = st.lists(
    st.one_of(
        st.tuples(st.just("action"), st.sampled_from(NAMES)),
        st.tuples(st.just("approval"), st.none()),
    ),
    min_size=1,
    max_size=6,
)


@pytest.mark.spec("C10 action-plugins")
@given(nodes=nodes, registered=st.frozensets(st.sampled_from(NAMES)))
def test_a_graph_is_accepted_exactly_when_its_actions_are_registered(nodes, registered):
    registry = ActionRegistry(builtins=False)
    for name in registered:
        registry.register(name, noop)
    ecp = Ecp.in_memory(actions=registry, refuse_unknown_actions=True)
    graph = graph_of(nodes)
    unknown = {
        ("nodes", index, "action", "name")
        for index, (kind, name) in enumerate(nodes)
        if kind == "action" and name not in registered
    }
    if not unknown:
        assert ecp.graphs.register("t", graph).version == 1
        return
    with pytest.raises(UnknownAction) as refused:
        ecp.graphs.register("t", graph)
    assert refused.value.code == "unknown_action"
    assert {error.loc for error in refused.value.errors} == unknown
    with pytest.raises(NotFound):  # nothing stored
        ecp.graphs.version("t", "g")


@pytest.mark.spec("C10 action-plugins")
def test_the_check_sees_actions_registered_after_the_service_was_built():
    ecp = Ecp.in_memory(refuse_unknown_actions=True)
    graph = graph_of([("action", "charge")])
    with pytest.raises(UnknownAction):
        ecp.graphs.register("t", graph)
    ecp.actions.register("charge", noop)
    assert ecp.graphs.register("t", graph).created


@pytest.mark.spec("C10 action-plugins")
def test_a_structural_fault_is_a_validation_failure_that_also_lists_unknown_actions():
    bad = copy.deepcopy(EXAMPLE_GRAPH)
    bad["entry"] = "nowhere"
    bad["nodes"][0]["action"]["name"] = "missing"
    ecp = Ecp.in_memory(refuse_unknown_actions=True)
    with pytest.raises(ValidationFailed) as refused:
        ecp.graphs.register("t", structure(bad, GraphDefinition))
    assert refused.value.code == "validation_failed"
    assert {error.loc for error in refused.value.errors} == {
        ("entry",),
        ("nodes", 0, "action", "name"),
    }


def test_the_embedded_service_accepts_any_action_unless_asked_to_refuse():
    ecp = Ecp.in_memory()
    assert ecp.graphs.register("t", graph_of([("action", "later")])).created


@pytest.mark.spec("C10 action-plugins")
def test_built_ins_are_listed_with_their_metadata():
    listed = {action.name: action for action in ActionRegistry().listing().actions}
    assert set(listed) == {"echo", "set"}
    assert listed["set"] == RegisteredAction(
        name="set",
        fingerprint="set/1",
        side_effect=SideEffectClass.NONE,
        arguments_schema={"type": "object", "properties": {"values": {"type": "object"}}},
        source=ActionSource.BUILTIN,
    )
    assert unstructure(ActionRegistry().listing())["actions"][0] == {
        "name": "echo",
        "fingerprint": "echo/1",
        "capability_refs": [],
        "side_effect": "none",
        "arguments_schema": {"type": "object"},
        "source": "builtin",
    }


@pytest.mark.spec("C10 action-plugins")
def test_registration_keeps_the_descriptor_metadata_and_lists_by_name():
    registry = ActionRegistry(builtins=False)
    schema = {"type": "object", "properties": {"to": {"type": "string"}}}
    described = registry.register(
        "notify",
        noop,
        fingerprint="notify/3",
        capability_refs=["network_write", Capability.EXTERNAL_API_CALL],
        side_effect="non_idempotent",
        arguments_schema=schema,
    )
    schema["properties"] = {}  # the registry keeps its own copy
    registry.register("alert", noop)
    assert described == RegisteredAction(
        name="notify",
        fingerprint="notify/3",
        capability_refs=(Capability.NETWORK_WRITE, Capability.EXTERNAL_API_CALL),
        side_effect=SideEffectClass.NON_IDEMPOTENT,
        arguments_schema={"type": "object", "properties": {"to": {"type": "string"}}},
        source=ActionSource.PLUGIN,
    )
    assert registry.described("notify") == described
    assert [a.name for a in registry.listing().actions] == ["alert", "notify"]
    assert registry.described("alert").fingerprint == "alert/1"
    assert registry.get("notify") is noop


def test_a_name_is_registered_once_unless_replaced():
    registry = ActionRegistry()
    with pytest.raises(ActionAlreadyRegistered, match="'echo' is already registered"):
        registry.register("echo", noop)
    assert registry.get("echo") is not noop
    registry.register("echo", noop, replace=True)
    assert registry.get("echo") is noop
    assert registry.described("echo").source is ActionSource.PLUGIN


@pytest.mark.parametrize(
    ("name", "handler", "options", "error"),
    [
        ("", noop, {}, ValueError),
        ("  ", noop, {}, ValueError),
        ("x", "not callable", {}, TypeError),
        ("x", noop, {"capability_refs": ["teleport"]}, ValueError),
        ("x", noop, {"side_effect": "sometimes"}, ValueError),
        ("x", noop, {"arguments_schema": {"bad": float("nan")}}, NotCanonicalizable),
    ],
)
def test_bad_registrations_are_refused_and_register_nothing(name, handler, options, error):
    registry = ActionRegistry(builtins=False)
    with pytest.raises(error):
        registry.register(name, handler, **options)
    assert list(registry.names()) == []
