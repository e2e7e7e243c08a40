"""The ``ecp`` parsers, its error lines and exit statuses, and ``ecp token``'s secret.

Every command is reached through :func:`ecp_http.cli.main` or the parser itself; the few
subprocesses check what only a fresh interpreter shows (``--version``, what importing loads).
"""

import argparse
import json
import socket
import subprocess
import sys
from importlib.metadata import version

import jwt
import pytest

from ecp_http.cli import main, parser
from ecp_http.config.settings import Settings
from ecp_http.startup.secrets import with_development_secrets

pytestmark = pytest.mark.unit

SECRET = "unit-" + "s" * 40
ENVIRONMENT_OF = {
    "--host": "ECP_HOST",
    "--port": "ECP_PORT",
    "--data-dir": "ECP_DATA_DIR",
    "--url": "ECP_URL",
}
"""Options that a setting also gives: their help names the variable."""


def subparsers(command: argparse.ArgumentParser, path=("ecp",)):
    """Every parser under ``command`` with its command path, depth first."""
    yield path, command
    for action in command._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from subparsers(child, (*path, name))


def every_parser():
    return list(subparsers(parser()))


@pytest.mark.spec("C2 cli-help")
def test_every_option_and_argument_of_every_command_has_help():
    found = every_parser()
    assert {" ".join(path) for path, _ in found} >= {
        "ecp serve",
        "ecp migrate",
        "ecp token",
        "ecp actions",
        "ecp dev-cloud",
        "ecp runs list",
        "ecp runs show",
        "ecp approvals list",
        "ecp approvals resolve",
        "ecp bills import",
        "ecp bills report",
        "ecp bills normalize",
        "ecp worker",
    }
    missing = [
        f"{' '.join(path)} {'/'.join(action.option_strings) or action.dest}"
        for path, command in found
        for action in command._actions
        if not isinstance(action, argparse._SubParsersAction)
        and (not action.help or action.help == argparse.SUPPRESS)
    ]
    assert missing == []
    # No option may overwrite the handler each command sets as a default.
    assert not [
        path for path, command in found for action in command._actions if action.dest == "handler"
    ]
    for path, command in found:
        assert command.format_help()  # renders, every choice and metavar included
        for action in command._actions:
            for option in action.option_strings:
                if option in ENVIRONMENT_OF:
                    assert ENVIRONMENT_OF[option] in action.help, (path, option)


@pytest.mark.spec("C2 cli-help")
def test_version_is_the_installed_package_version():
    done = subprocess.run(
        [sys.executable, "-m", "ecp_http.cli", "--version"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, f"ecp {version('ecp-http')}\n", "")


@pytest.mark.spec("C2 migrate-list-no-wait")
def test_the_command_line_loads_no_application_until_a_command_needs_it():
    code = (
        "import sys, ecp_http.cli\n"
        "heavy = ('httpx', 'psycopg', 'psycopg_pool', 'starlette', 'uvicorn', 'yoyo', 'pgserver',"
        " 'ecp_http.startup.bootstrap', 'ecp_http.config.settings', 'ecp_postgres.database', 'cel')\n"
        "print(sorted(name for name in heavy if name in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout == "[]\n"


@pytest.mark.spec("C2 cli-errors")
def test_an_unknown_role_is_a_usage_error_naming_the_choices(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["token", "--tenant", "t1", "--role", "boss"], environ={})
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "argument --role: invalid choice: 'boss'" in err
    assert "'admin', 'operator', 'approver', 'analyst', 'viewer', 'worker'" in err
    assert "Traceback" not in err


@pytest.mark.spec("C2 cli-errors")
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["serve", "--port", "99999"], "argument --port: '99999' is not within 0..65535"),
        (["token", "--tenant", "t", "--role", "admin", "--ttl", "0"], "argument --ttl: '0'"),
        (["runs", "list", "--limit", "-1"], "argument --limit: '-1'"),
        (["approvals", "resolve", "d", "a", "--decision", "maybe"], "invalid choice: 'maybe'"),
        (
            ["approvals", "resolve", "d", "a", "--decision", "approve", "--payload", "[1]"],
            "argument --payload: the payload is not a JSON object",
        ),
        (
            ["approvals", "resolve", "d", "a", "--decision", "approve", "--payload", "{"],
            "argument --payload: the payload is not JSON",
        ),
    ],
)
def test_bad_arguments_are_usage_errors(capsys, argv, said):
    with pytest.raises(SystemExit) as exited:
        main(argv, environ={})
    assert exited.value.code == 2
    assert said in capsys.readouterr().err


