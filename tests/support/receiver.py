"""A real HTTP receiver on 127.0.0.1 that answers from a script and records what it got.

Webhook tests post to it; ``http_request`` tests also have it answer any method with a body.
"""

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import attrs


@attrs.define
class Received:
    """One request the receiver got."""

    headers: dict[str, str]
    body: bytes
    method: str = "POST"
    answered: int = 0


@attrs.define
class Receiver:
    """Answers each request with the next scripted status (then ``default``); records requests.

    ``reply_body`` and ``reply_headers`` make up every answer; ``declare_length`` False leaves
    out ``Content-Length``, so the body ends when the connection closes.
    """

    url: str = ""
    script: list[int] = attrs.field(factory=list)
    default: int = 200
    received: list[Received] = attrs.field(factory=list)
    hold: threading.Event | None = None
    arrived: threading.Event = attrs.field(factory=threading.Event)
    reply_body: bytes = b""
    reply_headers: dict[str, str] = attrs.field(factory=dict)
    declare_length: bool = True
    judge: "Callable[[Received], int] | None" = None
    """When set, decides each answer from the request (e.g. a signature verifier)."""

    def answer(self) -> int:
        return self.script.pop(0) if self.script else self.default


@contextmanager
def receiver(**options) -> Iterator[Receiver]:
    """Run a receiver for the duration of the block."""
    state = Receiver(**options)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            got = Received(
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                method=self.command,
            )
            if state.judge is not None:
                got.answered = state.judge(got)
            state.received.append(got)
            state.arrived.set()
            if state.hold is not None:
                state.hold.wait(30)
            if state.judge is None:
                got.answered = state.answer()
            status = got.answered
            self.send_response(status)
            for name, value in state.reply_headers.items():
                self.send_header(name, value)
            if state.declare_length:
                self.send_header("Content-Length", str(len(state.reply_body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(state.reply_body)

        do_GET = do_PUT = do_PATCH = do_DELETE = do_OPTIONS = do_HEAD = do_POST  # noqa: N815

        def log_message(self, *args) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        if state.hold is not None:
            state.hold.set()
        server.shutdown()
        server.server_close()
