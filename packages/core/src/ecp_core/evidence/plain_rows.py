"""The fast loop of the one-pass reader: plainly acceptable execution events, read into rows.

:func:`plain_rows` recognises good ``ExecutionBatch`` bodies and nothing else: at the first
doubt (any broken rule, anything unusual) it raises :class:`Doubt` and the generic path decides
(:mod:`ecp_core.evidence.reading`). It yields each event's row as soon as the event is checked,
so that a store can write while later events are read; the body is known plain only when the
iterator is exhausted (duplicate member names are found at the end).

Its twins, held equal by Hypothesis properties in ``tests/evidence/test_evidence_reading.py``: the
I-JSON rules of ``json_text`` (U+0000 and surrogate escapes refused by one search of the text,
duplicate member names found by counting colons), the converter's structuring of
:class:`~ecp_core.evidence.model.ExecutionEvent`, the evidence rules, ``digest_of`` and
:func:`~ecp_core.evidence.rows.execution_row`.

``orjson`` parses; where it refuses the text (``1e400``, deep nesting), the standard ``json``
module does. orjson reads an integer beyond 64 bits as a float where ``json`` keeps it exact:
the only place floats are accepted, an attribute's value, doubts integral floats of that size. Digests and JSON columns are written by orjson too, where its
bytes are RFC 8785's (``ecp_core.canonical``'s first tier): the loop has already checked every
value's type, so only floats outside the fixed-notation range need the exact canonicaliser.
"""

import hashlib
import json
import re
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

import attrs
import orjson

from ecp_core.canonical import canonical_json
from ecp_core.evidence.model import MAX_ATTRIBUTES, MAX_BATCH, CostRole, ExecutionEvent
from ecp_core.evidence.model import scalar_problem as _scalar_problem
from ecp_core.evidence.rows import ExecutionRow
from ecp_core.money import money_problem, money_text
from ecp_core.types import CostMeasurement
from ecp_core.wire import canonical_decimal, format_timestamp, parse_timestamp

# Only an escape can put U+0000, a surrogate or a colon into a decoded string without the text
# showing it: bodies with such an escape take the generic path (colons: see plain_rows).
_DOUBTFUL_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F]|003[aA])")
_ATTRIBUTE_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,64}")
# Texts already in the row's and the digest form's spelling (format_timestamp, money_text)
_UTC_MICROSECONDS = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]\.[0-9]{6}Z"
)
_CANONICAL_AMOUNT = re.compile(r"(?:0|[1-9][0-9]*)(?:\.[0-9]*[1-9])?")
# Plain decimals that are money for sure (Money: at most 15 integer and 18 fraction digits)
_PLAIN_AMOUNT = re.compile(r"(?:0|[1-9][0-9]{0,14})(?:\.[0-9]{1,18})?")
_MAX_ID = 256
_MAX_ATTEMPT = 10_000
_MAX_SAFE_INTEGER = 2**53 - 1
_INT64 = float(2**63)  # orjson reads integers of this size or more as floats

_REQUIRED_IDS = ("event_id", "workflow_id", "workflow_version")
_OPTIONAL_IDS = ("run_id", "step_id", "subject_id", "charge_id", "source_window_id", "join_key")
_FIELDS = frozenset(attrs.fields_dict(ExecutionEvent))
_REQUIRED = frozenset((*_REQUIRED_IDS, "occurred_at"))
_MEASUREMENTS = frozenset(member.value for member in CostMeasurement)
_UNMEASURED = CostMeasurement.UNMEASURED.value
_ROLES = frozenset(member.value for member in CostRole)
_SUMMARY = CostRole.SUMMARY.value
_EMPTY = b"{}"
_NONE = object()  # an absent member


class Doubt(Exception):
    """The body is not plainly acceptable: the generic path decides (and names the errors)."""


