"""Interleaved rounds of contenders, their timings, and the figures a bench script prints.

A contender is a step over items ``[lo, hi)``; :func:`interleave` runs every contender on each
round's items in a rotating order, so that table growth and passing load fall on all of them, and
a ratio is the median over rounds of two rates measured in the same round.
"""

import math
import os
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Timing:
    """Items, wall-clock seconds and this process's CPU seconds of one contender, by round."""

    rounds: list[tuple[int, float]] = field(default_factory=list)
    cpu_seconds: float = 0.0

    @property
    def count(self) -> int:
        return sum(n for n, _ in self.rounds)

    @property
    def seconds(self) -> float:
        return sum(s for _, s in self.rounds)

    @property
    def rate(self) -> float:
        return self.count / self.seconds if self.seconds > 0 else 0.0

    @property
    def ms(self) -> float:
        return self.seconds * 1e3 / max(self.count, 1)

    @property
    def median_ms(self) -> float:
        """The median over rounds of milliseconds per item (robust to passing load)."""
        return statistics.median(s * 1e3 / n for n, s in self.rounds)

    @property
    def cpu_ms(self) -> float:
        """Milliseconds of this process's CPU per item (the client side: Python, psycopg)."""
        return self.cpu_seconds * 1e3 / max(self.count, 1)


def paired_ratio(a: Timing, b: Timing) -> float:
    """Median over rounds of a's rate / b's rate in the same round (same items per round)."""
    return statistics.median(
        (na / sa) / (nb / sb) for (na, sa), (nb, sb) in zip(a.rounds, b.rounds, strict=True)
    )


def interleave(
    steps: dict[str, Callable[[int, int], None]],
    count: int,
    rounds: int,
    deadline: float,
    what: str,
) -> dict[str, Timing]:
    """Run every step over items [lo, hi) of each round, rotating their order; time each."""
    timings = {name: Timing() for name in steps}
    names = list(steps)
    chunk = max(1, math.ceil(count / rounds))
    for number, lo in enumerate(range(0, count, chunk)):
        hi = min(count, lo + chunk)
        shift = number % len(names)
        for name in names[shift:] + names[:shift]:
            began, cpu = time.perf_counter(), time.process_time()
            steps[name](lo, hi)
            timings[name].rounds.append((hi - lo, time.perf_counter() - began))
            timings[name].cpu_seconds += time.process_time() - cpu
        if hi < count and time.perf_counter() > deadline:
            print(f"  (time budget spent: measured {hi:,} of {count:,} {what} per contender)")
            break
    return timings


def rate_line(label: str, timing: Timing, unit: str) -> str:
    return (
        f"  {label:<46} {timing.rate:>6,.0f} {unit}/s  {timing.ms:6.3f} ms each"
        f" (median {timing.median_ms:6.3f}), client CPU {timing.cpu_ms:6.3f} ms"
    )


@dataclass
class Figure:
    name: str
    value: float | None
    unit: str
    target: float | None = None
    at_most: bool = False
    """Whether the target is a ceiling (a count) rather than a floor (a rate or ratio)."""

    def shown(self) -> str:
        if self.value is None:
            return "skipped"
        if self.unit == "x":
            return f"{self.value:,.2f}"
        if self.unit == "ms":
            return f"{self.value:,.3f} ms"
        return f"{self.value:,.0f} {self.unit}"

    def met(self) -> str:
        if self.target is None:
            return "-"
        if self.value is None:
            return "n/a"
        met = self.value <= self.target if self.at_most else self.value >= self.target
        return "yes" if met else "no"


def print_summary(figures: list[Figure]) -> None:
    print("\nsummary")
    width = max(len(f.name) for f in figures)
    print(f"  {'figure':<{width}}  {'value':>12}  {'target':>7}  met")
    for figure in figures:
        bound = "<=" if figure.at_most else ">="
        target = "-" if figure.target is None else f"{bound} {figure.target:g}"
        print(f"  {figure.name:<{width}}  {figure.shown():>12}  {target:>7}  {figure.met()}")


def percentile(values: list[float], share: float) -> float:
    """The value at ``share`` (0 to 1) of ``values`` in order: the nearest rank at or below it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def load_note() -> str:
    one_minute = os.getloadavg()[0]
    return f"load average {one_minute:.2f} on {os.cpu_count()} CPUs"
