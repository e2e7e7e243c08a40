"""The wire reader: I-JSON (RFC 7493), a depth bound checked on the text, located refusals."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.support.json_values import depth_of

from ecp_core.canonical import MAX_SAFE_INTEGER, canonical_json
from ecp_core.errors import InvalidJsonValue, MalformedRequest
from ecp_core.json_text import MAX_DEPTH, nesting_depth, parse_json_text

pytestmark = [pytest.mark.unit, pytest.mark.spec("C7 i-json")]

safe_ints = st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
texts = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\x00"))
json_values = st.recursive(
    st.none()
    | st.booleans()
    | safe_ints
    | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=20,
)


def refusal(text):
    with pytest.raises(InvalidJsonValue) as caught:
        parse_json_text(text)
    [error] = caught.value.errors
    return error.loc, error.msg


@given(json_values)
def test_accepted_values_read_back_equal_and_canonicalise(value):
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False, indent=1)):
        read = parse_json_text(text.encode("utf-8"))
        assert read == value
        assert canonical_json(read) == canonical_json(value)


@given(json_values)
def test_the_depth_measured_on_the_text_is_the_depth_of_the_value(value):
    assert nesting_depth(json.dumps(value)) == depth_of(value)


@given(
    st.integers(1, 3 * MAX_DEPTH), st.sampled_from(["[", '{"k":']), st.sampled_from(["", '"[{]"'])
)
def test_nesting_beyond_the_bound_is_refused_before_decoding(depth, opener, leaf):
    closer = "]" if opener == "[" else "}"
    text = opener * depth + (leaf or "1") + closer * depth
    if depth <= MAX_DEPTH:
        assert depth_of(parse_json_text(text)) == depth
    else:
        assert refusal(text) == ((), f"nesting depth {depth} exceeds {MAX_DEPTH}")


def test_deep_text_far_beyond_any_recursion_limit_is_refused_not_crashed():
    for text in ("[" * 100_000 + "]" * 100_000, "[" * 100_000, '{"a":' * 50_000):
        assert refusal(text)[1].startswith("nesting depth")


@pytest.mark.parametrize(
    ("text", "loc", "msg"),
    [
        ('{"a": 1, "a": 2}', ("a",), "duplicate member name"),
        ('{"x": [{"b": 1, "c": 2, "b": 3}]}', ("x", 0, "b"), "duplicate member name"),
        ('["\\ud800"]', (0,), "must not contain U+0000 or unpaired surrogates"),
        ('{"k": "a\\u0000b"}', ("k",), "must not contain U+0000 or unpaired surrogates"),
        (
            '{"\\udc00": 1}',
            ("\udc00",),
            "member names must not contain U+0000 or unpaired surrogates",
        ),
        ("[9007199254740992]", (0,), f"integers must lie within ±{MAX_SAFE_INTEGER}"),
        ("[-9007199254740992]", (0,), f"integers must lie within ±{MAX_SAFE_INTEGER}"),
        ("[" + "9" * 5000 + "]", (0,), f"integers must lie within ±{MAX_SAFE_INTEGER}"),
        ('{"n": NaN}', ("n",), "numbers must be finite"),
        ("[-Infinity]", (0,), "numbers must be finite"),
        ("[1e400]", (0,), "numbers must be finite (this one overflows a double)"),
    ],
)
def test_refusals_name_the_first_failing_location(text, loc, msg):
    assert refusal(text) == (loc, msg)


@pytest.mark.parametrize(
    "raw",
    [b"", b"{", b"nul", b"\xff\xfe{}", "{}".encode("utf-16"), b'{"a": "\x01"}', b"\xef\xbb\xbf{}"],
)
def test_text_that_is_not_utf8_json_is_malformed(raw):
    with pytest.raises(MalformedRequest):
        parse_json_text(raw)


def test_what_is_allowed_at_the_edges():
    assert parse_json_text(f"[{MAX_SAFE_INTEGER}, -{MAX_SAFE_INTEGER}]") == [
        MAX_SAFE_INTEGER,
        -MAX_SAFE_INTEGER,
    ]
    assert parse_json_text('["\\ud83d\\ude00", "\\\\u0000"]') == ["\U0001f600", "\\u0000"]
    big = parse_json_text("[1e16, 1e21, 1.7976931348623157e308, 5e-324, -0.0]")
    assert big == [1e16, 1e21, 1.7976931348623157e308, 5e-324, 0.0]
    assert all(isinstance(number, float) for number in big)
    assert math.copysign(1, big[-1]) == -1
    assert parse_json_text('{"s": "[[[[{{{{"}') == {"s": "[[[[{{{{"}
