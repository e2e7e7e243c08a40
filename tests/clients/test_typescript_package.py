"""The TypeScript client's generated parts are fresh, and a user's program type-checks strictly."""

import pathlib

import pytest
from tests.support.typescript import PACKAGE, build, node, npm

pytestmark = pytest.mark.integration

GENERATED = ("api.ts", "problems.ts")


@pytest.mark.spec("C18 client-ts-generated")
def test_the_committed_generated_files_are_a_fresh_generation(tmp_path: pathlib.Path):
    build()
    node(["scripts/generate.mjs", str(tmp_path)], {})
    for name in GENERATED:
        committed = (PACKAGE / "src" / "generated" / name).read_text(encoding="utf-8")
        fresh = (tmp_path / name).read_text(encoding="utf-8")
        assert committed == fresh, f"src/generated/{name} is stale: run `make clients`"


@pytest.mark.spec("C18 client-ts-generated")
def test_a_problem_code_of_the_server_has_its_class(tmp_path: pathlib.Path):
    build()
    node(["scripts/generate.mjs", str(tmp_path)], {})
    problems = (tmp_path / "problems.ts").read_text(encoding="utf-8")
    for code, name in [
        ("not_found", "NotFoundError"),
        ("database_unavailable", "DatabaseUnavailableError"),
        ("internal_error", "InternalError"),
    ]:
        assert f"export class {name} extends EcpError {{" in problems
        assert f"  {code}: {name}," in problems


@pytest.mark.spec("C18 client-ts-typing")
def test_a_user_program_type_checks_with_tsc_strict():
    build()
    npm("run", "--silent", "typecheck-example")
