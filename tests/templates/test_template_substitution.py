"""Typed substitution of template parameters: properties of the pure rules (ADR 0045)."""

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.templates.substitution import LITERAL, PARAM, hole_errors, holes, substitute
from ecp_core.testing.strategies.text import json_values

pytestmark = pytest.mark.unit

Loc = tuple[str | int, ...]


def marker_free(value: Any) -> bool:
    """No object under ``value`` is a hole or a literal."""
    if isinstance(value, dict):
        return not ({PARAM, LITERAL} & set(value)) and all(map(marker_free, value.values()))
    if isinstance(value, list):
        return all(map(marker_free, value))
    return True


plain_values = json_values.filter(marker_free)


def locations(value: Any, loc: Loc = ()) -> list[Loc]:
    """Every location in ``value``, the root first."""
    found = [loc]
    if isinstance(value, dict):
        for key, item in value.items():
            found += locations(item, (*loc, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += locations(item, (*loc, index))
    return found


def put(value: Any, loc: Loc, new: Any) -> Any:
    """A copy of ``value`` with ``new`` at ``loc``."""
    if not loc:
        return new
    head, rest = loc[0], loc[1:]
    if isinstance(value, dict):
        return {**value, head: put(value[head], rest, new)}
    copied = list(value)
    copied[head] = put(value[head], rest, new)  # type: ignore[index]
    return copied


@st.composite
def templates(draw: st.DrawFn, values: st.SearchStrategy[Any] = plain_values) -> tuple[Any, ...]:
    """A marker-free tree, holes at some of its places, arguments, and the expected result."""
    base = draw(plain_values)
    every = locations(base)
    picked = sorted(draw(st.lists(st.sampled_from(every), unique=True, max_size=4)), key=len)
    chosen: list[Loc] = []
    for loc in picked:  # no hole inside another: keep the outermost
        if not any(loc[: len(outer)] == outer for outer in chosen):
            chosen.append(loc)
    arguments = {f"p{i}": draw(values) for i in range(len(chosen))}
    template, expected = base, base
    for i, loc in enumerate(chosen):
        template = put(template, loc, {PARAM: f"p{i}"})
        expected = put(expected, loc, arguments[f"p{i}"])
    return template, arguments, expected, chosen


@pytest.mark.spec("§2.1 instantiate-template")
@given(templates())
def test_substitution_replaces_exactly_the_holes(case: tuple[Any, ...]) -> None:
    """Each hole becomes its argument's whole value; nothing else changes; no hole is left."""
    template, arguments, expected, chosen = case
    found = [loc for loc, _ in holes(template)]
    assert len(found) == len(chosen)
    assert set(found) == set(chosen)
    assert hole_errors(template, arguments) == []
    result = substitute(template, arguments)
    assert result == expected
    assert list(holes(result)) == []


@pytest.mark.spec("§2.1 instantiate-template")
@given(templates(values=json_values | st.builds(lambda name: {PARAM: name}, st.text())))
def test_an_argument_is_inserted_verbatim_never_examined_again(case: tuple[Any, ...]) -> None:
    """An argument that looks like a hole (or holds one) stays as given."""
    template, arguments, expected, _ = case
    assert substitute(template, arguments) == expected


@pytest.mark.spec("§2.1 instantiate-template")
@given(json_values, plain_values)
def test_a_literal_survives_verbatim(value: Any, around: Any) -> None:
    """``{"$literal": v}`` is ``v`` after substitution, holes and literals inside it included."""
    wrapped = [around, {LITERAL: value}, {LITERAL: {PARAM: "x"}}]
    assert substitute(wrapped, {}) == [around, value, {PARAM: "x"}]
    assert list(holes(wrapped)) == []
    assert hole_errors(wrapped, {}) == []


@pytest.mark.spec("§2.1 create-template")
@given(templates())
def test_a_hole_naming_no_declared_parameter_is_located(case: tuple[Any, ...]) -> None:
    """With no parameter declared, every hole is an error at its place."""
    template, _, _, chosen = case
    errors = hole_errors(template, {}, ("graph",))
    assert len(errors) == len(chosen)
    assert {e.loc for e in errors} == {("graph", *loc) for loc in chosen}


@pytest.mark.spec("§2.1 create-template")
@pytest.mark.parametrize(
    ("value", "loc"),
    [
        ({PARAM: 1}, ("g",)),
        ({PARAM: "a", "b": 1}, ("g",)),
        ({"x": [{LITERAL: 1, "y": 2}]}, ("g", "x", 0)),
        ({"x": {PARAM: None}}, ("g", "x")),
    ],
)
def test_malformed_holes_and_literals_are_refused(value: Any, loc: Loc) -> None:
    """A hole has one member, a string; a literal has no other member."""
    errors = hole_errors(value, {"a": {}}, ("g",))
    assert [e.loc for e in errors] == [loc]
