"""A loopback stand-in model provider: a real HTTP server speaking both wire formats, for tests.

It serves ``POST /v1/chat/completions`` (OpenAI-compatible) and ``POST /v1/messages``
(Anthropic) on 127.0.0.1 and answers each call from a per-model script, by the provider's model
name in the request body::

    with StandinModels(api_key="sk-test") as models:
        catalog = {"fast": models.entry("fast", provider="openai", input_price="0.15")}
        models.script("fast", "hello", Reply("bye", input_tokens=7, output_tokens=3))
        models.fail("fast", 429, retry_after=1)   # then a 429 with Retry-After: 1
        models.fail("fast", 500, times=3)         # then three 500s
        models.hang("fast", 5.0)                  # then a call that answers after 5 seconds
        models.malformed("fast", b"{not json")    # then a 200 with this body
        models.respond("fast", lambda body: Reply(body["messages"][-1]["content"]))
        ...
        models.calls("fast")                      # every call received for "fast"
        models.received("fast")[0].body           # what was sent (JSON), and its headers

Each model has one queue of steps, taken in order, one per call; when it is empty the model's
responder answers (``respond``), else :data:`DEFAULT_REPLY`. ``entry`` builds a catalog entry
whose base URL points here (the model ref is the provider's model name). With ``api_key``, a call
without that key (bearer or ``x-api-key``) answers 401. Nothing here is used by the server.
"""

import itertools
import json
import sys
import threading
from collections import defaultdict, deque
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

import attrs

from ecp_core.models.model import CatalogEntry, ProviderKind
from ecp_http.outbound.model_calls.standin_steps import (
    ANTHROPIC_PATH,
    DEFAULT_REPLY,
    OPENAI_PATH,
    Fail,
    Hang,
    Raw,
    Received,
    Reply,
    Responder,
    Step,
    answer_body,
)


