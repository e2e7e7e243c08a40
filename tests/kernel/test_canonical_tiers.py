"""The orjson tier of canonical JSON (ADR 0061): either exactly the RFC 8785 bytes, or no answer.

Checked against the reference canonicaliser over arbitrary values, including the ones the tier
must hand on to the exact walk: integers past 2**53, floats JCS writes differently, keys beyond
U+FFFF, U+0000, lone surrogates and types that are not exactly JSON. canonical_json itself is
checked with and without orjson installed (whichever this environment has).
"""

import enum
import math
import uuid
from collections import OrderedDict
from typing import Any

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.canonical import FAST_ENCODER, by_orjson, canonical_json
from ecp_core.errors import NotCanonicalizable
from ecp_core.testing.strategies.text import json_values

pytestmark = [pytest.mark.unit, pytest.mark.spec("C4 canonical-json")]

orjson_installed = pytest.mark.skipif(FAST_ENCODER != "orjson", reason="orjson is not installed")

any_text = st.text(alphabet=st.characters(codec=None), max_size=8)
"""Any code points: U+0000, lone surrogates and characters beyond U+FFFF included."""
any_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | any_text
    | st.sampled_from([2**53, -(2**53), 1e16, 1.0, 1e-5, 1e21, -0.0, "\x00", "\ud800"])
)
anything = st.recursive(
    any_scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.dictionaries(any_text, inner, max_size=4)
    ),
    max_leaves=20,
)
"""JSON-like values, most of which the reference refuses or writes unlike json.dumps."""


def reference(value: Any) -> bytes | None:
    """rfc8785's bytes, or None where it refuses (or where ECP refuses U+0000)."""
    try:
        data = bytes(rfc8785.dumps(value))
    except (rfc8785.CanonicalizationError, TypeError, ValueError, UnicodeError):
        return None
    return None if _holds_nul(value) else data


def _holds_nul(value: Any) -> bool:
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_holds_nul(key) or _holds_nul(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_nul(item) for item in value)
    return False


@orjson_installed
@given(value=anything)
def test_the_tier_writes_the_reference_bytes_or_nothing(value):
    written = by_orjson(value)
    if written is not None:
        assert written == reference(value)


@orjson_installed
@given(value=json_values)
def test_the_tier_answers_for_plain_json_without_edge_numbers(value):
    """JSON with no float outside the fixed-notation range and no key beyond U+FFFF."""
    written = by_orjson(value)
    assert written is None or written == rfc8785.dumps(value)
    if not _has_edge(value):
        assert written == rfc8785.dumps(value)


@given(
    st.dictionaries(
        st.text(alphabet=st.characters(min_codepoint=0xE000, max_codepoint=0x1F6FF)),
        st.integers(min_value=-10, max_value=10),
    )
)
def test_keys_beyond_the_bmp_still_sort_by_utf16_code_units(value):
    assert canonical_json(value) == rfc8785.dumps(value)


@given(value=anything)
def test_canonical_json_writes_the_reference_bytes_or_refuses(value):
    expected = reference(value)
    if expected is None:
        with pytest.raises(NotCanonicalizable):
            canonical_json(value)
    else:
        assert canonical_json(value) == expected


class Colour(enum.IntEnum):
    RED = 1


class Shade(enum.StrEnum):
    DARK = "dark"


class Key(str):
    __slots__ = ()


@orjson_installed
@pytest.mark.parametrize(
    "value",
    [
        Colour.RED,
        [Shade.DARK],
        {"id": uuid.UUID(int=7)},
        OrderedDict(a=1),
        {Key("a"): 1},
        {1: "int key"},
        {"k": math.nan},
        [2**53],
        {"a": "\x00"},
        {"\U0001f600": 1, "\uffff": 2},
        "\udc00",
        [1.0, 1e16, 1e-5],
    ],
    ids=repr,
)
def test_the_tier_hands_on_what_is_not_plainly_json(value):
    assert by_orjson(value) is None


@orjson_installed
def test_the_tier_answers_for_an_audit_payload():
    payload = {
        "customer": {"name": "Zoë Ândersen", "email": "c1@example.com"},
        "items": [{"sku": "SKU-1", "qty": 2, "price": 12.99}, ("tuple", None, True)],
        "note": 'quote " backslash \\ tab \t control \x1f line\u2028',
    }
    assert by_orjson(payload) == rfc8785.dumps(payload)


def _has_edge(value: Any) -> bool:
    """A float outside the fixed-notation range, or a key past U+FFFF."""
    if isinstance(value, float):
        return not (1e-4 <= abs(value) < 1e16 and not value.is_integer())
    if isinstance(value, dict):
        return any(
            max(key, default="") > "\uffff" or _has_edge(item) for key, item in value.items()
        )
    if isinstance(value, list):
        return any(_has_edge(item) for item in value)
    return False
