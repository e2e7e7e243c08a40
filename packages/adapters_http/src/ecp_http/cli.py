"""The ``ecp`` command line: ``serve``, ``migrate``, ``token``, ``actions``, ``bills``, ``worker``.

``dev-cloud`` serves the hosted offer against loopback stand-ins (:mod:`ecp_http.dev_cloud`).
``bills`` and ``worker`` talk to a running service (see :mod:`ecp_http.bills_cli` and
:mod:`ecp_http.worker_cli`); ``actions`` lists what a server with these settings would load; the
others use ``ECP_DATABASE_URL`` when set, else the embedded PostgreSQL under ``$ECP_DATA_DIR``.
"""

import argparse
import sys
from collections.abc import Mapping, Sequence

import attrs

from ecp_http import bills_cli, dev_cloud, worker_cli
from ecp_http.bootstrap import development_token, load_settings, migrate
from ecp_http.core_setup import action_registry
from ecp_http.plugins import PluginFailed
from ecp_http.serve import StartupRefused, serve
from ecp_http.settings import Settings, SettingsError
from ecp_postgres import DatabaseUnavailable


def _migrate(args: argparse.Namespace, settings: Settings) -> int:
    print("\n".join(migrate(settings, args.action, args.count)))
    return 0


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    return serve(
        attrs.evolve(
            settings,
            host=args.host or settings.host,
            port=settings.port if args.port is None else args.port,
        )
    )


def _token(args: argparse.Namespace, settings: Settings) -> int:
    print(
        development_token(
            settings,
            tenant=args.tenant,
            roles=args.role,
            ttl_seconds=args.ttl,
            subject=args.subject,
        )
    )
    return 0


def _actions(_: argparse.Namespace, settings: Settings) -> int:
    """Print what a server with these settings would load: name, source, fingerprint."""
    listed = action_registry(settings).listing().actions
    width = max((len(action.name) for action in listed), default=0)
    for action in listed:
        print(f"{action.name:<{width}}  {action.source.value:<7}  {action.fingerprint}")
    return 0


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``ecp``."""
    top = argparse.ArgumentParser(prog="ecp", description="ECP, a governed workflow service.")
    commands = top.add_subparsers(dest="command", required=True)
    migrate = commands.add_parser("migrate", help="apply, list or roll back database migrations")
    migrate.add_argument(
        "action", nargs="?", default="apply", choices=["apply", "list", "rollback"]
    )
    migrate.add_argument(
        "--count", type=int, default=1, help="how many to roll back (rollback only)"
    )
    migrate.set_defaults(serving=_migrate)
    serve = commands.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.set_defaults(serving=_serve)
    token = commands.add_parser("token", help="mint a development JWT")
    token.add_argument("--tenant", required=True)
    token.add_argument(
        "--role", action="append", required=True, help="a role slug; repeat for more"
    )
    token.add_argument("--ttl", type=int, default=3600, help="seconds the token is valid")
    token.add_argument("--subject", default="developer")
    token.set_defaults(serving=_token)
    actions = commands.add_parser(
        "actions", help="list the actions a server with these settings would load"
    )
    actions.set_defaults(serving=_actions)
    bills_cli.add_parser(commands)
    dev_cloud.add_parser(commands)
    worker_cli.add_parser(commands)
    return top


def main(argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None) -> int:
    """Run the command line; the server's commands read their settings once, from ``environ``."""
    args = parser().parse_args(argv)
    try:
        serving = getattr(args, "serving", None)
        if serving is not None:
            return int(serving(args, load_settings(environ)))
        return int(args.run(args))
    except SettingsError as exc:
        print(f"ecp: invalid settings: {exc}", file=sys.stderr)
        return 2
    except (DatabaseUnavailable, StartupRefused, PluginFailed) as exc:
        print(f"ecp: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
