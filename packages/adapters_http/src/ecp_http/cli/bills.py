"""``ecp bills``: import provider statements and read reconciliation reports over the API.

It talks only to the service's HTTP API (``--url`` or ``ECP_URL``, default
``http://127.0.0.1:8000``) with ``ECP_TOKEN`` or ``ECP_API_KEY`` (:mod:`ecp_http.cli.api_client`);
it never opens the database. ``import`` takes a statement JSON
file, or one complete page of a provider's organization cost API (normalized offline first);
``normalize`` prints the statement such a page becomes without sending anything.
"""

import argparse
import json
import pathlib
from collections.abc import Mapping
from typing import Any

from ecp_core.errors import ValidationFailed
from ecp_http.cli.api_client import Api, add_url_option, api_path
from ecp_http.startup.exits import CommandFailed

WHO = "an admin's to import, an analyst's to read"


def _read_json(path: str) -> Any:  # noqa: ANN401
    from ecp_core.reconciliation.normalizer import parse_page  # noqa: PLC0415 - when it runs

    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror}"
        raise CommandFailed(msg) from exc
    try:
        return parse_page(text)
    except ValidationFailed as exc:
        msg = f"{path} is not JSON"
        raise CommandFailed(msg) from exc


def _statement_body(args: argparse.Namespace) -> Any:  # noqa: ANN401
    """The statement to send: the file itself, or the statement its cost page becomes."""
    from ecp_core.reconciliation.normalizer import normalize_cost_page  # noqa: PLC0415
    from ecp_core.wire import unstructure  # noqa: PLC0415 - imported when the command runs

    data = _read_json(args.file)
    if isinstance(data, dict) and data.get("object") == "page":
        try:
            statement = normalize_cost_page(
                data, provider=args.provider, statement_id=args.statement_id
            )
        except ValidationFailed as exc:
            lines = [exc.detail, *(f"  {'.'.join(map(str, e.loc))}: {e.msg}" for e in exc.errors)]
            raise CommandFailed("\n".join(lines)) from exc
        return unstructure(statement)
    # A statement file is sent as written; decimals stay the exact text they were.
    return json.loads(pathlib.Path(args.file).read_text(encoding="utf-8"))


def _import(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    body = _statement_body(args)
    response = Api.from_args(args, environ, who=WHO).send(
        "POST", "/v1/reconciliation/provider-bills", json=body
    )
    answer = response.json()
    verb = "imported" if response.status_code == 201 else "already imported (identical)"  # noqa: PLR2004
    print(
        f"{verb}: {answer['provider']} statement {answer['statement_id']}, "
        f"{answer['buckets']} buckets, {answer['billed_total_usd']} USD, {answer['digest']}"
    )
    return 0


def _report(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    target = api_path(
        "/v1/reconciliation/provider-bills/{}/{}/report", args.provider, args.statement_id
    )
    response = Api.from_args(args, environ, who=WHO).send(
        "GET", target, params={"format": args.format}
    )
    text = response.text if args.format == "markdown" else json.dumps(response.json(), indent=2)
    print(text)
    return 0


def _normalize(args: argparse.Namespace, _: Mapping[str, str]) -> int:
    data = _read_json(args.file)
    if not (isinstance(data, dict) and data.get("object") == "page"):
        msg = f"{args.file} is not a cost API page (object 'page')"
        raise CommandFailed(msg)
    print(json.dumps(_statement_body(args), indent=2))
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``bills import|report|normalize`` to the ``ecp`` parser."""
    bills = commands.add_parser(
        "bills",
        help="provider bills: import and reconciliation reports",
        description="Import provider statements and read reconciliation reports through the "
        "service's API. Credentials: ECP_TOKEN (a bearer token) or ECP_API_KEY (a project API "
        "key); the service: --url or ECP_URL.",
    )
    actions = bills.add_subparsers(dest="action", required=True, metavar="ACTION")
    for name, run, helptext in (
        ("import", _import, "import a statement (or a cost API page) through the API"),
        ("normalize", _normalize, "print the statement a cost API page becomes (offline)"),
    ):
        action = actions.add_parser(name, help=helptext)
        action.add_argument("file", help="a statement JSON file or one cost API page")
        action.add_argument("--provider", default="openai", help="provider of a cost API page")
        action.add_argument("--statement-id", default=None, help="statement id for a cost page")
        if name == "import":
            add_url_option(action)
        action.set_defaults(handler=run)
    report = actions.add_parser("report", help="print a statement's reconciliation report")
    report.add_argument("provider", help="the statement's provider (openai, anthropic ...)")
    report.add_argument("statement_id", help="the statement's id")
    report.add_argument(
        "--format", choices=["json", "markdown"], default="json", help="json (default) or markdown"
    )
    add_url_option(report)
    report.set_defaults(handler=_report)
