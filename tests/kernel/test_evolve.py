"""ecp_core.evolve: the same copy as attrs.evolve, or the same refusal, for any changes."""

from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.constraints import Range, checked
from ecp_core.evolve import evolve
from ecp_core.runs.run.model import PauseSource, Run
from ecp_core.types import RunStatus

pytestmark = [pytest.mark.unit, pytest.mark.spec("C20 evolve")]

NOW = datetime(2026, 12, 6, 12, tzinfo=UTC)
RUN = Run(
    run_id="r-1",
    tenant_id="t",
    deployment_ref="d",
    graph_version_ref="g@1",
    thread_id="r-1",
    status=RunStatus.RUNNING,
    created_at=NOW,
    updated_at=NOW,
    next_node_id="a",
    holds_slot=True,
)

# Values of a few of a run's fields, valid and not: a negative count, a naive or non-UTC time, a
# priority out of range, and statuses and pauses that make a held slot go (__attrs_post_init__).
CHANGES = st.fixed_dictionaries(
    {},
    optional={
        "status": st.sampled_from(RunStatus),
        "steps": st.integers(-2, 5),
        "attempts": st.integers(-2, 5),
        "priority": st.integers(-1, 11),
        "updated_at": st.sampled_from(
            [
                NOW + timedelta(seconds=1),
                NOW.replace(tzinfo=None),
                NOW.astimezone(timezone(timedelta(hours=2))),
            ]
        ),
        "paused_by": st.sampled_from([(), (PauseSource.RUN,)]),
        "holds_slot": st.booleans(),
        "state": st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
        "next_node_id": st.none() | st.text(max_size=3),
    },
)


def outcome(make):
    """What ``make()`` gives: ("copy", the copy) or ("refused", the exception's type and text)."""
    try:
        return ("copy", make())
    except (TypeError, ValueError) as exc:
        return ("refused", type(exc), str(exc))


@given(CHANGES)
def test_a_run_evolves_as_attrs_evolves_it(changes):
    ours = outcome(lambda: evolve(RUN, **changes))
    assert ours == outcome(lambda: attrs.evolve(RUN, **changes))
    if ours[0] == "copy":
        copy = ours[1]
        assert type(copy) is Run
        assert copy is not RUN
        for name, value in changes.items():
            if name != "holds_slot":
                assert getattr(copy, name) == value
        assert copy.holds_slot == (changes.get("holds_slot", True) and copy.dispatchable)


@attrs.frozen(kw_only=True, field_transformer=checked)
class Counter:
    count: Annotated[int, Range(0)]


@attrs.frozen
class Hidden:
    _secret: int
    shown: int = 0
    derived: int = attrs.field(init=False, default=7)


@attrs.frozen
class Empty:
    pass


@given(st.integers(-3, 3))
def test_a_one_field_model_is_copied_and_checked(count):
    assert outcome(lambda: evolve(Counter(count=1), count=count)) == outcome(
        lambda: attrs.evolve(Counter(count=1), count=count)
    )


def test_private_fields_go_by_their_alias_and_fields_outside_init_are_not_passed():
    copied = evolve(Hidden(1, 2), secret=5)
    assert copied == attrs.evolve(Hidden(1, 2), secret=5) == Hidden(5, 2)
    assert evolve(Empty()) == Empty()


def test_an_unknown_field_is_refused_as_attrs_refuses_it():
    with pytest.raises(TypeError):
        evolve(RUN, no_such_field=1)
    with pytest.raises(TypeError):
        attrs.evolve(RUN, no_such_field=1)
