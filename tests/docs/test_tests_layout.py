"""The tests are laid out as docs/testing.md says: by area, the kind a marker, helpers apart.

The kind marker itself (exactly one of ``unit``, ``contract``, ``integration``, ``e2e`` on every
test under ``tests/``) is held at collection by ``tests/conftest.py``.
"""

import ast
from collections import Counter
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

TESTS = Path(__file__).parents[1]
APART = {"support", "typing", "plugins"}
"""Folders that are not an area's tests: helpers, mypy's checks, a plug-in package."""


def _areas() -> list[Path]:
    return sorted(
        p for p in TESTS.iterdir() if p.is_dir() and p.name not in APART | {"__pycache__"}
    )


def _marks(module: Path) -> set[str]:
    """The ``pytest.mark.<name>`` names in the module's ``pytestmark``."""
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "pytestmark" for target in node.targets
        ):
            return {
                sub.attr
                for sub in ast.walk(node.value)
                if isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Attribute)
                and sub.value.attr == "mark"
            }
    return set()


def test_there_are_areas_and_each_holds_tests() -> None:
    areas = _areas()
    assert len(areas) >= 20
    for area in areas:
        assert list(area.glob("test_*.py")), f"{area.name} holds no test module"


def test_an_areas_folder_holds_test_modules_only() -> None:
    strays = [
        f"{area.name}/{module.name}"
        for area in _areas()
        for module in area.glob("*.py")
        if not module.name.startswith("test_")
    ]
    assert strays == [], "helpers belong in tests/support"


def test_no_file_name_appears_twice() -> None:
    names = Counter(module.name for module in TESTS.rglob("test_*.py"))
    assert [name for name, seen in names.items() if seen > 1] == []


def test_contract_suites_and_only_they_are_named_test_area_contract() -> None:
    wrong = []
    for area in _areas():
        for module in area.glob("test_*.py"):
            named = module.name.endswith("_contract.py")
            marked = "contract" in _marks(module)
            if named != marked:
                wrong.append(f"{area.name}/{module.name}")
    assert wrong == []


def test_the_marks_reader_sees_a_kind(tmp_path: Path) -> None:
    """The check above reads marks as written in this project (a list or a single mark)."""
    single = tmp_path / "test_a.py"
    single.write_text("import pytest\npytestmark = pytest.mark.contract\n", encoding="utf-8")
    listed = tmp_path / "test_b.py"
    listed.write_text(
        'import pytest\npytestmark = [pytest.mark.unit, pytest.mark.spec("x")]\n', encoding="utf-8"
    )
    assert _marks(single) == {"contract"}
    assert _marks(listed) == {"unit", "spec"}
