"""``ecp audit``: audit evidence for auditors — export a window, verify a bundle or an export.

``verify-bundle FILE`` needs no server and no database. The file is a run's bundle (``GET
/runs/{run_id}/audit/bundle``: records, keys, a signed checkpoint, an inclusion proof per record)
or an export (``ecp audit export``: every leaf of the log between the checkpoints around a
window, each with its record). ``--log-key`` pins the log key a checkpoint must be signed by (a
verifier key, as ``GET /v1/log/keys`` shows it); without it the file's own keys are used, and the
answer says so. ``--witness-key`` asks for a witness's cosignature on the checkpoint. Exit status
0 when every check passes, 1 when one fails (the first failure is named), 2 when the file cannot
be read.

``export`` asks the running service (``--url``/``ECP_URL``, credentials from ``ECP_API_KEY`` or
``ECP_TOKEN``) for a deployment's window and writes it to ``--output`` or standard output.
"""

import argparse
import json
import pathlib
import sys
from collections.abc import Mapping
from typing import Any

import attrs

from ecp_http.cli.api_client import Api, add_url_option
from ecp_http.startup.exits import CommandFailed, CommandRefused

WHO = "an auditor's or an admin's (audit_read)"


def _pinned(values: list[str], option: str) -> list[Any]:
    from ecp_core.transparency.notes import NoteError, NoteKey  # noqa: PLC0415

    try:
        return [NoteKey.from_vkey(vkey) for vkey in values]
    except NoteError as exc:
        raise CommandRefused(f"{option}: {exc}") from exc


def _read_document(file: str) -> dict[str, Any]:
    from ecp_core.errors import EcpError  # noqa: PLC0415
    from ecp_core.json_text import parse_json_text  # noqa: PLC0415 - when the command runs

    try:
        raw = pathlib.Path(file).read_bytes()
    except OSError as exc:
        raise CommandRefused(f"cannot read {file}: {exc.strerror}") from exc
    try:
        document = parse_json_text(raw)
    except EcpError as exc:
        raise CommandRefused(f"{file}: {exc}") from exc
    if not isinstance(document, dict):
        raise CommandRefused(f"{file} is not an audit bundle or export (a JSON object)")
    return document


def _verify_bundle(args: argparse.Namespace, _: Mapping[str, str]) -> int:
    from ecp_core.runs.audit.bundle_check import verify_bundle  # noqa: PLC0415
    from ecp_core.runs.audit.export import EXPORT_FORMAT  # noqa: PLC0415
    from ecp_core.runs.audit.export_check import verify_export  # noqa: PLC0415

    document = _read_document(args.file)
    pinned = _pinned(args.log_key, "--log-key")
    witnesses = _pinned(args.witness_key, "--witness-key")
    verdict: Any
    if document.get("format") == EXPORT_FORMAT:
        verdict = verify_export(document, pinned, witnesses)
        what = "export"
    else:
        verdict = verify_bundle(document, pinned, witnesses)
        what = "bundle"
    found = attrs.asdict(verdict)
    pinned_key = found.pop("log_key_pinned")
    report = {
        "verified": verdict.verified,
        "log_key": "pinned" if pinned_key else f"from the {what} itself",
        "witnesses": len(witnesses),
        **found,
    }
    print(json.dumps(report, indent=2))
    if not verdict.verified:
        raise CommandFailed(f"the {what} does not verify: {verdict.error}")
    return 0


def _export(args: argparse.Namespace, environ: Mapping[str, str]) -> int:
    api = Api.from_args(args, environ, who=WHO)
    params = {"deployment_ref": args.deployment, "since": args.since, "until": args.until}
    response = api.send("GET", "/v1/log/export", params=params)
    if args.output is None:
        sys.stdout.write(response.text + "\n")
        return 0
    try:
        pathlib.Path(args.output).write_text(response.text, encoding="utf-8")
    except OSError as exc:
        raise CommandRefused(f"cannot write {args.output}: {exc.strerror}") from exc
    body = response.json()
    print(
        f"wrote {args.output}: {len(body['runs'])} run(s), {len(body['leaves'])} leaves"
        f" [{body['first_leaf']}, {body['tree_size']}) of the log"
    )
    return 0


def _add_verify(actions: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    verify = actions.add_parser(
        "verify-bundle",
        help="verify a run's audit bundle or an audit export, offline",
        description="Verify a bundle or an export with no server and no database.",
    )
    verify.add_argument(
        "file", help="a bundle (GET /runs/{run_id}/audit/bundle) or an export (ecp audit export)"
    )
    verify.add_argument(
        "--log-key",
        action="append",
        default=[],
        metavar="VKEY",
        help="a log verifier key the checkpoint must be signed by (repeat for several)",
    )
    verify.add_argument(
        "--witness-key",
        action="append",
        default=[],
        metavar="VKEY",
        help="a witness's verifier key that must have cosigned the checkpoint (repeatable)",
    )
    verify.set_defaults(handler=_verify_bundle)


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``audit export`` and ``audit verify-bundle`` to the ``ecp`` parser."""
    audit = commands.add_parser(
        "audit",
        help="audit evidence: export a window, verify a bundle or an export offline",
        description="Export audit evidence from the service, and verify it on this machine.",
    )
    actions = audit.add_subparsers(dest="action", required=True, metavar="ACTION")
    _add_verify(actions)
    export = actions.add_parser(
        "export",
        help="a deployment's records over a window, proved complete against the log",
        description=(
            "Every leaf the tenant's log appended between the checkpoints around the window,"
            " with its record: verify it with `ecp audit verify-bundle`."
        ),
    )
    export.add_argument("--deployment", required=True, help="the deployment's ref")
    export.add_argument("--since", required=True, help="the window's start, RFC 3339")
    export.add_argument("--until", required=True, help="the window's end (excluded), RFC 3339")
    export.add_argument("--output", default=None, help="write the export here (default: stdout)")
    add_url_option(export)
    export.set_defaults(handler=_export)
