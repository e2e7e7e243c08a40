"""Calls made at once on threads, for race tests: each call's result, or what it raised."""

import threading
from collections.abc import Callable
from typing import Any


def together(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at once on threads; each one's result, or the exception it raised."""
    results: list[Any] = [None] * len(calls)
    gate = threading.Barrier(len(calls))

    def play(index: int, call: Callable[[], Any]) -> None:
        gate.wait()
        try:
            results[index] = call()
        except Exception as exc:  # noqa: BLE001 - the test inspects what each call raised
            results[index] = exc

    threads = [threading.Thread(target=play, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results
