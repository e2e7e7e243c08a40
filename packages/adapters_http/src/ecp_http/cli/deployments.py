"""``ecp deployments pause|unpause|limit``: a deployment's dispatch, over the API.

``pause`` posts ``/v1/deployments/{ref}/pause``: the deployment keeps accepting runs and
dispatches none; ``unpause`` posts ``/unpause`` and its runs go on, oldest first; ``limit`` puts
``/limits``: at most ``--max`` of its runs run at once, or no limit with ``--unlimited`` (ADR
0079). An admin's or an operator's credentials.
"""

import argparse
from collections.abc import Mapping
from typing import Any

from ecp_http.cli.api_client import Api, add_url_option, api_path
from ecp_http.cli.output import add_format_option, emit, fields, json_text

FIELDS = (
    ("deployment", "deployment_ref"),
    ("graph version", "graph_version_ref"),
    ("paused", "paused"),
    ("max concurrent runs", "max_concurrent_runs"),
    ("created", "created_at"),
)
WHO = "an admin's or an operator's"


def _shown(args: argparse.Namespace, deployment: Any) -> int:  # noqa: ANN401 - the API's JSON
    """Print the deployment the API answered, in the asked format; exit status 0."""
    if args.format == "json":
        emit(json_text(deployment))
    else:
        emit(fields(deployment, FIELDS, markdown=args.format == "markdown"))
    return 0


def _pause(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = Api.from_args(args, environ, who=WHO)
    body = {} if args.reason is None else {"reason": args.reason}
    target = api_path("/v1/deployments/{}/" + args.action, args.deployment_ref)
    return _shown(args, api.json("POST", target, json=body))


def _limit(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = Api.from_args(args, environ, who=WHO)
    target = api_path("/v1/deployments/{}/limits", args.deployment_ref)
    return _shown(args, api.json("PUT", target, json={"max_concurrent_runs": args.max}))


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``deployments pause|unpause`` to the ``ecp`` parser."""
    deployments = commands.add_parser(
        "deployments",
        help="pause, unpause or limit a deployment's dispatch (over the API)",
        description="Credentials: ECP_TOKEN (a bearer token) or ECP_API_KEY (a project API key); "
        "the service: --url or ECP_URL.",
    )
    actions = deployments.add_subparsers(dest="action", required=True, metavar="ACTION")
    for verb, what in (
        ("pause", "accept and queue new runs, dispatch none (admin, operator)"),
        ("unpause", "dispatch the deployment's runs again, oldest first (admin, operator)"),
    ):
        action = actions.add_parser(verb, help=what)
        action.add_argument("deployment_ref", metavar="REF", help="the deployment's ref")
        action.add_argument("--reason", help="why, in your words (1 to 500 characters; logged)")
        add_url_option(action)
        add_format_option(action)
        action.set_defaults(handler=_pause)
    limit = actions.add_parser(
        "limit", help="at most so many of the deployment's runs run at once (admin, operator)"
    )
    limit.add_argument("deployment_ref", metavar="REF", help="the deployment's ref")
    how_many = limit.add_mutually_exclusive_group(required=True)
    how_many.add_argument(
        "--max", type=int, metavar="N", help="the limit, 1 to 100,000 (the API checks it)"
    )
    how_many.add_argument(
        "--unlimited",
        dest="max",
        action="store_const",
        const=None,
        help="lift the deployment's limit",
    )
    add_url_option(limit)
    add_format_option(limit)
    limit.set_defaults(handler=_limit)
