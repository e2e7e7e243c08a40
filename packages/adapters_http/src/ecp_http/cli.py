"""The ``ecp`` command line: ``serve``, ``migrate [apply|list|rollback]``, ``token``, ``bills``.

``bills`` talks to a running service (see :mod:`ecp_http.bills_cli`); the others use
``ECP_DATABASE_URL`` when set, else the embedded PostgreSQL under ``$ECP_DATA_DIR``.
"""

import argparse
import sys
from collections.abc import Sequence

import attrs

from ecp_http import bills_cli
from ecp_http.auth import mint_token
from ecp_http.secrets import with_development_secrets
from ecp_http.serve import StartupRefused, serve
from ecp_http.settings import Settings, SettingsError
from ecp_postgres import (
    DatabaseUnavailable,
    apply_migrations,
    check_database,
    database_url,
    migration_status,
    rollback_migrations,
)


def _migrate(args: argparse.Namespace) -> int:
    with database_url() as url:
        check_database(url)
        if args.action == "apply":
            applied = apply_migrations(url)
            print(f"applied {len(applied)} migration(s)" + "".join(f"\n  {m}" for m in applied))
        elif args.action == "rollback":
            undone = rollback_migrations(url, args.count)
            print(f"rolled back {len(undone)} migration(s)" + "".join(f"\n  {m}" for m in undone))
        else:
            for migration, done in migration_status(url):
                print(f"{'applied' if done else 'pending'}  {migration}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    settings = Settings.from_mapping()
    return serve(
        attrs.evolve(
            settings,
            host=args.host or settings.host,
            port=settings.port if args.port is None else args.port,
        )
    )


def _token(args: argparse.Namespace) -> int:
    settings = Settings.from_mapping()
    if settings.hosted:
        raise SettingsError("ecp token is disabled when the service is configured as hosted")
    settings, _ = with_development_secrets(settings)
    assert settings.jwt_secret is not None  # noqa: S101 - filled in above
    print(
        mint_token(
            settings.jwt_secret,
            tenant=args.tenant,
            roles=args.role,
            ttl_seconds=args.ttl,
            subject=args.subject,
        )
    )
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
    migrate.set_defaults(run=_migrate)
    serve = commands.add_parser("serve", help="run the HTTP server")
    serve.add_argument("--host", default=None)
    serve.add_argument("--port", type=int, default=None)
    serve.set_defaults(run=_serve)
    token = commands.add_parser("token", help="mint a development JWT")
    token.add_argument("--tenant", required=True)
    token.add_argument(
        "--role", action="append", required=True, help="a role slug; repeat for more"
    )
    token.add_argument("--ttl", type=int, default=3600, help="seconds the token is valid")
    token.add_argument("--subject", default="developer")
    token.set_defaults(run=_token)
    bills_cli.add_parser(commands)
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = parser().parse_args(argv)
    try:
        return int(args.run(args))
    except SettingsError as exc:
        print(f"ecp: invalid settings: {exc}", file=sys.stderr)
        return 2
    except (DatabaseUnavailable, StartupRefused) as exc:
        print(f"ecp: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
