"""Import times of the core and the HTTP adapter, and the cost of the first condition.

Run as ``python bench/import_time.py [--runs N]``. Each import runs in a fresh interpreter N times
after one warm-up that caches the byte code of everything (in a temporary folder, as an installed
wheel has it even when ``PYTHONDONTWRITEBYTECODE`` is set here); it prints the median wall and CPU time and the ratio
of the CPU time to a bare interpreter's start (``python -c pass``), which holds better than
seconds on a busy machine. It asserts nothing about timing (ADR 0052).

- ``import ecp_core``: the package alone; its public names load on first use.
- ``from ecp_core import Ecp``: the facade and every area of the domain, as a server loads it.
- ``import ecp_client``: the client library (httpx loads with the first ``Client``, the next case).
- ``import ecp_http.startup.app`` and ``ecp_http.cli``: the server's app factory and the command line.
- first condition: importing the CEL binding, compiling and evaluating one edge condition, then
  the cost of one more evaluation of it, in microseconds.
"""

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

from _evidence import load_note

CASES = (
    ("python -c pass", "pass"),
    ("import ecp_core", "import ecp_core"),
    ("from ecp_core import GraphBuilder", "from ecp_core import GraphBuilder"),
    ("from ecp_core import Ecp", "from ecp_core import Ecp"),
    ("import ecp_client", "import ecp_client"),
    ("from ecp_client import Client", "from ecp_client import Client"),
    ("import ecp_http", "import ecp_http"),
    ("import ecp_http.startup.app", "import ecp_http.startup.app"),
    ("import ecp_http.cli", "import ecp_http.cli"),
)

WARM_UP = (
    "import ecp_core.service, ecp_http.startup.app, ecp_http.cli, cel, jsonschema, "
    "ecp_client.worker"
)
"""Loads every module the cases load, so that each case finds its byte code cached."""

FIRST_CONDITION = """
import time, timeit
from ecp_core.graphs.conditions import condition_holds
from ecp_core.graphs.definition import Condition
state = {"amount": 1250, "category": "refund", "customer": {"id": "c_1"}, "score": 0.75}
condition = Condition(expression="state.amount > 1000 && state.category == 'refund'")
started = time.perf_counter()
assert condition_holds(condition, state)
first = time.perf_counter() - started
again = min(timeit.repeat(lambda: condition_holds(condition, state), number=2000, repeat=5))
print(f"{first * 1e3:.1f} {again / 2000 * 1e6:.1f}")
"""


def timed(code: str, env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds of one fresh interpreter running ``code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)  # noqa: S603 - our own code
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="fresh interpreters per import")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ecp-pyc-") as cache:
        env = {**os.environ, "PYTHONPYCACHEPREFIX": cache}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        print(f"import times; {load_note()}")
        print(f"{'import':36} {'wall ms':>9} {'cpu ms':>9} {'cpu / bare':>11}")
        timed(WARM_UP, env)
        bare_cpu = None
        for label, code in CASES:
            runs = [timed(code, env) for _ in range(args.runs)]
            wall = statistics.median(run[0] for run in runs)
            cpu = statistics.median(run[1] for run in runs)
            bare_cpu = bare_cpu or cpu
            print(f"{label:36} {wall * 1e3:9.1f} {cpu * 1e3:9.1f} {cpu / bare_cpu:10.1f}x")
        firsts = [
            subprocess.run(  # noqa: S603 - our own interpreter on our own code
                [sys.executable, "-c", FIRST_CONDITION],
                check=True,
                env=env,
                capture_output=True,
                text=True,
            ).stdout.split()
            for _ in range(args.runs)
        ]
        first_ms = statistics.median(float(first) for first, _ in firsts)
        again_us = statistics.median(float(again) for _, again in firsts)
        print(f"first condition (import CEL, compile, evaluate): {first_ms:.1f} ms")
        print(f"one more evaluation of it: {again_us:.1f} µs")


if __name__ == "__main__":
    main()
