"""Real clock and id factory for production wiring (tests use deterministic ones)."""

import os
import threading
import time
from datetime import UTC, datetime, timedelta

_COUNTER_MAX = 0xFFF


class SystemClock:
    """Wall-clock time in UTC, at microsecond precision."""

    def now(self) -> datetime:
        """Return the current instant."""
        return datetime.now(UTC)


def uuid_text(value: int) -> str:
    """A 128-bit ``value`` in the UUID's text form: ``str(uuid.UUID(int=value))``, quicker."""
    digits = f"{value:032x}"
    return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}"


class UuidV7Factory:
    """RFC 9562 version 7 UUIDs: 48-bit Unix milliseconds, then randomness, time-ordered.

    Within one millisecond a 12-bit counter (seeded randomly) keeps ids from one factory strictly
    increasing.
    """

    def __init__(self) -> None:
        """Start with no previous id."""
        self._lock = threading.Lock()
        self._last_ms = -1
        self._counter = 0

    def new_id(self) -> str:
        """Return a fresh UUIDv7 string."""
        with self._lock:
            now_ms = time.time_ns() // 1_000_000
            if now_ms > self._last_ms:
                self._last_ms = now_ms
                self._counter = int.from_bytes(os.urandom(2)) & 0x7FF
            else:
                self._counter += 1
                if self._counter > _COUNTER_MAX:
                    self._last_ms += 1
                    self._counter = 0
            ms, counter = self._last_ms, self._counter
        tail = int.from_bytes(os.urandom(8)) & ((1 << 62) - 1)
        value = (ms << 80) | (0x7 << 76) | (counter << 64) | (0b10 << 62) | tail
        return uuid_text(value)


class FixedClock:
    """A clock that moves only when told to: deterministic tests and demos."""

    def __init__(self, start: datetime) -> None:
        """Begin at ``start`` (aware UTC)."""
        if start.tzinfo is None:
            msg = "FixedClock needs an aware datetime"
            raise ValueError(msg)
        self._now = start.astimezone(UTC)

    def now(self) -> datetime:
        """Return the current (fixed) instant."""
        return self._now

    def advance(self, seconds: float) -> datetime:
        """Move time forward and return the new instant."""
        self._now += timedelta(seconds=seconds)
        return self._now


class SequentialIds:
    """Ids ``<prefix>-000001``, ``<prefix>-000002``, …: deterministic tests."""

    def __init__(self, prefix: str = "id") -> None:
        """Count from one."""
        self._prefix = prefix
        self._next = 0
        self._lock = threading.Lock()

    def new_id(self) -> str:
        """Return the next id."""
        with self._lock:
            self._next += 1
            return f"{self._prefix}-{self._next:06d}"