def run(capsys, argv, environ):
    """Exit status, stdout and stderr of ``ecp ARGV`` with ``environ``."""
    status = main(argv, environ=environ)
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.spec("C2 cli-errors")
def test_refusals_and_failures_are_one_line_with_their_exit_status(capsys):
    # Invalid settings, for a command that reads them: 2.
    assert run(capsys, ["actions"], {"ECP_PORT": "http"}) == (
        2,
        "",
        "ecp: invalid settings: ECP_PORT must be a whole number, not 'http'\n",
    )
    # No credentials for an API command: 2, naming what to set.
    status, out, err = run(capsys, ["runs", "list"], {})
    assert (status, out) == (2, "")
    assert err.startswith("ecp runs: no credentials: set ECP_TOKEN (a bearer token) or ECP_API_KEY")
    assert err.count("\n") == 1
    # edit_and_approve without the edited payload: 2, before anything is sent.
    status, _, err = run(
        capsys,
        ["approvals", "resolve", "d", "a", "--decision", "edit_and_approve"],
        {"ECP_TOKEN": "t"},
    )
    assert (status, err) == (
        2,
        "ecp approvals: --decision edit_and_approve needs --payload (the edited payload)\n",
    )


@pytest.mark.spec("C2 cli-errors")
def test_a_service_that_is_not_there_is_a_failure(capsys):
    with socket.socket() as unused:  # bound, never listening: a connection is refused at once
        unused.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{unused.getsockname()[1]}"
        for argv in (["runs", "show", "r1"], ["approvals", "list"]):
            status, out, err = run(capsys, [*argv, "--url", url], {"ECP_TOKEN": "t"})
            assert (status, out) == (1, "")
            assert err.startswith(f"ecp {argv[0]}: cannot reach the service at {url}")
            assert err.endswith("is it running?\n")
            assert err.count("\n") == 1


@pytest.mark.spec("C2 dev-token-secret")
def test_token_signs_with_the_secret_serve_keeps_in_the_data_directory(tmp_path, capsys):
    served, _ = with_development_secrets(Settings.from_mapping({"ECP_DATA_DIR": str(tmp_path)}))
    argv = ["token", "--tenant", "t1", "--role", "viewer", "--role", "approver"]
    # From another directory, naming the server's data directory by option or by variable.
    for extra, environ in (([f"--data-dir={tmp_path}"], {}), ([], {"ECP_DATA_DIR": str(tmp_path)})):
        status, out, err = run(capsys, [*argv, *extra], environ)
        assert (status, err) == (0, "")
        claims = jwt.decode(out.strip(), served.jwt_secret, algorithms=["HS256"])
        assert (claims["tenant_id"], claims["roles"]) == ("t1", ["viewer", "approver"])
    # ECP_JWT_SECRET wins, as it does for the server.
    status, out, _ = run(capsys, [*argv, f"--data-dir={tmp_path}"], {"ECP_JWT_SECRET": SECRET})
    assert status == 0
    assert jwt.decode(out.strip(), SECRET, algorithms=["HS256"])["tenant_id"] == "t1"


@pytest.mark.spec("C2 dev-token-secret", "C2 cli-errors")
def test_token_refuses_without_a_secret_and_makes_none(tmp_path, capsys):
    empty = tmp_path / "nothing-served-here"
    status, out, err = run(
        capsys, ["token", "--tenant", "t1", "--role", "admin", "--data-dir", str(empty)], {}
    )
    assert (status, out) == (2, "")
    assert err == (
        f"ecp token: no development secret in {empty}; run `ecp serve` there first "
        "or set ECP_JWT_SECRET\n"
    )
    assert not empty.exists()


@pytest.mark.spec("C2 dev-token", "C2 cli-errors")
def test_token_refuses_when_hosted(tmp_path, capsys):
    with_development_secrets(Settings.from_mapping({"ECP_DATA_DIR": str(tmp_path)}))
    environ = {"ECP_DATA_DIR": str(tmp_path), "ECP_HOSTED": "true", "ECP_JWT_SECRET": SECRET}
    status, out, err = run(capsys, ["token", "--tenant", "t1", "--role", "admin"], environ)
    assert (status, out) == (2, "")
    assert err == (
        "ecp: invalid settings: ecp token is disabled when the service is configured as hosted\n"
    )


def test_payload_reads_a_file(tmp_path):
    from ecp_http.cli.approvals import payload

    path = tmp_path / "edited.json"
    path.write_text(json.dumps({"amount": 90}), encoding="utf-8")
    assert payload(f"@{path}") == {"amount": 90}
    with pytest.raises(argparse.ArgumentTypeError, match="cannot read"):
        payload(f"@{tmp_path / 'missing.json'}")
