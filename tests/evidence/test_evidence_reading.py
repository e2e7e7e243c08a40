"""The one-pass reader of execution batches answers exactly as the generic path (ADR 0060).

The generic path is what every other body goes through: ``parse_json_text`` (I-JSON), the cattrs
converter, the evidence rules and ``digest_of``. For any body, good or bad, the reader returns
the same events and digests (and, read as rows, the rows ``execution_row`` makes of them) or
raises the same error with the same located field errors. Good bodies must take the fast loop
(else it would be correct and useless).
"""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ecp_core.errors import EcpError
from ecp_core.evidence.model import ExecutionBatch
from ecp_core.evidence.plain_rows import plain_rows
from ecp_core.evidence.reading import ExecutionBody, read_execution_batch
from ecp_core.evidence.rows import execution_row
from ecp_core.evidence.rules import checked, execution_problems
from ecp_core.json_text import parse_json_text
from ecp_core.wire import structure

pytestmark = [pytest.mark.unit, pytest.mark.spec("C6 evidence-ingestion")]

ids = st.sampled_from(["a", "b", "run:1", "é", "x" * 256, "ab\tc", 'q"\\', "\u2028", "\U0001f600"])
stamps = st.sampled_from(
    [
        "2026-03-01T10:00:00Z",
        "2026-03-01T10:00:00.000000Z",
        "2026-03-01T10:00:00.123456Z",
        "2026-03-01T12:30:00+02:30",
        "2026-03-01T10:00:00.5-01:00",
        "2026-03-01 10:00:00Z",
        "0001-01-01T00:00:00.000000Z",
        "2026-02-30T10:00:00.000000Z",
    ]
)
amounts = st.sampled_from(
    [
        *("0", "0.1", "0.10", "1E-8", "0.000000010", "100", "12.5", "+1.5", " 2", "1_000", "7e2"),
        *("10.50", "0.0", "0.000", "007", "123456789012345.123456789012345678", "1" * 16),
        *("0." + "0" * 18 + "1", "1.", ".5"),
    ]
)
scalars = st.one_of(
    st.sampled_from(["", "a:b", "é", 0, 1, -7, 2**53 - 1, True, False, 0.5, 1e20, 1.0, -0.0]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(-(2**53) + 1, 2**53 - 1),
)
attributes = st.dictionaries(st.sampled_from(["tier", "a.b", "k:v", "n-1", "Z_9"]), scalars)
OPTIONAL_IDS = ("run_id", "step_id", "subject_id", "source_window_id", "join_key")


@st.composite
def wire_events(draw: st.DrawFn) -> dict[str, Any]:
    """An execution event as a client may spell it: defaults left out or written out."""
    event: dict[str, Any] = {
        "event_id": draw(ids),
        "workflow_id": draw(ids),
        "workflow_version": draw(st.sampled_from(["v1", "v2"])),
        "occurred_at": draw(stamps),
    }
    for name in OPTIONAL_IDS:
        if draw(st.booleans()):
            event[name] = draw(st.none() | ids)
    if draw(st.booleans()):
        event["attempt"] = draw(st.integers(1, 10_000))
    for name in ("dimensions", "metadata"):
        if draw(st.booleans()):
            event[name] = draw(attributes)
    if draw(st.booleans()):
        event["cost_role"] = "summary"
        event["cost_measurement"] = draw(st.sampled_from(["unmeasured", None]))
        if event["cost_measurement"] is None:
            del event["cost_measurement"]
        return event
    event["charge_id"] = draw(ids)
    if draw(st.booleans()):
        event["cost_usd"] = draw(amounts)
        event["cost_measurement"] = draw(st.sampled_from(["measured", "estimated"]))
    return event


junk = st.one_of(
    st.sampled_from(
        [
            None,
            "",
            " a",
            "a ",
            "x" * 257,
            0,
            10_001,
            True,
            1.5,
            [],
            {},
            {"a b": 1},
            {"k": [1]},
            {"k": None},
            {"k": "x" * 257},
            {"k": 2**53},
            "2026-13-01T00:00:00Z",
            "2026-03-01T10:00:00",
            "NaN",
            "-1",
            "1E-19",
            "1" * 16,
            "bogus",
            "summary",
            "unmeasured",
        ]
    ),
    scalars,
    attributes,
)
FIELDS = (
    "event_id",
    "workflow_id",
    "occurred_at",
    "run_id",
    "attempt",
    "dimensions",
    "metadata",
    "cost_usd",
    "cost_measurement",
    "cost_role",
    "charge_id",
    "unknown",
)


def generic(body: bytes) -> Any:
    """What the generic path makes of ``body``: events and digests, or the error it raises."""
    try:
        batch = structure(parse_json_text(body), ExecutionBatch, what="the body")
        return checked(batch.events, execution_problems)
    except EcpError as exc:
        return type(exc), str(exc), getattr(exc, "errors", None)


def generic_rows(body: bytes) -> Any:
    """The rows of the generic path's events, or the error it raises."""
    expected = generic(body)
    return expected if isinstance(expected, tuple) else [execution_row(e) for e in expected]


def fast(body: bytes) -> Any:
    try:
        return read_execution_batch(body)
    except EcpError as exc:
        return type(exc), str(exc), getattr(exc, "errors", None)


def fast_rows(body: bytes) -> Any:
    """The rows the reader streams, or the error it raises (after rows, maybe)."""
    try:
        return list(ExecutionBody(body).rows())
    except EcpError as exc:
        return type(exc), str(exc), getattr(exc, "errors", None)


def answers_as_the_generic_path(body: bytes) -> Any:
    """Both reads of ``body`` answer as the generic path; its answer."""
    assert fast_rows(body) == generic_rows(body)
    answer = fast(body)
    assert answer == generic(body)
    return answer


def body_of(events: list[Any]) -> bytes:
    return json.dumps({"events": events}, ensure_ascii=False).encode()


@settings(max_examples=300)
@given(st.lists(wire_events(), min_size=1, max_size=5))
def test_good_bodies_take_the_fast_loop_and_read_as_the_generic_path(events):
    body = body_of(events)
    expected = answers_as_the_generic_path(body)
    if isinstance(expected, tuple) or huge_integral_floats(events):
        return  # a rule across fields broken, or floats orjson may have read: generic path
    assert [row for row, _ in plain_rows(body)] == generic_rows(body)  # no Doubt: fast


def huge_integral_floats(events: list[dict[str, Any]]) -> bool:
    """Whether an attribute holds an integral float of 2**63 or more (the loop doubts those)."""
    return any(
        type(value) is float and abs(value) >= 2**63 and value.is_integer()
        for event in events
        for name in ("dimensions", "metadata")
        for value in event.get(name, {}).values()
    )


@settings(max_examples=500)
@given(
    st.lists(wire_events(), min_size=1, max_size=3),
    st.integers(0, 2),
    st.sampled_from(FIELDS),
    junk,
)
def test_any_broken_field_answers_as_the_generic_path(events, index, name, value):
    events[index % len(events)][name] = value
    answers_as_the_generic_path(body_of(events))


@given(st.lists(wire_events(), min_size=1, max_size=3), st.sampled_from(FIELDS[:3]))
def test_a_duplicate_member_name_answers_as_the_generic_path(events, name):
    first = events[0]
    first.setdefault(name, "dup")
    members = [*first.items(), (name, first[name])]
    text = "{" + ",".join(f"{json.dumps(key)}:{json.dumps(item)}" for key, item in members) + "}"
    rest = "".join("," + json.dumps(event) for event in events[1:])
    body = ('{"events":[' + text + rest + "]}").encode()
    assert isinstance(answers_as_the_generic_path(body), tuple)


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"not json",
        b"\xff\xfe",
        b"[]",
        b'{"events": []}',
        b'{"events": {}}',
        b'{"events": [1]}',
        b'{"events": [], "more": 1}',
        b'{"events": [{"event_id": NaN}]}',
        b'{"events": [{"event_id": "a\\u0000"}]}',
        b'{"events": [{"event_id": "\\ud800"}]}',
        b"[" * 100_000,
        b'{"events": [{"event_id": "a\\u003ab"}]}',
        (
            b'{"events":[{"event_id":"a\\u003a","event_id":"b",'
            b'"workflow_id":"w","workflow_version":"v","occurred_at":"2026-03-01T10:00:00Z",'
            b'"charge_id":"c"}]}'
        ),
        body_of([{"event_id": "a", "workflow_id": "w"}] * 1001),
    ],
)
def test_bad_bodies_answer_as_the_generic_path(body):
    assert isinstance(answers_as_the_generic_path(body), tuple)


