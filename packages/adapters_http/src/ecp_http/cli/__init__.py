"""The ``ecp`` command line.

``serve``, ``migrate``, ``token`` and ``actions`` work on this machine (``ECP_DATABASE_URL`` when
set, else the embedded PostgreSQL under ``$ECP_DATA_DIR``); ``dev-cloud`` serves the hosted
offer against loopback stand-ins (:mod:`ecp_http.cli.dev_cloud`); ``runs``, ``approvals``, ``bills``
and ``worker`` talk to a running service over its API (:mod:`ecp_http.cli.api_client`).

Each command imports what it needs when it runs, so ``ecp --help`` and ``ecp migrate list`` do
not import the application (ADR 0053). Errors are one line on stderr, never a traceback: exit
status 2 when a command cannot run as given, 1 when it ran and failed (:mod:`ecp_http.startup.exits`).
"""

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ecp_core.errors import DatabaseUnavailable, EcpError
from ecp_core.types import ServiceRole
from ecp_http import version
from ecp_http.cli import approvals, audit, bills, deployments, runs, witness, worker
from ecp_http.cli.args import port, positive
from ecp_http.config.table.serving import DATA_DIR, HOST, JWT_SECRET, PORT, WORKERS
from ecp_http.config.values import Setting, SettingsError
from ecp_http.startup.exits import (
    FAILURE,
    INTERRUPTED,
    USAGE,
    CommandFailed,
    CommandRefused,
    RefusedToStart,
)

if TYPE_CHECKING:
    from ecp_http.config.settings import Settings

Handler = Callable[[argparse.Namespace, Mapping[str, str]], int]
"""What each command runs: its arguments and the environment in, an exit status out."""