def _loads(raw: bytes) -> Any:  # noqa: ANN401 - a JSON value
    """The JSON value of ``raw`` as ``json.loads`` reads it; Doubt when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        pass  # maybe JSON that orjson refuses (1e400, deep nesting): json decides
    try:
        return json.loads(raw.decode("utf-8"), parse_constant=_refuse)
    except (ValueError, RecursionError) as exc:  # not UTF-8, not JSON, too deep
        raise Doubt from exc


def _refuse(_: str) -> None:
    raise Doubt


def plain_rows(raw: bytes) -> Iterator[tuple[ExecutionRow, dict[str, Any]]]:
    """Each event's row and JSON object, as read; Doubt at the first doubt (see the module)."""
    if _DOUBTFUL_ESCAPE.search(raw) is not None:
        raise Doubt
    payload = _loads(raw)
    if type(payload) is not dict or payload.keys() != {"events"}:
        raise Doubt
    items = payload["events"]
    if type(items) is not list or not 1 <= len(items) <= MAX_BATCH:
        raise Doubt
    members = 1
    attributes: dict[bytes, tuple[bytes, int]] = {}  # objects repeat across a batch
    for item in items:
        row, colons = _row(item, attributes)
        members += colons
        yield row, item
    if members != raw.count(b":"):  # a duplicate member name (or a colon we did not see)
        raise Doubt


def _ids(values: list[Any]) -> int:
    """The colons in the ids, after checking each is one (``Id``: 1 to 256 characters, trimmed).

    C loops over the list: joining refuses anything but strings.
    """
    try:
        joined = "".join(values)
    except TypeError as exc:
        raise Doubt from exc
    lengths = list(map(len, values))
    if min(lengths) == 0 or max(lengths) > _MAX_ID or list(map(str.strip, values)) != values:
        raise Doubt
    return joined.count(":")


def _attributes(value: Any) -> tuple[bytes, int]:  # noqa: ANN401 - a JSON value
    """A ``dimensions`` or ``metadata`` object's canonical JSON, and its members' colons."""
    if type(value) is not dict or len(value) > MAX_ATTRIBUTES:
        raise Doubt
    if not value:
        return _EMPTY, 0
    colons = 0
    plain = True
    for key, item in value.items():
        if _ATTRIBUTE_KEY.fullmatch(key) is None:
            raise Doubt
        colons += 1 + key.count(":") + _scalar_colons(item)
        if type(item) is float:
            plain = plain and 1e-4 <= abs(item) < 1e16 and not item.is_integer()  # noqa: PLR2004
    # Keys are ASCII and values checked: orjson writes RFC 8785 but for floats out of range.
    data = orjson.dumps(value, option=orjson.OPT_SORT_KEYS) if plain else canonical_json(value)
    return data, colons


def _known_attributes(value: Any, seen: dict[bytes, tuple[bytes, int]]) -> tuple[bytes, int]:  # noqa: ANN401
    """:func:`_attributes`, remembered by the object's JSON text.

    The text tells every key and value apart (str, int, float and bool included); it merges
    only non-finite floats with null, all of which the loop doubts (never remembered).
    """
    if value is _NONE:
        return _EMPTY, 0
    try:
        key = orjson.dumps(value)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: not an attribute anyway
        raise Doubt from None
    known = seen.get(key)
    if known is None:
        known = seen[key] = _attributes(value)
    return known


def _scalar_colons(item: Any) -> int:  # noqa: ANN401 - a JSON value
    """The colons of an attribute's value, after checking it (``scalar_problem``)."""
    kind = type(item)
    if kind is str:
        if _scalar_problem(item) is not None:
            raise Doubt
        colons: int = item.count(":")
        return colons
    if kind is float:
        if _scalar_problem(item) is not None or (abs(item) >= _INT64 and item.is_integer()):
            raise Doubt  # maybe an integer literal orjson read as a float
        return 0
    if kind is int:
        if not -_MAX_SAFE_INTEGER <= item <= _MAX_SAFE_INTEGER:
            raise Doubt
        return 0
    if kind is not bool:
        raise Doubt
    return 0


def _text(value: Any, allowed: frozenset[str]) -> str:  # noqa: ANN401 - a JSON value
    if type(value) is not str or value not in allowed:
        raise Doubt
    return value


