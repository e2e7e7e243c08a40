"""``ecp approvals list|resolve``: the approver inbox and resolving an approval, over the API.

``list`` pages through the inbox ``GET /v1/approvals`` (oldest first, filtered by status,
deployment or run); ``resolve`` posts a decision to
``POST /deployments/{ref}/approvals/{approval_id}/resolve`` and prints the run after it.
"""

import argparse
import json
import pathlib
from collections.abc import Mapping
from typing import Any

from ecp_core.types import ApprovalDecision, ApprovalStatus
from ecp_http.cli.api_client import (
    Api,
    Page,
    add_page_options,
    add_url_option,
    api_path,
    gather,
)
from ecp_http.cli.output import add_format_option, emit, json_text, table
from ecp_http.startup.exits import CommandFailed, CommandRefused

APPROVAL_COLUMNS = (
    ("APPROVAL", "approval_id"),
    ("STATUS", "status"),
    ("DEPLOYMENT", "deployment_ref"),
    ("RUN", "run_id"),
    ("NODE", "node_id"),
    ("SUMMARY", "summary"),
    ("DEADLINE", "sla_deadline"),
)
WHO = "an approver's, an operator's or an admin's"


def _api(args: argparse.Namespace, environ: Mapping[str, str]) -> Api:
    return Api.from_args(args, environ, who=WHO)


def _list(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = _api(args, environ)
    filters = {
        name: value
        for name, value in (
            ("status", args.status),
            ("deployment_ref", args.deployment),
            ("run_id", args.run_id),
        )
        if value is not None
    }

    def fetch(limit: int, cursor: str | None) -> Page:
        params: dict[str, Any] = filters | {"limit": limit} | ({"cursor": cursor} if cursor else {})
        body = api.json("GET", "/v1/approvals", params=params)
        return body["approvals"], body.get("next_cursor")

    approvals, cursor = gather(fetch, args)
    if args.format == "json":
        emit(json_text({"approvals": approvals, "next_cursor": cursor}))
        return 0
    emit(table(approvals, APPROVAL_COLUMNS, markdown=args.format == "markdown"))
    if cursor is not None:
        emit(f"\n{len(approvals)} approvals shown; the next ones: --cursor {cursor}")
    return 0


def payload(text: str) -> dict[str, Any]:
    """An argparse type: a JSON object, written out or read from ``@FILE``."""
    source = "the payload"
    if text.startswith("@"):
        source = text[1:]
        try:
            text = pathlib.Path(source).read_text(encoding="utf-8")
        except OSError as exc:
            raise argparse.ArgumentTypeError(f"cannot read {source}: {exc.strerror}") from None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{source} is not JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{source} is not a JSON object")
    return value


def _resolve(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    if args.decision == ApprovalDecision.EDIT_AND_APPROVE and args.payload is None:
        raise CommandRefused("--decision edit_and_approve needs --payload (the edited payload)")
    body: dict[str, Any] = {"decision": args.decision}
    if args.reason is not None:
        body["reason"] = args.reason
    if args.payload is not None:
        body["edited_payload"] = args.payload
    target = api_path("/deployments/{}/approvals/{}/resolve", args.deployment, args.approval_id)
    answer = _api(args, environ).json("POST", target, json=body)
    if args.format == "json":
        emit(json_text(answer))
        return 0
    try:
        approval, run = answer["approval"], answer["run"]
        emit(
            f"{args.decision}: approval {approval['approval_id']} is {approval['status']}; "
            f"run {run['run_id']} is {run['status']}"
        )
    except (KeyError, TypeError):
        raise CommandFailed(f"the service answered something else: {answer!r:.200}") from None
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``approvals list|resolve`` to the ``ecp`` parser."""
    approvals = commands.add_parser(
        "approvals",
        help="the approver inbox and resolving approvals (over the API)",
        description="Read and resolve approvals through the service's API. Credentials: "
        "ECP_TOKEN (a bearer token) or ECP_API_KEY (a project API key); the service: --url or "
        "ECP_URL.",
    )
    actions = approvals.add_subparsers(dest="action", required=True, metavar="ACTION")
    listing = actions.add_parser("list", help="the tenant's approvals, oldest first, filtered")
    listing.add_argument(
        "--status", choices=[status.value for status in ApprovalStatus], help="only this status"
    )
    listing.add_argument("--deployment", metavar="REF", help="only this deployment's approvals")
    listing.add_argument("--run", dest="run_id", metavar="RUN_ID", help="only this run's approvals")
    add_page_options(listing, "approvals")
    resolve = actions.add_parser("resolve", help="approve, reject or edit and approve")
    resolve.add_argument("deployment", metavar="DEPLOYMENT", help="the approval's deployment ref")
    resolve.add_argument("approval_id", metavar="APPROVAL_ID", help="the approval's id")
    resolve.add_argument(
        "--decision",
        required=True,
        choices=[decision.value for decision in ApprovalDecision],
        help="what you decide (edit_and_approve needs --payload)",
    )
    resolve.add_argument("--reason", help="why, kept with the approval (up to 1000 characters)")
    resolve.add_argument(
        "--payload",
        type=payload,
        help="the edited payload, a JSON object or @FILE holding one (edit_and_approve)",
    )
    for action, run in ((listing, _list), (resolve, _resolve)):
        add_url_option(action)
        add_format_option(action)
        action.set_defaults(handler=run)
