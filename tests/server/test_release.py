"""One version everywhere, and a changelog that records each release's commit (ADR 0096)."""

import contextlib
import io
import json
import re
from importlib.metadata import version as installed

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version
from tests.support.release import ROOT, git, missing_commit, release

from ecp_http import version
from ecp_http.cli import parser
from ecp_http.openapi import build_document

pytestmark = pytest.mark.unit

PACKAGES = ("ecp-core", "ecp-postgres", "ecp-http", "ecp-idp", "ecp-billing", "ecp-client")


def entries() -> list:
    return release.parse((ROOT / "CHANGELOG.md").read_text())[1]


def expected_version() -> str:
    top = entries()[0]
    return top.version + (release.DEV if top.date is None else "")


@pytest.mark.spec("C19 one-version")
def test_every_package_the_command_line_and_the_api_say_one_version():
    assert release.problems() == []
    expected = expected_version()
    assert {name: installed(name) for name in PACKAGES} == dict.fromkeys(PACKAGES, expected), (
        "the venv is older than the pyproject.toml files: make install"
    )
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        parser().parse_args(["--version"])
    assert out.getvalue() == f"ecp {expected}\n"
    assert build_document([])["info"]["version"] == version() == expected


@pytest.mark.spec("C19 one-version")
@pytest.mark.parametrize("drift", ["own", "pin"])
def test_a_pyproject_that_drifts_is_named(tmp_path, drift):
    for name in ["CHANGELOG.md", release.SNAPSHOT, *release.PYPROJECTS]:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text())
    assert release.problems(tmp_path) == []
    http = tmp_path / "packages" / "adapters_http" / "pyproject.toml"
    current = expected_version()
    old = f'version = "{current}"' if drift == "own" else f'"ecp-core=={current}"'
    text = http.read_text()
    http.write_text(text.replace(old, old.replace(current, "9.9.9")))
    assert release.problems(tmp_path) == [
        f"packages/adapters_http/pyproject.toml: 9.9.9 (CHANGELOG.md says {current})"
    ]
    snapshot = tmp_path / release.SNAPSHOT
    snapshot.write_text(release.with_snapshot_version(snapshot.read_text(), "9.9.9"))
    assert f"clients/openapi.json info.version: 9.9.9 (CHANGELOG.md says {current})" in (
        release.problems(tmp_path)
    )


@pytest.mark.spec("C19 changelog")
def test_the_changelog_lists_releases_newest_first_each_with_its_commit():
    found = entries()
    assert found
    versions = [Version(entry.version) for entry in found]
    assert versions == sorted(versions, reverse=True)
    assert len(set(versions)) == len(versions)
    assert all(entry.date is not None for entry in found[1:]), "only the top may be unreleased"
    released = [entry for entry in found if entry.date is not None]
    assert released
    assert all(entry.commit and re.fullmatch("[0-9a-f]{40}", entry.commit) for entry in released)
    assert all(entry.notes.strip() for entry in released)
    dates = [entry.date for entry in released]
    assert dates == sorted(dates, reverse=True)


@pytest.mark.spec("C19 changelog")
def test_the_last_release_is_a_commit_here_whose_packages_say_its_version():
    last = next(entry for entry in entries() if entry.commit is not None)
    if reason := missing_commit(last.commit):
        pytest.skip(reason)
    for name in (
        "pyproject.toml",
        "packages/core/pyproject.toml",
        "packages/adapters_http/pyproject.toml",
    ):
        shown = git("show", f"{last.commit}:{name}")
        assert shown.returncode == 0, shown.stderr
        assert set(release.versions(shown.stdout)) == {last.version}, name
    ancestor = git("merge-base", "--is-ancestor", last.commit, "HEAD")
    assert ancestor.returncode == 0, "the last release is not in this build's history"


VERSIONS = st.builds(
    lambda parts, dev: ".".join(map(str, parts)) + (".dev0" if dev else ""),
    st.lists(st.integers(0, 300), min_size=3, max_size=3),
    st.booleans(),
)


@pytest.mark.spec("C19 one-version")
@given(VERSIONS)
def test_setting_a_version_sets_it_everywhere_in_each_pyproject(new):
    for name in release.PYPROJECTS:
        text = (ROOT / name).read_text()
        changed = release.with_version(text, new)
        assert set(release.versions(changed)) == {new}
        assert len(release.versions(changed)) == len(release.versions(text))
        assert release.with_version(changed, expected_version()) == text


SNAPSHOT_TEXT = (ROOT / release.SNAPSHOT).read_text()


@pytest.mark.spec("C19 one-version")
@given(VERSIONS)
def test_setting_the_snapshot_version_changes_its_info_version_only(new):
    changed = release.with_snapshot_version(SNAPSHOT_TEXT, new)
    assert json.loads(changed) == json.loads(SNAPSHOT_TEXT) | {
        "info": json.loads(SNAPSHOT_TEXT)["info"] | {"version": new}
    }
    assert release.snapshot_version(changed) == new


NOTES = st.lists(
    st.text(
        st.characters(codec="ascii", exclude_characters="\n\r\x0b\x0c\x1c\x1d\x1e\x85"), max_size=40
    )
    .map(lambda line: "- " + line.strip())
    .filter(lambda line: not line.startswith("- #")),
    min_size=1,
    max_size=4,
).map("\n".join)
COMMITS = st.text("0123456789abcdef", min_size=40, max_size=40)
DAYS = st.dates().map(lambda day: day.isoformat()).filter(lambda day: len(day) == 10)


@pytest.mark.spec("C19 changelog")
@given(
    st.lists(st.tuples(VERSIONS, DAYS, st.none() | COMMITS, NOTES), min_size=1, max_size=4),
    st.none() | NOTES,
)
def test_a_changelog_reads_back_as_it_was_written(released, unreleased):
    written = [release.Entry(v, day, commit, notes) for v, day, commit, notes in released]
    if unreleased is not None:
        written.insert(0, release.Entry("9.0.0", None, None, unreleased))
    preamble = "# Changelog\n\nWhat each release changed.\n\n"
    assert release.parse(release.render(preamble, written)) == (preamble, written)
