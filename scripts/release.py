"""``make release``: cut the release CHANGELOG.md is preparing, and record the commit it is.

Every package carries one version (ADR 0096). Between releases it is the next release's with
``.dev0`` (``0.2.0.dev0``) and CHANGELOG.md's top entry is that release, ``(unreleased)``.
Cutting it takes two commits on a clean tree:

1. ``Release X``: every ``pyproject.toml`` (the packages' own versions and their pins on each
   other) and the OpenAPI snapshot (``clients/openapi.json``) say ``X``, uv.lock follows, and
   the entry is dated. This is the released commit.
2. The entry records that commit's full hash (a commit cannot name itself, and tags may not
   travel with a clone), a new ``(unreleased)`` entry opens for the next minor version, and the
   packages say its ``.dev0``.

    python scripts/release.py check      # the versions agree with each other and the changelog
    python scripts/release.py cut [--next 0.3.0]
"""

import argparse
import datetime as dt
import pathlib
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass

ROOT = pathlib.Path(__file__).resolve().parent.parent
CHANGELOG = ROOT / "CHANGELOG.md"
PYPROJECTS = (
    "pyproject.toml",
    "packages/core/pyproject.toml",
    "packages/adapters_postgres/pyproject.toml",
    "packages/adapters_http/pyproject.toml",
    "packages/adapters_idp/pyproject.toml",
    "packages/adapters_billing/pyproject.toml",
    "packages/client/pyproject.toml",
)
"""The workspace's and the six packages' ``pyproject.toml`` files, which carry the version."""
SNAPSHOT = "clients/openapi.json"
"""The served OpenAPI document the client libraries are generated from: its ``info.version``."""
DEV = ".dev0"
_INFO_VERSION = re.compile(r'(?m)(^  "info": \{\n(?:^    .*\n)*?^    "version": ")([^"]*)(")')
_OWN = re.compile(r'^version = "(?P<version>[^"]+)"$', re.MULTILINE)
_PIN = re.compile(r'"(?P<name>ecp-[a-z]+(?:\[[a-z,]+\])?)==(?P<version>[^";\s]+)')
_HEADING = re.compile(
    r"^## (?P<version>\S+) \((?:(?P<unreleased>unreleased)"
    r"|(?P<date>\d{4}-\d{2}-\d{2}), commit (?P<commit>[0-9a-f]{40}|pending))\)$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Entry:
    """One release in CHANGELOG.md: its version, day and commit (None while unreleased)."""

    version: str
    date: str | None
    commit: str | None
    notes: str

    def heading(self) -> str:
        """The entry's ``##`` line."""
        if self.date is None:
            return f"## {self.version} (unreleased)"
        return f"## {self.version} ({self.date}, commit {self.commit or 'pending'})"


def versions(text: str) -> list[str]:
    """A ``pyproject.toml``'s own version and every version it pins a sibling package to."""
    return [m["version"] for m in _OWN.finditer(text)] + [m["version"] for m in _PIN.finditer(text)]


def with_version(text: str, version: str) -> str:
    """``text`` (a ``pyproject.toml``) with its own version and its sibling pins set to ``version``."""
    text = _OWN.sub(f'version = "{version}"', text, count=1)
    return _PIN.sub(lambda m: f'"{m["name"]}=={version}', text)


def snapshot_version(text: str) -> str | None:
    """The ``info.version`` of ``clients/openapi.json`` (as the snapshot renders it), or None."""
    found = _INFO_VERSION.search(text)
    return None if found is None else found[2]


def with_snapshot_version(text: str, version: str) -> str:
    """``clients/openapi.json`` with its ``info.version`` set to ``version``."""
    return _INFO_VERSION.sub(lambda m: f"{m[1]}{version}{m[3]}", text, count=1)


def parse(text: str) -> tuple[str, list[Entry]]:
    """CHANGELOG.md as its preamble and its entries, newest first."""
    found = list(_HEADING.finditer(text))
    if not found:
        return text, []
    entries = []
    for match, after in zip(found, [*found[1:], None], strict=True):
        end = len(text) if after is None else after.start()
        commit = match["commit"] if match["commit"] != "pending" else None
        notes = text[match.end() : end].strip("\n")
        entries.append(Entry(match["version"], match["date"], commit, notes))
    return text[: found[0].start()], entries


def render(preamble: str, entries: Sequence[Entry]) -> str:
    """CHANGELOG.md from its preamble and entries (what :func:`parse` reads back)."""
    blocks = [f"{entry.heading()}\n\n{entry.notes}".rstrip("\n") + "\n" for entry in entries]
    return preamble + "\n".join(blocks)


def next_minor(version: str) -> str:
    """The next minor version: ``0.2.0`` → ``0.3.0``."""
    major, minor = version.split(".")[:2]
    return f"{major}.{int(minor) + 1}.0"


def problems(root: pathlib.Path = ROOT) -> list[str]:
    """Where the versions disagree with each other or with the changelog's top entry."""
    _, entries = parse((root / "CHANGELOG.md").read_text())
    if not entries:
        return ["CHANGELOG.md has no entry"]
    top = entries[0]
    expected = top.version + (DEV if top.date is None else "")
    found = []
    for name in PYPROJECTS:
        found += [f"{name}: {v}" for v in versions((root / name).read_text()) if v != expected]
    snapshot = snapshot_version((root / SNAPSHOT).read_text())
    if snapshot != expected:
        found.append(f"{SNAPSHOT} info.version: {snapshot}")
    return [f"{line} (CHANGELOG.md says {expected})" for line in found]


def _set_versions(root: pathlib.Path, version: str) -> None:
    for name in PYPROJECTS:
        path = root / name
        path.write_text(with_version(path.read_text(), version))
    snapshot = root / SNAPSHOT
    snapshot.write_text(with_snapshot_version(snapshot.read_text(), version))
    uv = pathlib.Path(sys.executable).with_name("uv")
    command = str(uv) if uv.exists() else shutil.which("uv") or "uv"
    _run(root, command, "lock", "--offline", "--python", sys.executable)


def _git(root: pathlib.Path, *args: str) -> str:
    return _run(root, shutil.which("git") or "git", *args)


def _run(root: pathlib.Path, *command: str) -> str:
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, check=False)  # noqa: S603
    if done.returncode != 0:
        sys.exit(f"{' '.join(command)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout.strip()


def cut(root: pathlib.Path, today: str, following: str | None = None) -> str:
    """Cut the unreleased top entry as two commits (module docstring); the released commit."""
    if _git(root, "status", "--porcelain"):
        sys.exit("the working tree has changes: commit or stash them first")
    path = root / "CHANGELOG.md"
    preamble, entries = parse(path.read_text())
    if not entries or entries[0].date is not None or not entries[0].notes.strip():
        sys.exit("CHANGELOG.md's top entry must be (unreleased) and say what changed")
    release = entries[0]
    dated = Entry(release.version, today, None, release.notes)
    _set_versions(root, release.version)
    path.write_text(render(preamble, [dated, *entries[1:]]))
    _git(root, "commit", "--quiet", "--all", "--message", f"Release {release.version}")
    commit = _git(root, "rev-parse", "HEAD")
    opened = Entry(following or next_minor(release.version), None, None, "")
    recorded = Entry(release.version, today, commit, release.notes)
    path.write_text(render(preamble, [opened, recorded, *entries[1:]]))
    _set_versions(root, opened.version + DEV)
    message = f"CHANGELOG.md records release {release.version} as {commit}; {opened.version} opens"
    _git(root, "commit", "--quiet", "--all", "--message", message)
    return commit


def main(argv: Sequence[str] | None = None) -> None:
    """``check`` or ``cut``."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="the versions agree with each other and CHANGELOG.md")
    cutting = commands.add_parser("cut", help="release the (unreleased) entry: two commits")
    cutting.add_argument("--next", help="the version to open afterwards (the next minor)")
    args = parser.parse_args(argv)
    if args.command == "check":
        if found := problems():
            sys.exit("\n".join(found))
        return
    today = dt.datetime.now(dt.UTC).date().isoformat()
    commit = cut(ROOT, today, args.next)
    sys.stdout.write(f"released as {commit}\n")


if __name__ == "__main__":
    main()
