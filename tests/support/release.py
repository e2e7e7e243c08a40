"""``scripts/release.py`` as a module, and the previous release's commit in this clone.

The version and changelog tests read CHANGELOG.md with the script's own parser, and the rolling
upgrade test serves the release the changelog records last.
"""

import importlib.util
import pathlib
import shutil
import subprocess
import types

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _load() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "release.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


release = _load()


def git(*args: str, cwd: pathlib.Path = ROOT) -> subprocess.CompletedProcess[str]:
    """``git args`` in the checkout (or ``cwd``), its output captured; not checked."""
    command = [shutil.which("git") or "git", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)


def missing_commit(commit: str) -> str | None:
    """Why ``commit`` cannot be read in this clone (a shallow clone, say), or None when it can."""
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0:
        return None
    shallow = git("rev-parse", "--is-shallow-repository").stdout.strip() == "true"
    how = (
        "this clone is shallow (`git fetch --unshallow`)" if shallow else "it is not in this clone"
    )
    return f"commit {commit} cannot be read: {how}"


def previous_release() -> tuple[str, str]:
    """The version and commit of the newest release CHANGELOG.md records as cut."""
    _, entries = release.parse((ROOT / "CHANGELOG.md").read_text())
    cut = next(entry for entry in entries if entry.commit is not None)
    return cut.version, cut.commit
