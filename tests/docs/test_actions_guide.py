"""``docs/actions.md`` as written: every ``sh`` block runs, in order, against a live ``ecp serve``.

The blocks run with bash in a fresh directory holding a link to the venv (as from a checkout),
each seeing what the ones before exported. The server is started the way the guide's
``console`` block says, on a free port (the only change made to the blocks is that port) and
over a fresh database. Blocks check their own answers (``curl --fail-with-body``, ``jq -e``).
"""

import os
import pathlib
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator

import httpx
import pytest

pytestmark = pytest.mark.e2e

GUIDE = pathlib.Path(__file__).parents[2] / "docs" / "actions.md"
VENV = pathlib.Path(sys.executable).parent.parent
STARTUP_SECONDS = 60.0
GUIDE_URL = "http://127.0.0.1:8000"


def blocks(kind: str) -> list[str]:
    """The guide's fenced blocks of ``kind``, in order."""
    return re.findall(rf"^```{kind}\n(.*?)^```$", GUIDE.read_text(), flags=re.DOTALL | re.MULTILINE)


def clean_environ() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}


def run_block(workdir: pathlib.Path, block: str) -> subprocess.CompletedProcess[str]:
    """One block in bash, after what earlier blocks exported; what it exports is kept."""
    state = workdir / ".guide-state.sh"
    script = f"[ -f {state} ] && source {state}\nset -euo pipefail\n{block}\nexport -p > {state}\n"
    return subprocess.run(
        ["bash", "-c", script],  # noqa: S607 - bash from PATH, as a reader runs it
        cwd=workdir,
        env=clean_environ(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def server(tmp_path, fresh_database) -> Iterator[tuple[pathlib.Path, Callable[[], str]]]:
    """A checkout-like directory and an ``ecp serve`` started there once the plug-in exists."""
    workdir = tmp_path / "checkout"
    workdir.mkdir()
    (workdir / ".venv").symlink_to(VENV)
    process: subprocess.Popen[str] | None = None

    def start() -> str:
        nonlocal process
        env = clean_environ() | {
            "ECP_DATABASE_URL": fresh_database,
            "ECP_ACTION_MODULES": "word_count:register",
            "PYTHONPATH": f"{workdir}/word-count/src",
            "ECP_CLOUD_SCHEDULER_ENABLED": "false",
        }
        out = tmp_path / "serve.out"
        with out.open("w") as stdout, (tmp_path / "serve.err").open("w") as stderr:
            process = subprocess.Popen(
                [str(workdir / ".venv" / "bin" / "ecp"), "serve", "--port", "0"],
                cwd=workdir,
                env=env,
                stdout=stdout,
                stderr=stderr,
                text=True,
            )
        deadline = time.monotonic() + STARTUP_SECONDS
        while time.monotonic() < deadline:
            assert process.poll() is None, (tmp_path / "serve.err").read_text()
            found = re.search(r"ECP is serving on (http://\S+)", out.read_text())
            if found:
                try:
                    httpx.get(f"{found[1]}/health/live", timeout=2.0)
                except httpx.TransportError:
                    pass
                else:
                    return found[1]
            time.sleep(0.05)
        pytest.fail("ecp serve did not serve in time")

    yield workdir, start
    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


@pytest.mark.spec("C10 action-plugins")
def test_every_command_of_the_actions_guide_runs_as_written(server):
    workdir, start = server
    commands = blocks("sh")
    console = blocks("console")
    assert any("ECP_ACTION_MODULES=word_count:register" in block for block in console)
    assert sum(GUIDE_URL in block for block in commands) == 1
    served = False
    for index, block in enumerate(commands):
        if GUIDE_URL in block:  # the guide's server is started before its address is used
            block = block.replace(GUIDE_URL, start())  # noqa: PLW2901 - the one change
            served = True
        done = run_block(workdir, block)
        assert done.returncode == 0, f"block {index}:\n{block}\n{done.stdout}\n{done.stderr}"
        if "ecp actions" in block:
            listed = [line.split() for line in done.stdout.splitlines()]
            assert ["word_count", "plugin", "word_count/1"] in listed
    assert served


def test_the_packaging_example_declares_the_entry_point():
    [toml] = blocks("toml")
    assert '[project.entry-points."ecp.actions"]\nword_count = "word_count:register"' in toml
