"""CPU seconds from Linux ``/proc`` for the benchmarks: processes, PostgreSQL, the whole machine.
Imported by the bench scripts; not run. Every reader answers None where ``/proc`` cannot tell."""

from __future__ import annotations

import os
import pathlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

TICK = os.sysconf("SC_CLK_TCK")


def _fields(pid: int) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (state is field 0)."""
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def process_seconds(pid: int, *, reaped_children: bool = False) -> float | None:
    """User + system CPU of ``pid``; with ``reaped_children``, plus that of its exited children."""
    fields = _fields(pid)
    if fields is None:
        return None
    ticks = int(fields[11]) + int(fields[12])
    if reaped_children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / TICK


def parent_of(pid: int) -> int | None:
    fields = _fields(pid)
    return None if fields is None else int(fields[1])


def children_of(pid: int) -> list[int]:
    """The live child processes of ``pid``."""
    return [
        int(entry.name)
        for entry in pathlib.Path("/proc").iterdir()
        if entry.name.isdigit() and parent_of(int(entry.name)) == pid
    ]


def postgres_seconds(postmaster: int | None) -> float | None:
    """All CPU PostgreSQL spent: the postmaster, its live children and the ones it reaped.

    A backend's CPU moves into the postmaster's reaped-children figure when it exits, so the sum
    stays continuous while connections come and go.
    """
    if postmaster is None:
        return None
    total = process_seconds(postmaster, reaped_children=True)
    if total is None:
        return None
    return total + sum(process_seconds(child) or 0.0 for child in children_of(postmaster))


def postmaster_of(backend_pid: int) -> int | None:
    """The postmaster of a backend (from ``pg_backend_pid()``), when it runs on this machine."""
    parent = parent_of(backend_pid)
    if parent is None:
        return None
    try:
        name = pathlib.Path(f"/proc/{parent}/comm").read_text().strip()
    except OSError:
        return None
    return parent if name.startswith("postgres") else None


def machine_busy_seconds() -> float | None:
    """CPU seconds every CPU of the machine spent busy (all processes, not idle or I/O wait)."""
    try:
        first = pathlib.Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return None
    values = [int(v) for v in first[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)  # idle + iowait
    busy = sum(values[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy / TICK


def memory_bytes(pid: int) -> tuple[int, int] | None:
    """The resident set of ``pid`` now and at its peak (``VmRSS``, ``VmHWM``), in bytes."""
    try:
        lines = pathlib.Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return None
    found = {
        key: int(value.split()[0]) * 1024
        for key, _, value in (line.partition(":") for line in lines)
        if key in ("VmRSS", "VmHWM")
    }
    if len(found) != 2:
        return None
    return found["VmRSS"], found["VmHWM"]


def backend_postmaster(url: str) -> int | None:
    """The postmaster of the PostgreSQL server at ``url``, when it runs on this machine."""
    import psycopg  # noqa: PLC0415 - only the scripts that measure PostgreSQL need it

    with psycopg.connect(url) as conn:  # read while the backend lives: it exits with the conn
        row = conn.execute("SELECT pg_backend_pid()").fetchone()
        return None if row is None else postmaster_of(int(row[0]))


def metered(
    step: Callable[[int, int], None], postmaster: int | None, totals: dict[str, float], name: str
) -> Callable[[int, int], None]:
    """``step`` that adds the CPU PostgreSQL spent while it ran to ``totals[name]``."""
    totals.setdefault(name, 0.0)

    def run(lo: int, hi: int) -> None:
        before = postgres_seconds(postmaster)
        step(lo, hi)
        after = postgres_seconds(postmaster)
        if before is not None and after is not None:
            totals[name] += after - before

    return run
