"""Issue 21, a light core: importing ``ecp_core`` loads no optional machinery (ADR 0052).

Each check runs in a fresh interpreter and reads ``sys.modules``; none looks at a clock.
"""

import ast
import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

import ecp_core

pytestmark = pytest.mark.unit

OPTIONAL = ("cel", "typer", "rich", "prompt_toolkit", "pydantic", "jsonschema", "referencing")
"""Loaded only by the first condition (the CEL binding and the command line its package loads)
or the first JSON Schema check (jsonschema and its reference resolver)."""

TEST_ONLY = ("hypothesis", "pytest", "_pytest")
"""The conformance kit's dependencies (the ``testing`` extra): never loaded by the domain."""

EVERY_DOMAIN_MODULE = """
import importlib, pkgutil
def load(package):
    for module in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if module.name not in ("ecp_core.testing", "ecp_core.pytest_plugin"):
            loaded = importlib.import_module(module.name)
            if module.ispkg:
                load(loaded)
load(importlib.import_module("ecp_core"))
"""
"""Imports every module of the core but the conformance kit (``pkgutil.walk_packages`` would
import the kit's package to look inside it)."""


def _loaded_after(code: str) -> set[str]:
    """The top-level packages in ``sys.modules`` after ``code`` runs in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True)
    return {name.split(".")[0] for name in json.loads(out.stdout.splitlines()[-1])}


def test_import_ecp_core_loads_no_optional_machinery():
    loaded = _loaded_after("import ecp_core")
    assert "ecp_core" in loaded
    assert loaded.isdisjoint(OPTIONAL + TEST_ONLY)


def test_the_whole_domain_loads_no_optional_machinery():
    """Every module but the conformance kit: the facade, the memory store, every area."""
    loaded = _loaded_after(f"{EVERY_DOMAIN_MODULE}\nfrom ecp_core import Ecp\nEcp.in_memory()")
    assert loaded.isdisjoint(OPTIONAL + TEST_ONLY), sorted(loaded & {*OPTIONAL, *TEST_ONLY})


def test_the_first_condition_loads_cel_and_evaluates():
    code = """
from ecp_core.graphs.conditions import condition_holds
from ecp_core.graphs.definition import Condition
assert condition_holds(Condition(expression="state.n > 2"), {"n": 3})
assert not condition_holds(Condition(expression="state.n > 2"), {"n": 1})
"""
    loaded = _loaded_after(code)
    assert "cel" in loaded
    assert "jsonschema" not in loaded


def test_the_first_schema_check_loads_jsonschema_and_checks():
    code = """
from ecp_core.contracts.schema import payload_errors, schema_errors
schema = {"type": "object", "required": ["a"]}
assert schema_errors(schema) == []
assert [error.loc for error in payload_errors(schema, {})] == [()]
"""
    loaded = _loaded_after(code)
    assert "jsonschema" in loaded
    assert "cel" not in loaded


def _type_checking_imports() -> dict[str, str]:
    """Name → module of the imports under ``if TYPE_CHECKING:`` in ``ecp_core/__init__.py``."""
    tree = ast.parse(Path(ecp_core.__file__).read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    )
    return {
        alias.name: statement.module or ""
        for statement in block.body
        if isinstance(statement, ast.ImportFrom)
        for alias in statement.names
    }


def test_every_public_name_resolves_and_is_listed():
    """The lazy public surface: ``__all__``, the homes, the imports type checkers see, ``dir()``
    and attribute access agree."""
    assert sorted(ecp_core.__all__) == sorted(ecp_core._HOMES)
    assert _type_checking_imports() == ecp_core._HOMES
    assert set(ecp_core.__all__) <= set(dir(ecp_core))
    for name, home in ecp_core._HOMES.items():
        assert getattr(ecp_core, name) is getattr(importlib.import_module(home), name)


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="NoSuchName"):
        _ = ecp_core.NoSuchName  # type: ignore[attr-defined]


def test_the_server_app_loads_the_pdf_machinery_only_for_a_report():
    """fpdf2 brings Pillow, fontTools and numpy: the model-migration report loads them, not start-up."""
    loaded = _loaded_after("import ecp_http.startup.app")
    assert loaded.isdisjoint({"fpdf", "PIL", "fontTools", "numpy"})
