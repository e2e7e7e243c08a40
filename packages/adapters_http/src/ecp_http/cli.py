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
from ecp_http.settings import Settings, SettingsError
from ecp_postgres import apply_migrations, database_url, migration_status, rollback_migrations


def _migrate(args: argparse.Namespace) -> int:
    with database_url() as url:
        if args.action == "apply":
            applied = apply_migrations(url)
            print(f"applied {len(applied)} migration(s)" + "".join(f"\n  {m}" for m in applied))
        elif args.action == "rollback":
            undone = rollback_migrations(url, args.count)
            print(f"rolled back {len(undone)} migration(s)" + "".join(f"\n  {m}" for m in undone))
        else:
            for migration, applied in migration_status(url):
                print(f"{'applied' if applied else 'pending'}  {migration}")
    return 0


def _serve(args: argparse.Namespace) -> int:
    import uvicorn  # noqa: PLC0415 - only the server needs it

    from ecp_http.app import create_app  # noqa: PLC0415

    settings = Settings.from_mapping()
    settings = attrs.evolve(
        settings, host=args.host or settings.host, port=args.port or settings.port
    )
    with database_url() as url:
        settings, notes = with_development_secrets(attrs.evolve(settings, database_url=url))
        for note in notes:
            print(note)
        applied = apply_migrations(url)
        if applied:
            print(f"applied {len(applied)} migration(s)")
        app = create_app(settings)
        base = f"http://{settings.host}:{settings.port}"
        assert settings.jwt_secret is not None  # noqa: S101 - filled in above
        embedded = not Settings.from_mapping().database_url
        source = (
            f"embedded PostgreSQL in {settings.data_dir / 'pg'}" if embedded else "ECP_DATABASE_URL"
        )
        print(f"ECP is serving on {base} (database: {source})")
        if not settings.hosted:
            token = mint_token(
                settings.jwt_secret, tenant="dev", roles=["admin"], ttl_seconds=86400
            )
            print("try it (a development admin token for tenant 'dev', valid for a day):")
            print(f"  curl -s -H 'Authorization: Bearer {token}' {base}/admin/runs")
            print(f"  open {base}/docs for the API")
        uvicorn.run(app, host=settings.host, port=settings.port, log_level="info")
    return 0


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


if __name__ == "__main__":
    sys.exit(main())
