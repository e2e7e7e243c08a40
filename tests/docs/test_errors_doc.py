"""docs/api/errors.md is the rendering of the error classes and the code tables, and never drifts.

Every error class has a status (or is a run failure reason), so a new error cannot ship as a
silent 500, and every code the HTTP layer answers with itself is in its table.
"""

import ast
import json
import pathlib

import pytest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.routing import Route
from starlette.testclient import TestClient

import ecp_core
import ecp_core.runs.run.model
import ecp_http
from ecp_core.errors import EcpError
from ecp_core.graphs.conditions import ConditionError
from ecp_core.runs.run.model import FAILURE_REASONS
from ecp_core.runs.run.walk import NoMatchingEdge
from ecp_http.openapi.errors_doc import error_classes, main, render, unanswered
from ecp_http.server import problems
from ecp_http.server.problems import STATUS_BY_CODE, TRANSPORT_CODES

pytestmark = [pytest.mark.unit, pytest.mark.spec("C1 problem-details")]

DOC = pathlib.Path(__file__).parents[2] / "docs" / "api" / "errors.md"
REGENERATE = "python -m ecp_http.openapi.errors_doc --output docs/api/errors.md"


def row(code):
    return f"| `{code}` |"


def test_the_committed_document_is_the_rendering():
    assert DOC.read_text(encoding="utf-8") == render(), f"regenerate it: {REGENERATE}"


def test_main_writes_the_document(tmp_path, capsys):
    target = tmp_path / "errors.md"
    assert main(["--output", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == render()
    assert main([]) == 0
    assert capsys.readouterr().out == render()


def test_every_code_appears_once_and_the_root_never():
    text = render()
    codes = [cls.code for cls in error_classes()] + list(TRANSPORT_CODES)
    for code in {*codes, *FAILURE_REASONS}:
        assert text.count(row(code)) == 1, code
    for cls in error_classes():
        if cls.code in STATUS_BY_CODE:
            assert f"{row(cls.code)} {STATUS_BY_CODE[cls.code]} |" in text
    assert row(EcpError.code) not in text


def test_every_error_class_has_a_status_or_is_a_run_failure_reason():
    classes = error_classes()
    assert unanswered(classes) == []
    assert len({cls.code for cls in classes}) == len(classes)
    assert {ConditionError, NoMatchingEdge} <= set(classes)
    assert {ConditionError.code, NoMatchingEdge.code} <= FAILURE_REASONS.keys()
    assert all(cls.__doc__ for cls in classes)


def test_a_class_without_a_status_is_caught():
    class Unmapped(EcpError):
        """A code nobody gave a status."""

        code = "unmapped_for_this_test"

    assert unanswered([Unmapped, NoMatchingEdge]) == ["unmapped_for_this_test"]


def test_the_status_table_names_no_code_that_no_class_raises():
    codes = {cls.code for cls in error_classes()}
    assert STATUS_BY_CODE.keys() <= codes
    assert not (TRANSPORT_CODES.keys() & (codes | FAILURE_REASONS.keys()))


def test_every_failure_reason_constant_is_in_the_table():
    constants = {
        value
        for name, value in vars(ecp_core.runs.run.model).items()
        if name.isupper() and isinstance(value, str)
    }
    assert constants == FAILURE_REASONS.keys()


def literal_problem_codes():
    """Codes written as string literals in ``problem(status, code, …)`` calls of ecp_http."""
    root = pathlib.Path(ecp_http.__file__).parent
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call) or len(node.args) < 2:
                continue
            name = getattr(node.func, "id", getattr(node.func, "attr", None))
            code = node.args[1]
            if name == "problem" and isinstance(code, ast.Constant):
                yield path.name, code.value


def test_the_http_layer_writes_no_code_outside_the_tables():
    for where, code in literal_problem_codes():
        assert code in STATUS_BY_CODE or code in TRANSPORT_CODES, (where, code)


def boom(_):
    raise HTTPException(418, "no coffee")


def test_the_handlers_answer_with_the_tables_codes():
    app = Starlette(
        routes=[Route("/teapot", boom)],
        exception_handlers={HTTPException: problems.handle_http_error},
    )
    with TestClient(app) as client:
        answers = {
            "method_not_allowed": client.post("/teapot"),
            "http_error": client.get("/teapot"),
            "not_found": client.get("/nowhere"),
        }
    unexpected = problems.unexpected()
    assert json.loads(unexpected.body)["code"] == problems.INTERNAL_ERROR
    assert unexpected.status_code == TRANSPORT_CODES[problems.INTERNAL_ERROR][0]
    assert {*answers, problems.INTERNAL_ERROR} == {*TRANSPORT_CODES, "not_found"}
    for code, response in answers.items():
        assert response.json()["code"] == code
        status = TRANSPORT_CODES[code][0] if code in TRANSPORT_CODES else STATUS_BY_CODE[code]
        assert response.status_code == (status or 418)


def test_no_package_raises_the_root_itself():
    """The document says ``ecp_error`` is never answered: only subclasses are raised."""
    for package in (ecp_core, ecp_http):
        for path in pathlib.Path(package.__file__).parent.rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                    assert getattr(node.exc.func, "id", None) != "EcpError", path.name
