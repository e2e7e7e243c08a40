"""``ecp runs list|show|cancel|pause|unpause|migrate``: the tenant's runs, over the API.

``list`` pages through ``GET /admin/runs`` (newest first; an admin's credentials); ``show`` reads
``GET /runs/{run_id}`` and, with ``--timeline``, ``GET /runs/{run_id}/timeline``; ``cancel``
posts ``/runs/{run_id}/cancel`` with its reason, ``pause`` and ``unpause`` post
``/runs/{run_id}/pause`` and ``/unpause`` (an admin's or an operator's credentials); ``migrate``
moves a version's waiting runs (:mod:`ecp_http.cli.run_migrate`).
"""

import argparse
from collections.abc import Mapping
from typing import Any

from ecp_http.cli import run_migrate
from ecp_http.cli.api_client import (
    Api,
    Page,
    add_page_options,
    add_url_option,
    api_path,
    gather,
    next_cursor,
)
from ecp_http.cli.output import add_format_option, emit, fields, json_text, table

RUN_COLUMNS = (
    ("RUN", "run_id"),
    ("STATUS", "status"),
    ("DEPLOYMENT", "deployment_ref"),
    ("CREATED", "created_at"),
    ("UPDATED", "updated_at"),
)
RUN_FIELDS = (
    ("run", "run_id"),
    ("status", "status"),
    ("deployment", "deployment_ref"),
    ("graph version", "graph_version_ref"),
    ("thread", "thread_id"),
    ("created", "created_at"),
    ("updated", "updated_at"),
    ("pending approvals", "pending_approval_ids"),
    ("failure", "failure_state"),
    ("parent run", "parent_run_id"),
    ("output", "output"),
)
TIMELINE_COLUMNS = (
    ("ATTEMPT", "attempt"),
    ("NODE", "node_id"),
    ("STATUS", "status"),
    ("CREATED", "created_at"),
    ("DIGEST", "record_digest"),
)
WHO = "an admin's to list runs, an operator's to cancel one; a viewer's is enough to show one"


def _api(args: argparse.Namespace, environ: Mapping[str, str]) -> Api:
    return Api.from_args(args, environ, who=WHO)


def _list(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = _api(args, environ)
    total = 0

    def fetch(limit: int, cursor: str | None) -> Page:
        nonlocal total
        params: dict[str, Any] = {"limit": limit} | ({"cursor": cursor} if cursor else {})
        response = api.send("GET", "/admin/runs", params=params)
        body = response.json()
        total = body["total"]
        return body["runs"], next_cursor(response)

    runs, cursor = gather(fetch, args)
    if args.format == "json":
        emit(json_text({"runs": runs, "total": total, "next_cursor": cursor}))
        return 0
    emit(table(runs, RUN_COLUMNS, markdown=args.format == "markdown"))
    if cursor is not None:
        emit(f"\n{len(runs)} of {total} runs; the next ones: --cursor {cursor}")
    return 0


def _show(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = _api(args, environ)
    run = api.json("GET", api_path("/runs/{}", args.run_id))
    timeline = (
        api.json("GET", api_path("/runs/{}/timeline", args.run_id)) if args.timeline else None
    )
    if args.format == "json":
        emit(json_text(run if timeline is None else {"run": run, "timeline": timeline}))
        return 0
    markdown = args.format == "markdown"
    emit(fields(run, RUN_FIELDS, markdown=markdown))
    if timeline is not None:
        emit("")
        emit(table(timeline["entries"], TIMELINE_COLUMNS, markdown=markdown))
    return 0


def _cancel(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = _api(args, environ)
    run = api.json("POST", api_path("/runs/{}/cancel", args.run_id), json={"reason": args.reason})
    if args.format == "json":
        emit(json_text(run))
        return 0
    emit(fields(run, RUN_FIELDS, markdown=args.format == "markdown"))
    return 0


def _pause(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = _api(args, environ)
    body = {} if args.reason is None else {"reason": args.reason}
    run = api.json("POST", api_path("/runs/{}/" + args.action, args.run_id), json=body)
    if args.format == "json":
        emit(json_text(run))
        return 0
    emit(fields(run, RUN_FIELDS, markdown=args.format == "markdown"))
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``runs list|show`` to the ``ecp`` parser."""
    runs = commands.add_parser(
        "runs",
        help="list the tenant's runs, show one run and its timeline, cancel, pause or move runs "
        "(over the API)",
        description="Read runs through the service's API. Credentials: ECP_TOKEN (a bearer "
        "token) or ECP_API_KEY (a project API key); the service: --url or ECP_URL.",
    )
    actions = runs.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the tenant's runs, newest first (admin)")
    add_page_options(listing, "runs")
    show = actions.add_parser("show", help="one run; with --timeline its audit records")
    show.add_argument("run_id", metavar="RUN_ID", help="the run's id")
    show.add_argument(
        "--timeline", action="store_true", help="also print the run's audit records in order"
    )
    cancel = actions.add_parser(
        "cancel",
        help="cancel a run and the runs it started (admin, operator)",
        description="The run and every run it started that has not ended end canceled; their "
        "pending approvals and open tasks are withdrawn. Canceling a canceled run shows it.",
    )
    cancel.add_argument("run_id", metavar="RUN_ID", help="the run's id")
    cancel.add_argument(
        "--reason", required=True, help="why, in your words (1 to 500 characters; audited)"
    )
    pauses = []
    for verb, what in (
        ("pause", "pause a run: none of its nodes is attempted until it is unpaused"),
        ("unpause", "unpause a run (its own pause; a paused deployment keeps it paused)"),
    ):
        pause = actions.add_parser(verb, help=f"{what} (admin, operator)")
        pause.add_argument("run_id", metavar="RUN_ID", help="the run's id")
        pause.add_argument("--reason", help="why, in your words (1 to 500 characters; logged)")
        pauses.append((pause, _pause))
    for action, run in ((listing, _list), (show, _show), (cancel, _cancel), *pauses):
        add_url_option(action)
        add_format_option(action)
        action.set_defaults(handler=run)
    run_migrate.add_parser(actions)
