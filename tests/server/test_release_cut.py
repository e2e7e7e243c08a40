"""``make release`` in a clone of this repository: the release commit, then the record of its hash."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest
from packaging.version import Version
from tests.support.release import ROOT, git, release

pytestmark = pytest.mark.integration

IDENTITY = {
    "GIT_AUTHOR_NAME": "release test",
    "GIT_AUTHOR_EMAIL": "release@example.invalid",
    "GIT_COMMITTER_NAME": "release test",
    "GIT_COMMITTER_EMAIL": "release@example.invalid",
}


@pytest.fixture
def clone(tmp_path) -> pathlib.Path:
    """A clone of this commit with this checkout's release files in one more commit."""
    target = tmp_path / "clone"
    done = git("clone", "--quiet", "--shared", str(ROOT), str(target))
    assert done.returncode == 0, done.stderr
    names = ["CHANGELOG.md", "uv.lock", "scripts/release.py", release.SNAPSHOT]
    for name in [*names, *release.PYPROJECTS]:
        shutil.copyfile(ROOT / name, target / name)
    git("add", "--all", cwd=target)
    committed = commit(target, "this checkout's release files")
    assert committed.returncode == 0, committed.stdout + committed.stderr
    return target


def commit(clone: pathlib.Path, message: str) -> subprocess.CompletedProcess[str]:
    command = ["git", "commit", "--quiet", "--allow-empty", "--message", message]
    return subprocess.run(
        command, cwd=clone, env=os.environ | IDENTITY, capture_output=True, text=True, check=False
    )


def cut(clone: pathlib.Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "scripts/release.py", "cut", *args],
        cwd=clone,
        env=os.environ | IDENTITY,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.spec("C19 changelog")
def test_cutting_a_release_commits_it_then_records_its_hash(clone):
    _, before = release.parse((clone / "CHANGELOG.md").read_text())
    unreleased = before[0]
    assert unreleased.date is None
    done = cut(clone)
    assert done.returncode == 0, done.stdout + done.stderr
    released = git("rev-parse", "HEAD~1", cwd=clone).stdout.strip()
    assert done.stdout == f"released as {released}\n"
    subject = git("log", "-1", "--format=%s", released, cwd=clone).stdout.strip()
    assert subject == f"Release {unreleased.version}"

    # The released commit: every version says the release, its entry dated, its hash to come.
    for name in release.PYPROJECTS:
        shown = git("show", f"{released}:{name}", cwd=clone).stdout
        assert set(release.versions(shown)) == {unreleased.version}, name
    shown = git("show", f"{released}:{release.SNAPSHOT}", cwd=clone).stdout
    assert release.snapshot_version(shown) == unreleased.version
    _, then = release.parse(git("show", f"{released}:CHANGELOG.md", cwd=clone).stdout)
    assert (then[0].version, then[0].commit, then[0].notes) == (
        unreleased.version,
        None,
        unreleased.notes,
    )
    assert then[0].date is not None

    # The next commit records the hash and opens the next minor version.
    _, now = release.parse((clone / "CHANGELOG.md").read_text())
    opened = str(Version(unreleased.version).major) + f".{Version(unreleased.version).minor + 1}.0"
    assert (now[0].version, now[0].date, now[0].notes) == (opened, None, "")
    assert now[1] == release.Entry(unreleased.version, then[0].date, released, unreleased.notes)
    assert now[2:] == before[1:]
    assert release.problems(clone) == []
    assert git("status", "--porcelain", cwd=clone).stdout == ""
    assert "ecp-http" in (clone / "uv.lock").read_text()
    locked = (clone / "uv.lock").read_text()
    assert f'name = "ecp-core"\nversion = "{opened}.dev0"' in locked


@pytest.mark.spec("C19 changelog")
def test_a_release_is_cut_only_from_a_clean_tree_with_notes(clone):
    (clone / "README.md").write_text("changed\n")
    refused = cut(clone)
    assert refused.returncode != 0
    assert "working tree has changes" in refused.stderr
    git("checkout", "--", "README.md", cwd=clone)
    _, entries = release.parse((clone / "CHANGELOG.md").read_text())
    preamble = release.parse((clone / "CHANGELOG.md").read_text())[0]
    empty = release.Entry(entries[0].version, None, None, "")
    (clone / "CHANGELOG.md").write_text(release.render(preamble, [empty, *entries[1:]]))
    git("add", "CHANGELOG.md", cwd=clone)
    commit(clone, "nothing to say")
    refused = cut(clone)
    assert refused.returncode != 0
    assert "say what changed" in refused.stderr
    assert git("log", "-1", "--format=%s", cwd=clone).stdout.strip() == "nothing to say"