def _money(value: Any) -> tuple[str | None, str | None]:  # noqa: ANN401 - a JSON value
    """``cost_usd`` as the row and as the digest form spell it (both None for null)."""
    if value is None:
        return None, None
    if type(value) is not str:
        raise Doubt
    if _PLAIN_AMOUNT.fullmatch(value) is not None:  # money for sure, spelt plainly
        spelt = value.rstrip("0").removesuffix(".") if "." in value else value
        return str(Decimal(value)), spelt
    try:
        amount = Decimal(value)
    except InvalidOperation as exc:
        raise Doubt from exc
    if money_problem(amount) is not None:  # also not finite
        raise Doubt
    spelt = value if _CANONICAL_AMOUNT.fullmatch(value) else money_text(canonical_decimal(amount))
    return str(amount), spelt


def _timestamp(value: Any) -> tuple[str, int]:  # noqa: ANN401 - a JSON value
    """``occurred_at`` as the row and the digest form spell it, and the colons of its text."""
    if type(value) is not str:
        raise Doubt
    try:
        if _UTC_MICROSECONDS.fullmatch(value) is not None:  # spelt as the row spells it
            datetime.fromisoformat(value)  # a real date and time
            return value, 2
        moment = parse_timestamp(value)
    except (ValueError, OverflowError) as exc:  # what the converter reports as a field error
        raise Doubt from exc
    return format_timestamp(moment), value.count(":")


def _row(item: Any, seen: dict[bytes, tuple[bytes, int]]) -> tuple[ExecutionRow, int]:  # noqa: ANN401 - a JSON value
    """One event checked, digested and spelt as a row, with the colons its JSON text holds.

    ``seen``: the attribute objects of earlier events by their JSON, with what they gave.
    """
    if type(item) is not dict or not _REQUIRED <= item.keys() <= _FIELDS:
        raise Doubt
    get = item.get
    event_id, workflow_id, version = item["event_id"], item["workflow_id"], item["workflow_version"]
    run_id, step_id, subject_id = get("run_id"), get("step_id"), get("subject_id")
    charge_id, window_id, join_key = get("charge_id"), get("source_window_id"), get("join_key")
    optional = (run_id, step_id, subject_id, charge_id, window_id, join_key)
    ids = [event_id, workflow_id, version, *(value for value in optional if value is not None)]
    colons = len(item) + _ids(ids)
    stamp, stamp_colons = _timestamp(item["occurred_at"])
    colons += stamp_colons
    attempt = get("attempt", 1)
    if type(attempt) is not int or not 1 <= attempt <= _MAX_ATTEMPT:
        raise Doubt
    dimensions, dimension_colons = _known_attributes(get("dimensions", _NONE), seen)
    metadata, metadata_colons = _known_attributes(get("metadata", _NONE), seen)
    colons += dimension_colons + metadata_colons
    cost, spelt = _money(get("cost_usd"))
    measurement = _text(get("cost_measurement", _UNMEASURED), _MEASUREMENTS)
    role = _text(get("cost_role", "charge"), _ROLES)
    # The rules across fields (evidence.rules.execution_problems)
    if role == _SUMMARY:
        if cost is not None or charge_id is not None:
            raise Doubt
    elif charge_id is None or (cost is None) != (measurement == _UNMEASURED):
        raise Doubt
    form = {  # the digest form (digest_of), keys in RFC 8785 order
        "attempt": attempt,
        "charge_id": charge_id,
        "cost_measurement": measurement,
        "cost_role": role,
        "cost_usd": spelt,
        "dimensions": orjson.Fragment(dimensions),
        "event_id": event_id,
        "join_key": join_key,
        "metadata": orjson.Fragment(metadata),
        "occurred_at": stamp,
        "run_id": run_id,
        "source_window_id": window_id,
        "step_id": step_id,
        "subject_id": subject_id,
        "workflow_id": workflow_id,
        "workflow_version": version,
    }
    digest = "sha256:" + hashlib.sha256(orjson.dumps(form)).hexdigest()
    row = ExecutionRow(
        event_id,
        digest,
        workflow_id,
        version,
        stamp,
        run_id,
        step_id,
        attempt,
        subject_id,
        dimensions.decode("utf-8"),
        cost,
        measurement,
        role,
        charge_id,
        window_id,
        join_key,
        metadata.decode("utf-8"),
    )
    return row, colons
