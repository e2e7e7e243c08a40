"""``ecp runs migrate``: move every waiting run of one graph version to another (ADR 0090).

It posts ``/v1/runs/migrate`` a page at a time, following ``next_cursor`` until every waiting
run of ``--from-version`` was tried, and prints each run's outcome: ``migrated``, or ``refused``
with the reason. The exit status is 1 when any run was refused (the others moved all the same).
"""

import argparse
from collections.abc import Mapping
from typing import Any

from ecp_http.cli.api_client import MAX_PAGE, Api, add_url_option
from ecp_http.cli.output import add_format_option, emit, json_text, table
from ecp_http.startup.exits import CommandRefused

WHO = "an admin's or an operator's to move runs"
RESULT_COLUMNS = (("RUN", "run_id"), ("OUTCOME", "outcome"), ("REASON", "reason"))


def _pair(text: str) -> tuple[str, str]:
    """``OLD=NEW`` as a pair; anything else is refused by argparse (exit status 2)."""
    old, sign, new = text.partition("=")
    if not sign or not old or not new:
        msg = f"{text!r} is not OLD=NEW (a node of the run's version, then its id in the target)"
        raise argparse.ArgumentTypeError(msg)
    return old, new


def _node_map(pairs: list[tuple[str, str]]) -> dict[str, str]:
    node_map: dict[str, str] = {}
    for old, new in pairs:
        if node_map.setdefault(old, new) != new:
            raise CommandRefused(f"--node-map maps {old!r} twice")
    return node_map


def _migrate(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = Api.from_args(args, environ, who=WHO)
    body: dict[str, Any] = {
        "from_version": args.from_version,
        "to_version": args.to_version,
        "limit": MAX_PAGE,
    }
    if args.node_map:
        body["node_map"] = _node_map(args.node_map)
    results: list[dict[str, Any]] = []
    while True:
        page = api.json("POST", "/v1/runs/migrate", json=body)
        results.extend(page["results"])
        if page["next_cursor"] is None:
            break
        body["cursor"] = page["next_cursor"]
    refused = sum(result["outcome"] == "refused" for result in results)
    if args.format == "json":
        emit(
            json_text({"results": results, "migrated": len(results) - refused, "refused": refused})
        )
    else:
        emit(table(results, RESULT_COLUMNS, markdown=args.format == "markdown"))
        emit(f"\n{len(results) - refused} migrated, {refused} refused")
    return 1 if refused else 0


def add_parser(actions: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``migrate`` to ``ecp runs``."""
    migrate = actions.add_parser(
        "migrate",
        help="move every waiting run of a graph version to another version (admin, operator)",
        description="Each run waiting for an approval, an interrupt, a task or a timer on "
        "--from-version moves to --to-version (another version of the same graph) when the node "
        "it waits at is there, under its id or the one --node-map gives it, with the same kind; "
        "the others are refused with the reason and left as they are. Exit status 1 when any "
        "run was refused.",
    )
    migrate.add_argument(
        "--from-version", required=True, metavar="REF", help="the version the runs are on (g@1)"
    )
    migrate.add_argument(
        "--to-version", required=True, metavar="REF", help="the version they move to (g@2)"
    )
    migrate.add_argument(
        "--node-map",
        action="append",
        default=[],
        type=_pair,
        metavar="OLD=NEW",
        help="a node renamed in the target version (repeat for each)",
    )
    add_url_option(migrate)
    add_format_option(migrate)
    migrate.set_defaults(handler=_migrate)
