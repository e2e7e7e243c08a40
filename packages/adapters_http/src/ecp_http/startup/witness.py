"""``ecp witness``: a cosigning witness for transparency logs, served over HTTP (C2SP tlog-witness).

``POST /add-checkpoint`` takes the protocol's body and answers as
:class:`ecp_core.transparency.witness.Witness` decides. The last cosigned checkpoint of each log is
kept in a JSON file, written whole and renamed into place before the answer is sent. A refusal is
logged (``witness refused checkpoint`` with the origin, status and reason) and counted
(``ecp_witness_refusals_total`` at ``GET /metrics``), so an operator notices a fork.
"""

import base64
import binascii
import json
import logging
import os
import pathlib
import tempfile
import time
from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ecp_core.transparency.notes import COSIGNATURE, NoteError, NoteKey, NoteSigner
from ecp_core.transparency.witness import Witness, WitnessState

log = logging.getLogger("ecp_http.witness")

MAX_BODY = 64 * 1024
"""The largest add-checkpoint body taken (63 proof lines and a note fit many times over)."""


class FileState(WitnessState):
    """The witness's state as one JSON file: origin → ``[size, base64 root]``."""

    def __init__(self, path: pathlib.Path) -> None:
        """Keep the state in ``path`` (created on the first cosignature)."""
        self._path = path
        self._heads: dict[str, list[object]] = (
            json.loads(path.read_text("utf-8")) if path.exists() else {}
        )

    def last(self, origin: str) -> tuple[int, bytes] | None:
        """The last size and root cosigned for ``origin``."""
        found = self._heads.get(origin)
        if found is None:
            return None
        size, root = found
        return int(str(size)), base64.b64decode(str(root))

    def record(self, origin: str, size: int, root: bytes) -> None:
        """Write the new state to a temporary file and rename it into place."""
        self._heads[origin] = [size, base64.b64encode(root).decode("ascii")]
        self._path.parent.mkdir(parents=True, exist_ok=True)
        handle, name = tempfile.mkstemp(dir=self._path.parent, prefix=".witness-")
        with os.fdopen(handle, "w", encoding="utf-8") as written:
            json.dump(self._heads, written, indent=2, sort_keys=True)
            written.flush()
            os.fsync(written.fileno())
        pathlib.Path(name).replace(self._path)


def read_seed(path: pathlib.Path) -> bytes:
    """The witness's Ed25519 seed (base64, 32 bytes) from ``path``, made there when missing."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(base64.b64encode(os.urandom(32)).decode("ascii") + "\n")
    try:
        seed = base64.b64decode(path.read_text("utf-8").strip(), validate=True)
    except binascii.Error as exc:
        raise ValueError(f"{path} does not hold a base64 key") from exc
    if len(seed) != 32:  # noqa: PLR2004 - an Ed25519 seed
        raise ValueError(f"{path} does not hold a 32-byte Ed25519 seed")
    return seed


def make_witness(name: str, seed: bytes, logs: Sequence[str], state: WitnessState) -> Witness:
    """A witness named ``name`` cosigning the logs whose verifier keys are ``logs``."""
    keys = [NoteKey.from_vkey(vkey) for vkey in logs]
    if not keys:
        raise NoteError("name at least one log to witness (--log VKEY)")
    signer = NoteSigner.from_seed(name, seed, kind=COSIGNATURE)
    return Witness(signer, {key.name: key for key in keys}, state, clock=lambda: int(time.time()))


def witness_app(witness: Witness) -> Starlette:
    """The witness's HTTP interface: ``POST /add-checkpoint`` and ``GET /metrics``."""
    registry = CollectorRegistry()
    refusals = Counter(
        "ecp_witness_refusals_total",
        "Checkpoints this witness refused, by HTTP status (409 is a log catching up).",
        ["status"],
        registry=registry,
    )
    cosigned = Counter(
        "ecp_witness_cosignatures_total", "Checkpoints this witness cosigned.", registry=registry
    )

    async def add_checkpoint(request: Request) -> Response:
        raw = await request.body()
        if len(raw) > MAX_BODY:
            return Response("the body is too large\n", status_code=413, media_type="text/plain")
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError:
            return Response("the body is not UTF-8\n", status_code=400, media_type="text/plain")
        answer = witness.add_checkpoint(body)
        if answer.status == 200:  # noqa: PLR2004 - HTTP OK
            cosigned.inc()
        else:
            refusals.labels(str(answer.status)).inc()
            log.warning(
                "witness refused checkpoint",
                extra={"status": answer.status, "reason": answer.body.strip()},
            )
        return Response(answer.body, status_code=answer.status, media_type=answer.media_type)

    async def metrics(_: Request) -> Response:
        return Response(generate_latest(registry), media_type="text/plain; version=0.0.4")

    return Starlette(
        routes=[
            Route("/add-checkpoint", add_checkpoint, methods=["POST"]),
            Route("/metrics", metrics, methods=["GET"]),
        ]
    )


__all__ = ["MAX_BODY", "FileState", "make_witness", "read_seed", "witness_app"]