def _migrate(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """Apply, list or roll back; only the database settings are read (ADR 0053)."""
    from ecp_http.startup.database_setup import migrate  # noqa: PLC0415 - when the command runs

    print("\n".join(migrate(environ, args.action, args.count)))
    return 0


def _serve(args: argparse.Namespace, settings: "Settings") -> int:
    import attrs  # noqa: PLC0415 - when the command runs

    from ecp_http.startup.serve import serve  # noqa: PLC0415

    port = settings.port if args.port is None else args.port
    workers = settings.workers if args.workers is None else args.workers
    return serve(
        attrs.evolve(settings, host=args.host or settings.host, port=port, workers=workers)
    )


def _token(args: argparse.Namespace, settings: "Settings") -> int:
    import pathlib  # noqa: PLC0415 - when the command runs

    from ecp_http.startup.secrets import development_token  # noqa: PLC0415

    data_dir = settings.data_dir if args.data_dir is None else pathlib.Path(args.data_dir)
    print(
        development_token(
            settings,
            tenant=args.tenant,
            roles=args.role,
            ttl_seconds=args.ttl,
            subject=args.subject,
            data_dir=data_dir,
        )
    )
    return 0


def _actions(_: argparse.Namespace, settings: "Settings") -> int:
    """Print what a server with these settings would load: name, source, fingerprint."""
    from ecp_http.startup.core_setup import action_registry  # noqa: PLC0415 - when the command runs

    listed = action_registry(settings).listing().actions
    width = max((len(action.name) for action in listed), default=0)
    for action in listed:
        print(f"{action.name:<{width}}  {action.source.value:<7}  {action.fingerprint}")
    return 0


def _dev_cloud(args: argparse.Namespace, settings: "Settings") -> int:
    from ecp_http.cli import dev_cloud  # noqa: PLC0415 - when the command runs

    return dev_cloud.run(args, settings)


def _with_settings(command: Callable[[argparse.Namespace, "Settings"], int]) -> Handler:
    """``command``, given the settings read once from the environment."""

    def run(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
        from ecp_http.config.settings import Settings  # noqa: PLC0415 - only the commands that need them

        return command(args, Settings.from_mapping(environ))

    return run


def _env(setting: Setting[Any]) -> str:
    """How a command's help names the setting behind an option: ``env NAME; default``."""
    return f"env {setting.name}; {setting.default}"


def _local_commands(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """``serve``, ``migrate``, ``token``, ``actions`` and ``dev-cloud``: this machine's commands."""
    serve = commands.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", help=f"the address to listen on ({_env(HOST)})")
    serve.add_argument(
        "--port", type=port, help=f"the port to listen on, 0 for any free one ({_env(PORT)})"
    )
    serve.add_argument(
        "--workers",
        type=positive,
        help=f"server processes on the one port and database ({_env(WORKERS)})",
    )
    serve.set_defaults(handler=_with_settings(_serve))
    migrate = commands.add_parser("migrate", help="apply, list or roll back database migrations")
    migrate.add_argument(
        "action",
        nargs="?",
        default="apply",
        choices=["apply", "list", "rollback"],
        help="apply the pending migrations (default), list their state, or roll back",
    )
    migrate.add_argument(
        "--count", type=positive, default=1, help="how many to roll back (rollback only)"
    )
    migrate.set_defaults(handler=_migrate)
    token = commands.add_parser(
        "token",
        help="mint a development JWT the local server accepts",
        description=f"Sign with {JWT_SECRET.name} when set, else with the development secret "
        "`ecp serve` keeps in the data directory; refused when the service is hosted.",
    )
    token.add_argument("--tenant", required=True, help="the tenant the token acts for")
    token.add_argument(
        "--role",
        action="append",
        required=True,
        choices=[role.value for role in ServiceRole],
        help="a role; repeat for more",
    )
    token.add_argument("--ttl", type=positive, default=3600, help="seconds the token is valid")
    token.add_argument("--subject", default="developer", help="the token's sub claim")
    token.add_argument(
        "--data-dir",
        help=f"where the server keeps its development secret ({_env(DATA_DIR)})",
    )
    token.set_defaults(handler=_with_settings(_token))
    actions = commands.add_parser(
        "actions", help="list the actions a server with these settings would load"
    )
    actions.set_defaults(handler=_with_settings(_actions))
    cloud = commands.add_parser(
        "dev-cloud",
        help="try the hosted offer locally: stand-in identity provider and merchant beside a server",
    )
    cloud.add_argument("--port", type=port, help=f"the server's port ({_env(PORT)})")
    cloud.set_defaults(handler=_with_settings(_dev_cloud))


class _Version(argparse.Action):
    """``--version``: print this release's version (:func:`ecp_http.version`) and exit."""

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        sys.stdout.write(f"ecp {version()}\n")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``ecp``."""
    top = argparse.ArgumentParser(prog="ecp", description="ECP, a governed workflow service.")
    top.add_argument(
        "--version", nargs=0, action=_Version, help="print the version of ecp and exit"
    )
    commands = top.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _local_commands(commands)
    runs.add_parser(commands)
    deployments.add_parser(commands)
    approvals.add_parser(commands)
    bills.add_parser(commands)
    audit.add_parser(commands)
    witness.add_parser(commands)
    worker.add_parser(commands)
    return top


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the command line with ``environ`` (the process environment when None).

    The commands that need the settings read them once from it; the others read their own
    variables from it (``ECP_URL``, ``ECP_TOKEN``, ``ECP_DATABASE_URL`` ...).
    """
    args = parser().parse_args(argv)
    try:
        return int(args.handler(args, os.environ if environ is None else environ))
    except CommandRefused as exc:
        return _say(f"ecp {args.command}: {exc}", USAGE)
    except CommandFailed as exc:
        return _say(f"ecp {args.command}: {exc}", FAILURE)
    except SettingsError as exc:
        return _say(f"ecp: invalid settings: {exc}", USAGE)
    except (RefusedToStart, DatabaseUnavailable) as exc:
        return _say(f"ecp: {exc}", USAGE)
    except EcpError as exc:
        return _say(f"ecp {args.command}: {exc.code}: {exc.detail}", FAILURE)
    except KeyboardInterrupt:
        return INTERRUPTED


def _say(line: str, status: int) -> int:
    sys.stderr.write(line + "\n")
    return status