# Literals orjson reads otherwise than json (or refuses), in an attribute where numbers are kept
@pytest.mark.parametrize(
    "literal",
    [
        "18446744073709551616",
        "-9223372036854775809",
        "9223372036854775808",
        "9007199254740993",
        "1e400",
        "-1e400",
        "1.7976931348623159e308",
        "0.1e-400",
        "1E2",
        "9.3e18",
        "9223372036854775807.0",
        "0.30000000000000004",
    ],
)
def test_number_literals_answer_as_the_generic_path(literal):
    event = (
        '{"event_id":"a","workflow_id":"w","workflow_version":"v","charge_id":"c",'
        '"occurred_at":"2026-03-01T10:00:00Z","dimensions":{"n":' + literal + "}}"
    )
    answers_as_the_generic_path(('{"events":[' + event + "]}").encode())


def test_rows_come_before_a_later_broken_event_raises_the_body_s_error():
    """Rows are given as read; a broken third event then raises what the generic path does."""
    events = [
        {"event_id": name, "workflow_id": "w", "workflow_version": "v", "charge_id": name}
        | {"occurred_at": "2026-03-01T10:00:00Z"}
        for name in "abc"
    ]
    events[2]["attempt"] = 0
    body = body_of(events)
    batch = ExecutionBody(body)
    rows = batch.rows()
    assert [next(rows).event_id, next(rows).event_id] == ["a", "b"]
    with pytest.raises(EcpError) as raised:
        next(rows)
    assert (type(raised.value), str(raised.value), raised.value.errors) == generic(body)
    assert batch.received is None
    batch.check()  # the error was raised already: nothing is read again, nothing raised
    with pytest.raises(EcpError):
        ExecutionBody(body).check()  # a fresh read of a bad body raises its error
    ExecutionBody(body_of(events[:2])).check()
