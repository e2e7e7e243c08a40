"""Canonical JSON: the fast path writes exactly what RFC 8785 prescribes."""

import math

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.canonical import MAX_SAFE_INTEGER, canonical_json, json_digest
from ecp_core.errors import NotCanonicalizable
from ecp_core.testing.strategies.text import text

pytestmark = [pytest.mark.unit, pytest.mark.spec("C4 canonical-json")]

safe_ints = st.integers(min_value=-MAX_SAFE_INTEGER, max_value=MAX_SAFE_INTEGER)
finite_floats = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | safe_ints | finite_floats | text()
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=5) | st.dictionaries(text(max_size=8), inner, max_size=5)
    ),
    max_leaves=30,
)


@given(json_values)
def test_matches_the_reference_canonicaliser(value):
    assert canonical_json(value) == rfc8785.dumps(value)


@given(
    st.dictionaries(
        st.text(alphabet=st.characters(min_codepoint=0xE000, max_codepoint=0x1F6FF)), safe_ints
    )
)
def test_keys_beyond_the_bmp_sort_by_utf16_code_units(value):
    assert canonical_json(value) == rfc8785.dumps(value)


def test_known_bytes():
    assert (
        canonical_json({"b": [1, "é", None], "a": True}) == '{"a":true,"b":[1,"é",null]}'.encode()
    )
    assert canonical_json({"\u20ac": 1, "\U0001f600": 2, "\r": 3}) == rfc8785.dumps(
        {"\u20ac": 1, "\U0001f600": 2, "\r": 3}
    )


@pytest.mark.parametrize(
    "bad",
    [
        math.nan,
        math.inf,
        2**53,
        -(2**53),
        {"x": object()},
        "\ud800",
        "a\x00",
        {"k\x00": 1},
        [{"x": 1e-9, "y": "\x00"}],
    ],
)
def test_refuses_what_jcs_cannot_write(bad):
    with pytest.raises(NotCanonicalizable):
        canonical_json(bad)


def test_digest_notation():
    assert (
        json_digest(None)
        == "sha256:74234e98afe7498fb5daf1f36ac2d78acc339464f950703b8c019892f982b90b"
    )


@given(
    st.floats(min_value=1e-4, max_value=1e16, exclude_max=True)
    | st.floats(min_value=-1e16, max_value=-1e-4, exclude_min=True)
)
def test_fast_path_floats_match_the_reference(number):
    assert canonical_json({"x": number, "y": [number]}) == rfc8785.dumps(
        {"x": number, "y": [number]}
    )


@pytest.mark.parametrize(
    "number",
    [1e-4, 0.1, 19.99, 123456.789, 9007199254740993.0, 1e16 - 2, 1.5e15, 5e-5, 1e21, 100.0, -0.0],
)
def test_float_edges_match_the_reference(number):
    assert canonical_json([number]) == rfc8785.dumps([number])
