"""``ecp witness``: run a cosigning witness for ECP transparency logs (C2SP tlog-witness).

It needs no database: its key is a file (made on first start), its state a JSON file. Each
``--log`` is a log's verifier key as ``GET /v1/log/keys`` shows it. On start it prints its own
verifier key, which logs and auditors pin to check its cosignatures.
"""

import argparse
import pathlib
from collections.abc import Mapping

from ecp_http.cli.args import port
from ecp_http.startup.exits import CommandRefused


def _witness(args: argparse.Namespace, _: Mapping[str, str]) -> int:
    import uvicorn  # noqa: PLC0415 - when the command runs

    from ecp_core.transparency.notes import NoteError  # noqa: PLC0415
    from ecp_http.startup.witness import (  # noqa: PLC0415
        FileState,
        make_witness,
        read_seed,
        witness_app,
    )

    try:
        seed = read_seed(pathlib.Path(args.key_file))
        witness = make_witness(args.name, seed, args.log, FileState(pathlib.Path(args.state)))
    except (NoteError, ValueError, OSError) as exc:
        raise CommandRefused(f"ecp witness: {exc}") from exc
    print(f"witness {args.name} on http://{args.address}:{args.listen_port}/add-checkpoint")  # noqa: T201
    print(f"its verifier key: {witness.signer.key.vkey()}", flush=True)  # noqa: T201
    app = witness_app(witness)
    uvicorn.run(app, host=args.address, port=args.listen_port, log_level="warning")
    return 0


def add_parser(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``witness`` to the ``ecp`` parser."""
    witness = commands.add_parser(
        "witness",
        help="run a cosigning witness for transparency logs (no database needed)",
        description="Cosign the checkpoints of the given logs while each stays consistent with "
        "the last one cosigned; refuse (and log) a fork or a rollback.",
    )
    witness.add_argument("--name", required=True, help="the witness's key name, e.g. w.example/1")
    witness.add_argument(
        "--log", action="append", default=[], metavar="VKEY", help="a log's verifier key"
    )
    witness.add_argument(
        "--key-file", default=".ecp/witness-key", help="its Ed25519 seed (made when missing)"
    )
    witness.add_argument("--state", default=".ecp/witness-state.json", help="its state file")
    witness.add_argument(
        "--address", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)"
    )
    witness.add_argument(
        "--listen-port", type=port, default=8090, help="the port to listen on (default 8090)"
    )
    witness.set_defaults(handler=_witness)
