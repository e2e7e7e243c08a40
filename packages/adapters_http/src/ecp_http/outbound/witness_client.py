"""WitnessClient over httpx: submits checkpoints to the witnesses the operator configured.

The witnesses' URLs come from the server's own settings (``ECP_LOG_WITNESSES``), not from any
tenant, so they are called as given (a witness on the same host or network is usual). Network
trouble is an answer (None and the error), never an exception; at most 64 KiB of an answer is read.
"""

import httpx

from ecp_http.outbound import outbound_client

MAX_ANSWER_BYTES = 64 * 1024
TIMEOUT_SECONDS = 10.0


class HttpxWitnessClient:
    """POSTs ``add-checkpoint`` bodies (``text/plain``) and reads the witness's answer.

    A connection per submission (at most one a checkpoint per witness), so nothing stays open.
    """

    def __init__(self, timeout_seconds: float = TIMEOUT_SECONDS) -> None:
        """Wait at most ``timeout_seconds`` for a witness."""
        self._timeout = timeout_seconds

    def add_checkpoint(self, url: str, body: str) -> tuple[int | None, str]:
        """The witness's status and (at most 64 KiB of) its body, or None and the error."""
        target = url.rstrip("/") + "/add-checkpoint"
        headers = {"Content-Type": "text/plain; charset=utf-8"}
        try:
            with (
                outbound_client(self._timeout) as client,
                client.stream("POST", target, content=body, headers=headers) as answer,
            ):
                read = b""
                for chunk in answer.iter_bytes():
                    read += chunk
                    if len(read) >= MAX_ANSWER_BYTES:
                        break
                return answer.status_code, read[:MAX_ANSWER_BYTES].decode("utf-8", "replace")
        except httpx.HTTPError as exc:
            return None, f"{type(exc).__name__}: {exc}"


__all__ = ["HttpxWitnessClient"]
