"""``ecp bills``: import provider statements and read reconciliation reports over the API.

It talks only to the service's HTTP API (``ECP_URL``, default ``http://127.0.0.1:8000``) with
the token in ``ECP_TOKEN``; it never opens the database. ``import`` takes a statement JSON
file, or one complete page of a provider's organization cost API (normalized offline first);
``normalize`` prints the statement such a page becomes without sending anything.
"""

import argparse
import json
import os
import pathlib
import sys
import urllib.parse
from typing import Any

import httpx

from ecp_core.errors import ValidationFailed
from ecp_core.reconciliation.normalizer import normalize_cost_page, parse_page
from ecp_core.wire import unstructure

DEFAULT_URL = "http://127.0.0.1:8000"
TIMEOUT_SECONDS = 60.0


class BillsError(Exception):
    """A refusal to report to the user; the message says what happened and what to do."""


def _problem_text(response: httpx.Response) -> str:
    """A problem+json answer (or any other) as readable lines."""
    try:
        problem = response.json()
    except ValueError:
        return f"HTTP {response.status_code}: {response.text[:500]}"
    if not isinstance(problem, dict):
        return f"HTTP {response.status_code}"
    lines = [f"HTTP {response.status_code} {problem.get('code', '')}: {problem.get('detail', '')}"]
    for error in problem.get("errors") or []:
        where = ".".join(str(part) for part in error.get("loc", [])) or "(body)"
        lines.append(f"  {where}: {error.get('msg')}")
    return "\n".join(lines)


def _client() -> httpx.Client:
    token = os.environ.get("ECP_TOKEN", "").strip()
    if not token:
        msg = "ECP_TOKEN is not set: export a token (an admin's to import, an analyst's to read)"
        raise BillsError(msg)
    base = os.environ.get("ECP_URL", DEFAULT_URL).rstrip("/")
    return httpx.Client(
        base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=TIMEOUT_SECONDS
    )


def _send(method: str, path: str, **kwargs: Any) -> httpx.Response:  # noqa: ANN401
    with _client() as client:
        try:
            response = client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            msg = f"cannot reach the service at {client.base_url} ({exc}); is it running?"
            raise BillsError(msg) from exc
    if response.status_code >= 400:  # noqa: PLR2004
        raise BillsError(_problem_text(response))
    return response


def _read_json(path: str) -> Any:  # noqa: ANN401
    try:
        text = pathlib.Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror}"
        raise BillsError(msg) from exc
    try:
        return parse_page(text)
    except ValidationFailed as exc:
        msg = f"{path} is not JSON"
        raise BillsError(msg) from exc


def _statement_body(args: argparse.Namespace) -> Any:  # noqa: ANN401
    """The statement to send: the file itself, or the statement its cost page becomes."""
    data = _read_json(args.file)
    if isinstance(data, dict) and data.get("object") == "page":
        try:
            statement = normalize_cost_page(
                data, provider=args.provider, statement_id=args.statement_id
            )
        except ValidationFailed as exc:
            lines = [exc.detail, *(f"  {'.'.join(map(str, e.loc))}: {e.msg}" for e in exc.errors)]
            raise BillsError("\n".join(lines)) from exc
        return unstructure(statement)
    # A statement file is sent as written; decimals stay the exact text they were.
    return json.loads(pathlib.Path(args.file).read_text(encoding="utf-8"))


def _import(args: argparse.Namespace) -> int:
    body = _statement_body(args)
    response = _send("POST", "/v1/reconciliation/provider-bills", json=body)
    answer = response.json()
    verb = "imported" if response.status_code == 201 else "already imported (identical)"  # noqa: PLR2004
    print(
        f"{verb}: {answer['provider']} statement {answer['statement_id']}, "
        f"{answer['buckets']} buckets, {answer['billed_total_usd']} USD, {answer['digest']}"
    )
    return 0


def _report(args: argparse.Namespace) -> int:
    path = "/v1/reconciliation/provider-bills/{}/{}/report".format(
        urllib.parse.quote(args.provider, safe=""), urllib.parse.quote(args.statement_id, safe="")
    )
    response = _send("GET", path, params={"format": args.format})
    text = response.text if args.format == "markdown" else json.dumps(response.json(), indent=2)
    print(text)
    return 0


def _normalize(args: argparse.Namespace) -> int:
    data = _read_json(args.file)
    if not (isinstance(data, dict) and data.get("object") == "page"):
        msg = f"{args.file} is not a cost API page (object 'page')"
        raise BillsError(msg)
    print(json.dumps(_statement_body(args), indent=2))
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``bills import|report|normalize`` to the ``ecp`` parser."""
    bills = commands.add_parser("bills", help="provider bills: import and reconciliation reports")
    actions = bills.add_subparsers(dest="action", required=True)
    for name, run, helptext in (
        ("import", _import, "import a statement (or a cost API page) through the API"),
        ("normalize", _normalize, "print the statement a cost API page becomes (offline)"),
    ):
        action = actions.add_parser(name, help=helptext)
        action.add_argument("file", help="a statement JSON file or one cost API page")
        action.add_argument("--provider", default="openai", help="provider of a cost API page")
        action.add_argument("--statement-id", default=None, help="statement id for a cost page")
        action.set_defaults(run=_guarded(run))
    report = actions.add_parser("report", help="print a statement's reconciliation report")
    report.add_argument("provider")
    report.add_argument("statement_id")
    report.add_argument("--format", choices=["json", "markdown"], default="json")
    report.set_defaults(run=_guarded(_report))


def _guarded(run: Any) -> Any:  # noqa: ANN401
    """Turn a BillsError into a message on stderr and exit status 1."""

    def guarded(args: argparse.Namespace) -> int:
        try:
            return int(run(args))
        except BillsError as exc:
            print(f"ecp bills: {exc}", file=sys.stderr)
            return 1

    return guarded
