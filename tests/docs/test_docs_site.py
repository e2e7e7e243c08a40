"""The guides build into a site with ``mkdocs build --strict`` (``make docs``, ADR 0056).

Strict mode fails on a broken link or anchor between the guides and on a page left out of the
navigation. Skipped where the docs requirements (the dev group of the root ``pyproject.toml``) are not installed.
"""

import os
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).parents[2]


def test_the_guides_build_into_a_site_with_navigation_and_search(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs requirements are not installed")
    pytest.importorskip("material", reason="the docs requirements are not installed")
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert built.returncode == 0, built.stderr[-3000:]
    guides = sorted(path.stem for path in (ROOT / "docs").glob("*.md"))
    assert "production" in guides
    for guide in guides:
        assert (site / f"{guide}.html").is_file(), guide
    assert (site / "decisions" / "index.html").is_file()  # the decisions index
    assert (site / "search" / "search_index.json").is_file()
    home = (site / "index.html").read_text(encoding="utf-8")
    assert 'href="production.html"' in home
    assert "fonts.googleapis.com" not in home  # the site loads nothing from elsewhere
