"""Running a guide's ``sh`` blocks as written, in one bash session, against a live server.

A guide declares the variables it needs in ``export`` lines (the base URL, tokens); a test gives
them this server's values and every other line runs as written. Each block's output is kept
apart, so the test can check every answer the guide shows.
"""

import json
import pathlib
import shlex
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any

END = "@@ end of block @@"
"""Printed after each block, so that one session's output splits back into the blocks' own."""


def sh_blocks(markdown: str) -> list[str]:
    """The text of every fenced ``sh`` block, in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in markdown.splitlines():
        if current is None and line.strip() == "```sh":
            current = []
        elif current is not None and line.strip() == "```":
            blocks.append("\n".join(current))
            current = None
        elif current is not None:
            current.append(line)
    assert current is None, "an sh block is not closed"
    return blocks


def with_values(block: str, values: Mapping[str, str]) -> str:
    """``block`` with the declared variables' ``export`` lines set to ``values``."""
    lines = []
    for line in block.splitlines():
        name = line.removeprefix("export ").partition("=")[0]
        if line.startswith("export ") and name in values:
            lines.append(f"export {name}={shlex.quote(values[name])}")
        else:
            lines.append(line)
    return "\n".join(lines)


def declared(blocks: list[str]) -> list[str]:
    """The variables the blocks export, in order."""
    return [
        line.removeprefix("export ").partition("=")[0]
        for block in blocks
        for line in block.splitlines()
        if line.startswith("export ")
    ]


def run_blocks(
    blocks: list[str],
    values: Mapping[str, str],
    *,
    cwd: pathlib.Path | None = None,
    timeout: float = 120,
) -> tuple[list[str], str]:
    """Run the blocks in one ``set -euo pipefail`` bash session; each block's output, and stderr.

    Only bash, curl and jq are on its ``PATH``: no proxy variables and no ECP_ settings but the
    guide's, so curl talks to the loopback server directly.
    """
    tools = [shutil.which(tool) for tool in ("bash", "curl", "jq")]
    assert all(tools), "the guide needs bash, curl and jq on PATH"
    bash = str(tools[0])
    script = "set -euo pipefail\n" + "".join(
        f"{with_values(block, values)}\nprintf '\\n%s\\n' '{END}'\n" for block in blocks
    )
    env = {"PATH": ":".join(str(pathlib.Path(str(tool)).parent) for tool in tools)}
    done = subprocess.run(
        [bash, "-c", script],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    outputs = [out.strip() for out in done.stdout.split(END)][: len(blocks)]
    assert len(outputs) == len(blocks)
    return outputs, done.stderr


def json_values(text: str) -> list[Any]:
    """The JSON values ``text`` holds one after another (jq prints a stream)."""
    decoder, found, at = json.JSONDecoder(), [], 0
    text = text.strip()
    while at < len(text):
        value, at = decoder.raw_decode(text, at)
        found.append(value)
        while at < len(text) and text[at].isspace():
            at += 1
    return found
