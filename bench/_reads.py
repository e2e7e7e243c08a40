"""``GET`` requests/s of several servers in interleaved rounds, with client and server CPU, for
the bench scripts. Imported by the bench scripts; not run."""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import httpx

if TYPE_CHECKING:
    import argparse

    from _server import Child

WARMUP = 50
"""Requests each contender answers before a round is timed, shared by the client threads."""


@dataclass
class Rounds:
    """Requests and seconds of one contender by round, with client and server CPU seconds."""

    rounds: list[tuple[int, float]] = field(default_factory=list)
    client_cpu: float = 0.0
    server_cpu: float | None = 0.0
    errors: int = 0

    @property
    def count(self) -> int:
        return sum(n for n, _ in self.rounds)

    @property
    def rate(self) -> float:
        seconds = sum(s for _, s in self.rounds)
        return self.count / seconds if seconds > 0 else 0.0

    def cpu_ms(self, seconds: float | None) -> str:
        return "n/a" if seconds is None else f"{seconds * 1e3 / max(self.count, 1):.3f} ms"


def paired_ratio(a: Rounds, b: Rounds) -> float:
    """Median over rounds of a's rate / b's rate in the same round."""
    return statistics.median(
        (na / sa) / (nb / sb) for (na, sa), (nb, sb) in zip(a.rounds, b.rounds, strict=True)
    )


def hammer(
    base_url: str, path: str, headers: dict[str, str], threads: int, per_thread: int
) -> tuple[int, float, int]:
    """``threads`` clients each GET ``path`` ``per_thread`` times; (requests, seconds, errors)."""
    start = threading.Barrier(threads + 1)
    errors = [0] * threads

    def client(index: int) -> None:
        with httpx.Client(base_url=base_url, headers=headers, timeout=30.0) as http:
            for _ in range(WARMUP // threads + 1):
                http.get(path)
            start.wait()
            for _ in range(per_thread):
                if http.get(path).status_code != 200:
                    errors[index] += 1

    workers = [threading.Thread(target=client, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    start.wait()
    began = time.perf_counter()
    for worker in workers:
        worker.join()
    return threads * per_thread, time.perf_counter() - began, sum(errors)


def bench_reads(
    servers: dict[str, Child], path: str, headers: dict[str, str], args: argparse.Namespace
) -> dict[str, Rounds]:
    rounds = max(1, args.rounds)
    per_thread = max(1, args.requests // (rounds * args.threads))
    deadline = time.perf_counter() + args.budget / 2
    results = {name: Rounds() for name in servers}
    names = list(servers)
    for number in range(rounds):
        order = names if number % 2 == 0 else names[::-1]
        for name in order:
            child = servers[name]
            cpu_before, client_before = child.cpu_seconds(), time.process_time()
            count, seconds, errors = hammer(child.base_url, path, headers, args.threads, per_thread)
            cpu_after = child.cpu_seconds()
            result = results[name]
            result.rounds.append((count, seconds))
            result.errors += errors
            result.client_cpu += time.process_time() - client_before
            if cpu_before is None or cpu_after is None or result.server_cpu is None:
                result.server_cpu = None
            else:
                result.server_cpu += cpu_after - cpu_before
        if number + 1 < rounds and time.perf_counter() > deadline:
            print(f"  (time budget spent after {number + 1} of {rounds} rounds)")
            break
    return results
