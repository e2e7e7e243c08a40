"""The ``ecp`` command line: ``ecp migrate [apply|list|rollback]``.

It uses ``ECP_DATABASE_URL`` when set, else the embedded PostgreSQL under ``$ECP_DATA_DIR``.
"""

import argparse
import sys
from collections.abc import Sequence

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
    return top


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line."""
    args = parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    sys.exit(main())
