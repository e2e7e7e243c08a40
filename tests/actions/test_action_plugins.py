"""Plug-ins from ``ECP_ACTION_MODULES`` and entry points: the server, ``ecp actions``, refusals.

Modules are real files in a temporary directory on the path (``PYTHONPATH`` for the command
line); the ``greet`` entry point is the example distribution installed into the test venv.
"""

import base64
import os
import subprocess
import sys
import textwrap
import uuid

import pytest
from starlette.testclient import TestClient

from ecp_core.memory import MemoryStore
from ecp_http.config.settings import SettingsError
from ecp_http.server.auth import mint_token
from ecp_http.startup.app import create_app
from ecp_http.startup.bootstrap import load_settings
from ecp_http.startup.plugins import PluginFailed

pytestmark = pytest.mark.integration

SECRET = "p" * 40
SEED = base64.b64encode(bytes(range(7, 39))).decode("ascii")

SHOUT = """
    def shout(context):
        return {"shouted": str(context.arguments["text"]).upper()}

    def register(registry):
        registry.register(
            "shout", shout, fingerprint="shout/2", capability_refs=["memory_write"],
            arguments_schema={"type": "object", "properties": {"text": {"type": "string"}}},
        )
"""


def module(tmp_path, source: str) -> str:
    """Write ``source`` as a uniquely named module in ``tmp_path``; return its name."""
    name = f"plugin_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(source), encoding="utf-8")
    return name


def environ(**more: str) -> dict[str, str]:
    return {"ECP_JWT_SECRET": SECRET, "ECP_AUDIT_SIGNING_KEY": SEED, **more}


def auth(role="operator"):
    return {"Authorization": f"Bearer {mint_token(SECRET, tenant='acme', roles=[role])}"}


def ecp_actions(tmp_path, action_modules: str) -> subprocess.CompletedProcess[str]:
    """``ecp actions`` in a child process with ``tmp_path`` on its PYTHONPATH."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("ECP_")}
    env |= {"PYTHONPATH": str(tmp_path), "ECP_ACTION_MODULES": action_modules}
    return subprocess.run(
        [sys.executable, "-m", "ecp_http.cli", "actions"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.spec("C10 action-plugins")
def test_a_module_from_ecp_action_modules_is_listed_and_runs(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    name = module(tmp_path, SHOUT)
    settings = load_settings(environ(ECP_ACTION_MODULES=f" {name}:register , "))
    assert settings.action_modules == (f"{name}:register",)
    graph = {
        "graph_id": "loud",
        "entry": "say",
        "nodes": [
            {
                "id": "say",
                "kind": "action",
                "action": {"name": "shout", "fingerprint": "shout/2", "arguments": {"text": "hi"}},
            },
            {"id": "end", "kind": "end"},
        ],
        "edges": [{"source": "say", "target": "end"}],
    }
    with TestClient(create_app(settings, storage=MemoryStore())) as client:
        listed = client.get("/v1/actions", headers=auth("viewer")).json()["actions"]
        sources = {a["name"]: a["source"] for a in listed}
        expected = {"echo": "builtin", "greet": "plugin", "set": "builtin", "shout": "plugin"}
        assert sources.items() >= expected.items()
        assert [a["name"] for a in listed] == sorted(sources)
        [shout] = [a for a in listed if a["name"] == "shout"]
        assert shout == {
            "name": "shout",
            "fingerprint": "shout/2",
            "capability_refs": ["memory_write"],
            "side_effect": "unknown",
            "arguments_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            "source": "plugin",
        }
        assert client.post("/v1/graphs", json=graph, headers=auth()).status_code == 201
        deployment = {"deployment_ref": "loud", "graph_id": "loud"}
        assert client.post("/v1/deployments", json=deployment, headers=auth()).status_code == 201
        run = client.post(
            "/runs",
            json={"deployment_ref": "loud", "input": {}},
            headers={**auth(), "Prefer": "wait=30"},
        ).json()
        assert (run["status"], run["output"]) == ("completed", {"shouted": "HI"})


@pytest.mark.spec("C10 action-plugins")
def test_ecp_actions_prints_what_a_server_would_load(tmp_path):
    name = module(tmp_path, SHOUT)
    done = ecp_actions(tmp_path, f"{name}:register")
    assert done.returncode == 0, done.stderr
    rows = [line.split() for line in done.stdout.splitlines()]
    assert rows == sorted(rows)  # by name
    ours = [row for row in rows if row[0] in {"echo", "greet", "set", "shout"}]
    assert ours == [
        ["echo", "builtin", "echo/1"],
        ["greet", "plugin", "greet/1"],
        ["set", "builtin", "set/1"],
        ["shout", "plugin", "shout/2"],
    ]
    assert {row[1] for row in rows} <= {"builtin", "plugin"}


@pytest.mark.parametrize(
    ("source", "target", "reason"),
    [
        (None, "no_such_module_here:register", "ModuleNotFoundError: No module named"),
        ("def other(registry): pass", "{name}:register", "AttributeError"),
        ("register = 42", "{name}:register", "TypeError: int is not callable"),
        (
            "def register(registry):\n    raise RuntimeError('no licence\\nsecond line')",
            "{name}:register",
            "RuntimeError: no licence",
        ),
        (
            "def register(registry):\n    registry.register('echo', lambda c: {})",
            "{name}:register",
            "ActionAlreadyRegistered: action 'echo' is already registered (builtin)",
        ),
    ],
)
def test_a_failing_plug_in_refuses_start_up_with_one_line_naming_it(
    tmp_path, monkeypatch, source, target, reason
):
    name = module(tmp_path, source or "")
    target = target.format(name=name)
    done = ecp_actions(tmp_path, target)
    assert done.returncode == 2
    assert done.stdout == ""
    [line] = done.stderr.splitlines()
    assert line.startswith(f"ecp: action plug-in ECP_ACTION_MODULES '{target}' failed: {reason}")

    monkeypatch.syspath_prepend(str(tmp_path))
    settings = load_settings(environ(ECP_ACTION_MODULES=target))
    with pytest.raises(PluginFailed, match="action plug-in ECP_ACTION_MODULES"):
        create_app(settings, storage=MemoryStore())


@pytest.mark.parametrize("value", ["nocolon", "a.b:", ":f", "a b:f", "pkg:func,other"])
def test_ecp_action_modules_must_name_module_colon_function(value):
    with pytest.raises(SettingsError, match="ECP_ACTION_MODULES"):
        load_settings(environ(ECP_ACTION_MODULES=value))
