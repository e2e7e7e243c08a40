"""The Python client as a package: generated parts fresh, typed for mypy, imported fast, alone.

Each check runs a tool as a process: the generator (with ruff), mypy on a user program, a fresh
interpreter importing ``ecp_client``.
"""

import importlib.util
import json
import pathlib
import subprocess
import sys
import tomllib

import pytest

pytestmark = pytest.mark.integration

ROOT = pathlib.Path(__file__).parents[2]
PROGRAM = ROOT / "tests" / "typing" / "test_client_program.py"
MISUSES = {
    "run.status + 1": 'Unsupported operand types for + ("str" and "int")',
    "client.runs.start(42)": 'Argument 1 to "start" of "Runs" has incompatible type "int"',
    "client.approvals.resolve('a1', 'approve')": 'has incompatible type "str"; expected "ApprovalRecord"',
    "[a.nope for a in client.approvals.list()]": '"ApprovalRecord" has no attribute "nope"',
}


def generator():
    spec = importlib.util.spec_from_file_location(
        "generate_python_client", ROOT / "scripts" / "generate_python_client.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.spec("C18 client-py-generated")
def test_the_generated_parts_are_the_rendering_of_the_committed_sources():
    made = generator().rendering()
    models = ROOT / "packages" / "client" / "src" / "ecp_client" / "models"
    assert {path.name for path in made if path.parent == models} >= {
        "__init__.py",
        "runs.py",
        "approvals.py",
        "tasks.py",
    }
    assert {path.name for path in made if path.parent != models} == {
        "problems.py",
        "_sync_client.py",
        "_sync_resources.py",
        "_sync_sender.py",
    }
    stale = [path.name for path, text in made.items() if path.read_text(encoding="utf-8") != text]
    assert not stale, f"run `make clients`: {stale} differ from the generation"


@pytest.mark.spec("C18 client-py-generated")
def test_a_changed_schema_or_code_changes_the_generation():
    module = generator()
    document = json.loads((ROOT / "clients" / "openapi.json").read_text())
    document["components"]["schemas"]["Deployment"]["properties"]["region"] = {"type": "string"}
    assert "    region: str | None = None" in module.render_models(document)["deployments.py"]
    errors = (ROOT / "docs" / "api" / "errors.md").read_text()
    extra = errors.replace(
        "| `not_found` | 404 |", "| `gone_for_good` | 410 | Gone. |\n| `not_found` | 404 |"
    )
    assert "class GoneForGood(EcpError):" in module.render_problems(extra)
    assert "class GoneForGood" not in module.render_problems(errors)


def mypy(program: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            "",
            str(program),
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
        timeout=300,
    )


@pytest.mark.spec("C18 client-py-typing")
def test_mypy_strict_accepts_a_user_program_and_refuses_its_misuses(tmp_path):
    accepted = mypy(PROGRAM)
    assert accepted.returncode == 0, accepted.stdout
    misuse = tmp_path / "misuse.py"
    lines = [
        PROGRAM.read_text(),
        "",
        "def misuse(client: Client, run: RunStatusResponse) -> object:",
    ]
    lines += [f"    {line}" for line in MISUSES] + ["    return None", ""]
    misuse.write_text("\n".join(lines))
    refused = mypy(misuse)
    assert refused.returncode == 1
    for message in MISUSES.values():
        assert message in refused.stdout, refused.stdout
    assert f"Found {len(MISUSES)} errors" in refused.stdout, refused.stdout


@pytest.mark.spec("C18 client-py-package")
def test_import_ecp_client_loads_no_httpx_nor_another_ecp_package_and_is_quick():
    probe = (
        "import sys, time; t = time.perf_counter(); import ecp_client; "
        "took = time.perf_counter() - t; "
        "print(took, sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'httpx', 'cattrs', 'ecp_core', 'ecp_http', 'ecp_postgres', 'ecp_idp', 'ecp_billing'}))"
    )
    best = min(
        float(run.stdout.split(" ", 1)[0])
        for run in [
            subprocess.run(
                [sys.executable, "-c", probe], capture_output=True, text=True, check=True
            )
            for _ in range(3)
        ]
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip().endswith(" []"), loaded.stdout
    assert best <= 0.1, f"import ecp_client took {best:.3f} s"


@pytest.mark.spec("C18 client-py-package")
def test_the_package_depends_on_httpx_attrs_and_cattrs_only_at_the_workspace_version():
    project = tomllib.loads((ROOT / "packages" / "client" / "pyproject.toml").read_text())[
        "project"
    ]
    names = {dep.split(">")[0].split("=")[0].split("[")[0] for dep in project["dependencies"]}
    assert names == {"httpx", "attrs", "cattrs"}
    core = tomllib.loads((ROOT / "packages" / "core" / "pyproject.toml").read_text())["project"]
    assert project["version"] == core["version"]
    http = tomllib.loads((ROOT / "packages" / "adapters_http" / "pyproject.toml").read_text())
    assert f"ecp-client=={core['version']}" in http["project"]["dependencies"]
    assert (ROOT / "packages" / "client" / "src" / "ecp_client" / "py.typed").exists()
