"""Ids are UUIDv7 text made without building a UUID; model times must be aware and in UTC."""

import uuid
from datetime import UTC, datetime, timedelta, timezone, tzinfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_core.constraints import AwareUtc
from ecp_core.system import UuidV7Factory, uuid_text

pytestmark = [pytest.mark.unit, pytest.mark.spec("C1 wire-values")]


@given(st.integers(min_value=0, max_value=(1 << 128) - 1))
def test_uuid_text_is_the_uuid_modules_text(value: int) -> None:
    assert uuid_text(value) == str(uuid.UUID(int=value))


def test_new_ids_are_version_7_and_strictly_increasing() -> None:
    factory = UuidV7Factory()
    made = [factory.new_id() for _ in range(5_000)]  # many within one millisecond
    parsed = [uuid.UUID(text) for text in made]
    assert all(str(one) == text for one, text in zip(parsed, made, strict=True))
    assert {one.version for one in parsed} == {7}
    assert {one.variant for one in parsed} == {uuid.RFC_4122}
    assert made == sorted(set(made))


class _Unknown(tzinfo):
    """A time zone that does not know its offset: the time counts as naive."""

    def utcoffset(self, dt: datetime | None) -> timedelta | None:
        return None


@given(
    st.datetimes(timezones=st.none() | st.timezones() | st.just(_Unknown())),
)
def test_aware_utc_accepts_exactly_the_times_at_offset_zero(value: datetime) -> None:
    offset = value.utcoffset()
    problem = AwareUtc().check(value)
    if offset is None:
        assert problem == "must be timezone-aware"
    elif offset == timedelta(0):
        assert problem is None
    else:
        assert problem == "must be in UTC"


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (datetime(2026, 12, 7, tzinfo=UTC), None),
        (datetime(2026, 12, 7, tzinfo=timezone(timedelta(0))), None),
        (datetime(2026, 12, 7, tzinfo=timezone(timedelta(hours=1))), "must be in UTC"),
        (datetime(2026, 12, 7, tzinfo=timezone(-timedelta(microseconds=1))), "must be in UTC"),
        (datetime(2026, 12, 7), "must be timezone-aware"),  # noqa: DTZ001 - naive on purpose
        (datetime(2026, 12, 7, tzinfo=_Unknown()), "must be timezone-aware"),
    ],
)
def test_aware_utc_examples(value: datetime, problem: str | None) -> None:
    assert AwareUtc().check(value) == problem