class _Server(ThreadingHTTPServer):
    """Quiet about clients that hang up (a client timeout closes the connection)."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:  # noqa: ANN401
        """Ignore a connection the client dropped; report anything else."""
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


@attrs.define
class StandinModels:
    """The loopback provider; use as a context manager, then point catalog entries at ``url``."""

    api_key: str | None = None
    url: str = ""
    """``http://127.0.0.1:<port>``, set on entering."""
    _steps: dict[str, deque[Step]] = attrs.field(factory=lambda: defaultdict(deque), init=False)
    _responders: dict[str, Responder] = attrs.field(factory=dict, init=False)
    _received: dict[str, list[Received]] = attrs.field(
        factory=lambda: defaultdict(list), init=False
    )
    _lock: threading.Lock = attrs.field(factory=threading.Lock, init=False)
    _stopping: threading.Event = attrs.field(factory=threading.Event, init=False)
    _ids: "itertools.count[int]" = attrs.field(factory=lambda: itertools.count(1), init=False)
    _server: _Server | None = attrs.field(default=None, init=False)

    def __enter__(self) -> Self:
        """Serve on a free loopback port."""
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        """Release hanging calls and stop serving."""
        self._stopping.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    # -- scripting ---------------------------------------------------------------------------

    def script(self, model: str, *replies: Reply | str) -> Self:
        """Queue answers for ``model`` (a string is a reply with the default token counts)."""
        with self._lock:
            self._steps[model].extend(
                Reply(reply) if isinstance(reply, str) else reply for reply in replies
            )
        return self

    def fail(
        self, model: str, status: int, *, times: int = 1, retry_after: float | None = None
    ) -> Self:
        """Queue ``times`` answers with ``status`` (429, 500, 400, ...)."""
        return self._queue(model, Fail(status, retry_after), times)

    def hang(self, model: str, seconds: float, *, times: int = 1) -> Self:
        """Queue ``times`` calls that answer only after ``seconds`` (past a client's timeout)."""
        return self._queue(model, Hang(seconds), times)

    def malformed(self, model: str, body: bytes = b"{not json", *, times: int = 1) -> Self:
        """Queue ``times`` 200 answers with ``body`` as it is."""
        return self._queue(model, Raw(body), times)

    def respond(self, model: str, responder: Responder) -> Self:
        """Answer ``model``'s calls, once its queue is empty, with ``responder(request_body)``."""
        with self._lock:
            self._responders[model] = responder
        return self

    def _queue(self, model: str, step: Step, times: int) -> Self:
        with self._lock:
            self._steps[model].extend([step] * times)
        return self

    # -- reading -----------------------------------------------------------------------------

    def calls(self, model: str | None = None) -> int:
        """Calls received for ``model`` (every model when None), failed ones included."""
        with self._lock:
            if model is None:
                return sum(len(calls) for calls in self._received.values())
            return len(self._received.get(model, []))

    def received(self, model: str) -> list[Received]:
        """The calls received for ``model``, oldest first."""
        with self._lock:
            return list(self._received.get(model, []))

    def entry(
        self,
        model: str,
        *,
        provider: ProviderKind | str = ProviderKind.OPENAI,
        family: str | None = None,
        input_price: Decimal | str = "1",
        output_price: Decimal | str = "2",
        secret_name: str | None = None,
    ) -> CatalogEntry:
        """A catalog entry for ``model`` (ref and provider name alike) served by this stand-in."""
        kind = ProviderKind(provider)
        return CatalogEntry(
            model_ref=model,
            provider=kind,
            model=model,
            base_url=self.url + ("/v1" if kind is ProviderKind.OPENAI else ""),
            secret_name=secret_name,
            family=family or f"{model}-family",
            input_usd_per_million=Decimal(input_price),
            output_usd_per_million=Decimal(output_price),
        )

    # -- serving -----------------------------------------------------------------------------

    def record(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> None:
        """Record a call that is answered without a step (a wrong key)."""
        with self._lock:
            self._received[str(body.get("model", ""))].append(Received(path, headers, body))

    def take(self, path: str, headers: dict[str, str], body: dict[str, Any]) -> Step:
        """Record a call and take the step that answers it."""
        model = str(body.get("model", ""))
        with self._lock:
            self._received[model].append(Received(path, headers, body))
            queued = self._steps.get(model)
            if queued:
                return queued.popleft()
            responder = self._responders.get(model)
        return DEFAULT_REPLY if responder is None else responder(body)

    def authorized(self, path: str, headers: dict[str, str]) -> bool:
        """Whether the call carries the key (when one is required)."""
        if self.api_key is None:
            return True
        if path == ANTHROPIC_PATH:
            return headers.get("x-api-key") == self.api_key
        return headers.get("authorization") == f"Bearer {self.api_key}"

    def wait(self, seconds: float) -> None:
        """Sleep ``seconds``, or less when the stand-in stops."""
        self._stopping.wait(seconds)

    def next_id(self) -> int:
        """A fresh number for a response id."""
        with self._lock:
            return next(self._ids)


Answer = tuple[int, bytes, dict[str, str]]
"""A status, a JSON body and extra headers."""


def serve(models: StandinModels, path: str, headers: dict[str, str], raw: bytes) -> Answer:
    """The answer to one call (recorded, and taking the next step of its model's queue)."""
    if path not in (OPENAI_PATH, ANTHROPIC_PATH):
        return 404, b'{"error": "not found"}', {}
    try:
        body = json.loads(raw)
    except ValueError:
        return 400, b'{"error": "the body is not JSON"}', {}
    if not isinstance(body, dict):
        return 400, b'{"error": "the body is not an object"}', {}
    if not models.authorized(path, headers):
        models.record(path, headers, body)
        return 401, b'{"error": "invalid api key"}', {}
    step = models.take(path, headers, body)
    if isinstance(step, Hang):
        models.wait(step.seconds)
        step = DEFAULT_REPLY
    if isinstance(step, Fail):
        extra = {} if step.retry_after is None else {"Retry-After": f"{step.retry_after:g}"}
        error = json.dumps({"error": {"type": "standin", "status": step.status}})
        return step.status, error.encode(), extra
    if isinstance(step, Raw):
        return 200, step.body, {}
    answer = answer_body(path, str(body.get("model")), step, models.next_id())
    return 200, json.dumps(answer).encode(), {}


def _handler(models: StandinModels) -> type[BaseHTTPRequestHandler]:
    """The request handler class serving ``models``."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            headers = {k.lower(): v for k, v in self.headers.items()}
            status, body, extra = serve(models, self.path, headers, raw)
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(body)
            except ConnectionError:
                return  # the client gave up (a timeout): nothing to answer

        def log_message(self, *_: Any) -> None:  # noqa: ANN401 - quiet
            return

    return Handler


__all__ = [
    "ANTHROPIC_PATH",
    "DEFAULT_REPLY",
    "OPENAI_PATH",
    "Fail",
    "Hang",
    "Raw",
    "Received",
    "Reply",
    "Responder",
    "StandinModels",
    "Step",
    "answer_body",
    "serve",
]
