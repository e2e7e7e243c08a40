"""``ecp audit verify-bundle FILE``: verify a run's audit bundle with no server and no database.

The bundle (``GET /runs/{run_id}/audit/bundle``) carries the records, their signing keys, the
log's keys, a signed checkpoint and an inclusion proof per record. ``--log-key`` pins the log
key a checkpoint must be signed by (a verifier key, as ``GET /v1/log/keys`` shows it); without
it the bundle's own keys are used, and the answer says so. Exit status 0 when every check
passes, 1 when one fails (the first failure is named), 2 when the file cannot be read.
"""

import argparse
import json
import pathlib
from collections.abc import Mapping

from ecp_http.startup.exits import CommandFailed, CommandRefused


def _verify_bundle(args: argparse.Namespace, _: Mapping[str, str]) -> int:
    from ecp_core.errors import EcpError  # noqa: PLC0415
    from ecp_core.json_text import parse_json_text  # noqa: PLC0415 - when the command runs
    from ecp_core.runs.audit.bundle_check import verify_bundle  # noqa: PLC0415
    from ecp_core.transparency.notes import NoteError, NoteKey  # noqa: PLC0415

    try:
        raw = pathlib.Path(args.file).read_bytes()
    except OSError as exc:
        raise CommandRefused(f"cannot read {args.file}: {exc.strerror}") from exc
    try:
        document = parse_json_text(raw)
        pinned = [NoteKey.from_vkey(vkey) for vkey in args.log_key]
    except (EcpError, NoteError) as exc:
        raise CommandRefused(f"{args.file}: {exc}") from exc
    if not isinstance(document, dict):
        raise CommandRefused(f"{args.file} is not an audit bundle (a JSON object)")
    verdict = verify_bundle(document, pinned)
    report = {
        "verified": verdict.verified,
        "checkpoint_verified": verdict.checkpoint_verified,
        "log_key": "pinned" if verdict.log_key_pinned else "from the bundle itself",
        "chain_verified": verdict.chain_verified,
        "signatures_verified": verdict.signatures_verified,
        "included": verdict.included,
        "complete": verdict.complete,
        "record_count": verdict.record_count,
        "tree_size": verdict.tree_size,
        "failed_audit_id": verdict.failed_audit_id,
        "error": verdict.error,
    }
    print(json.dumps(report, indent=2))
    if not verdict.verified:
        raise CommandFailed(f"the bundle does not verify: {verdict.error}")
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``audit verify-bundle`` to the ``ecp`` parser."""
    audit = commands.add_parser(
        "audit",
        help="audit evidence offline: verify a run's audit bundle",
        description="Verify audit evidence on this machine, with no server and no database.",
    )
    actions = audit.add_subparsers(dest="action", required=True, metavar="ACTION")
    verify = actions.add_parser(
        "verify-bundle", help="verify a run's audit bundle (records, checkpoint, proofs)"
    )
    verify.add_argument("file", help="the bundle, as GET /runs/{run_id}/audit/bundle answers")
    verify.add_argument(
        "--log-key",
        action="append",
        default=[],
        metavar="VKEY",
        help="a log verifier key the checkpoint must be signed by (repeat for several)",
    )
    verify.set_defaults(handler=_verify_bundle)
