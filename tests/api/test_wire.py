"""The wire converter: strict types, no extras, every failing field located."""

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.errors import ValidationFailed
from ecp_core.evidence.model import ExecutionEvent
from ecp_core.graphs.definition import ActionDescriptorV1, Condition
from ecp_core.identity import ActorIdentity
from ecp_core.runs.approvals.model import ApprovalResolutionRequest
from ecp_core.testing.strategies.text import text
from ecp_core.wire import converter, format_timestamp, parse_timestamp, structure, unstructure

pytestmark = pytest.mark.unit


def errors_of(data, cls):
    with pytest.raises(ValidationFailed) as caught:
        structure(data, cls)
    return {(e.loc, e.msg) for e in caught.value.errors}


@pytest.mark.spec("§2.1 action-descriptor")
def test_action_descriptor_defaults():
    action = structure({"name": "echo", "fingerprint": "echo/1"}, ActionDescriptorV1)
    assert action.arguments == {}
    assert action.capability_refs == ()
    assert action.identity_configuration == ()
    assert action.requires_approval is False
    assert action.side_effect == "unknown"
    assert action.tool_call_id is None
    assert action.contract_ref is None


@pytest.mark.spec("C1 field-locations")
def test_every_failing_field_is_reported_with_its_location():
    found = errors_of(
        {
            "name": "",
            "fingerprint": 7,
            "capability_refs": ["network_write", "teleport"],
            "tool_call_id": " padded ",
            "surprise": 1,
        },
        ActionDescriptorV1,
    )
    locs = {loc for loc, _ in found}
    assert locs == {
        ("name",),
        ("fingerprint",),
        ("capability_refs", 1),
        ("tool_call_id",),
        ("surprise",),
    }
    assert (("surprise",), "unknown property") in found


@pytest.mark.spec("C1 field-locations")
def test_missing_required_field():
    assert errors_of({"fingerprint": "x"}, ActionDescriptorV1) == {(("name",), "required")}


@pytest.mark.spec("§2.1 action-descriptor")
@pytest.mark.parametrize("tool_call_id", ["", " a", "a ", "\ta", "x" * 257])
def test_tool_call_id_limits(tool_call_id):
    assert {
        loc
        for loc, _ in errors_of(
            {"name": "a", "fingerprint": "b", "tool_call_id": tool_call_id}, ActionDescriptorV1
        )
    } == {("tool_call_id",)}


@pytest.mark.spec("§2.1 action-descriptor")
@pytest.mark.parametrize("tool_call_id", ["a", "x" * 256, "call 1"])
def test_tool_call_id_accepted(tool_call_id):
    assert (
        structure(
            {"name": "a", "fingerprint": "b", "tool_call_id": tool_call_id}, ActionDescriptorV1
        ).tool_call_id
        == tool_call_id
    )


@pytest.mark.spec("§2.1 action-descriptor")
def test_python_construction_enforces_the_same_limits():
    with pytest.raises(ValueError, match="tool_call_id"):
        ActionDescriptorV1(name="a", fingerprint="b", tool_call_id=" x")
    with pytest.raises(ValueError, match="name"):
        ActionDescriptorV1(name="", fingerprint="b")


@pytest.mark.spec("§2.2 approval-reason")
@given(text(min_size=0, max_size=1100))
def test_reason_is_one_to_a_thousand_characters(reason):
    data = {"decision": "reject", "reason": reason}
    if 1 <= len(reason) <= 1000:
        assert structure(data, ApprovalResolutionRequest).reason == reason
    else:
        assert {loc for loc, _ in errors_of(data, ApprovalResolutionRequest)} == {("reason",)}


@pytest.mark.parametrize(
    ("value", "ok"), [(True, True), (1, False), ("true", False), (None, False)]
)
def test_booleans_are_not_coerced(value, ok):
    data = {"name": "a", "fingerprint": "b", "requires_approval": value}
    if ok:
        assert structure(data, ActionDescriptorV1).requires_approval is True
    else:
        assert errors_of(data, ActionDescriptorV1)


def test_integers_are_not_coerced_or_truncated():
    from ecp_core.graphs.definition import GraphDefinition

    base = {"graph_id": "g", "entry": "a", "nodes": [{"id": "a", "kind": "end"}]}
    for bad in (1.5, "10", True):
        assert ("max_steps",) in {
            loc for loc, _ in errors_of({**base, "max_steps": bad}, GraphDefinition)
        }


@pytest.mark.spec("§2.1 condition")
def test_condition_is_not_a_no_extras_schema():
    condition = structure({"expression": "true", "note": "kept out"}, Condition)
    assert condition.branch_rule == "expression"


@pytest.mark.spec("C1 field-locations")
def test_enum_errors_name_the_allowed_values():
    found = errors_of({"subject": "s", "auth_method": "password"}, ActorIdentity)
    ((loc, msg),) = found
    assert loc == ("auth_method",)
    assert "'api_key'" in msg and "'bearer'" in msg


@pytest.mark.spec("§2.1 actor-identity")
def test_actor_defaults_to_the_default_tenant():
    actor = structure({"subject": "s", "auth_method": "bearer", "roles": ["admin"]}, ActorIdentity)
    assert actor.tenant_id == "default"
    assert actor.workspace_id is None


def test_not_an_object():
    assert errors_of([1, 2], ActionDescriptorV1) == {((), "expected an object")}


@pytest.mark.spec("C1 wire-values")
def test_timestamps_round_trip_in_utc_with_z():
    moment = parse_timestamp("2026-11-22T06:30:00.123456+01:00")
    assert moment == datetime(2026, 11, 22, 5, 30, 0, 123456, tzinfo=UTC)
    assert format_timestamp(moment) == "2026-11-22T05:30:00.123456Z"
    with pytest.raises(ValueError, match="offset"):
        parse_timestamp("2026-11-22T06:30:00")


@pytest.mark.spec("C1 wire-values")
@given(
    st.datetimes(
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-7)), timezone(timedelta(0))])
    ),
)
def test_every_aware_moment_is_written_as_utc_with_six_digits_and_z(moment):
    """The orjson fast path (a UTC moment with a fraction) and the general path write alike."""
    text = format_timestamp(moment)
    assert (
        text == moment.astimezone(UTC).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
    )
    assert parse_timestamp(text) == moment


@pytest.mark.spec("C1 wire-values")
def test_decimals_are_exact_strings():
    assert converter.structure("1E-8", Decimal) == Decimal("1E-8")
    assert unstructure(Decimal("0.10")) == "0.10"
    with pytest.raises(TypeError):
        converter.structure(0.1, Decimal)


@pytest.mark.spec("C7 i-json")
@pytest.mark.parametrize("bad", ["a\x00b", "\ud800"])
def test_text_a_database_cannot_store_is_refused(bad):
    assert {
        loc
        for loc, _ in errors_of({"decision": "reject", "reason": bad}, ApprovalResolutionRequest)
    } == {("reason",)}


def test_models_built_in_python_are_still_validated_after_wire_structuring():
    """The wire converter skips the attrs validators it has already applied, only while it runs."""
    data = {
        "event_id": "e",
        "workflow_id": "w",
        "workflow_version": "1",
        "occurred_at": "2026-11-01T00:00:00Z",
        "charge_id": "c",
    }
    event = structure(data, ExecutionEvent)
    with pytest.raises(ValueError, match="event_id"):
        attrs.evolve(event, event_id="")
    with pytest.raises(ValidationFailed) as refused:
        structure({**data, "event_id": ""}, ExecutionEvent)
    assert [error.loc for error in refused.value.errors] == [("event_id",)]
