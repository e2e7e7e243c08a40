"""Every coded core error is documented in docs/api/errors.md."""

import pathlib

from ecp_core import errors
from ecp_core.graphs.conditions import ConditionError
from ecp_core.runs.engine import NoMatchingEdge

DOC = (pathlib.Path(__file__).parents[2] / "docs" / "api" / "errors.md").read_text()


def all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from all_subclasses(sub)


def test_every_code_is_documented_once():
    classes = [errors.EcpError, *all_subclasses(errors.EcpError)]
    codes = {cls.code for cls in classes}
    assert {ConditionError.code, NoMatchingEdge.code} <= codes
    for code in codes:
        assert DOC.count(f"| `{code}` |") == 1, code
    assert len(codes) == len(classes)
