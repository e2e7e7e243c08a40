"""A real webhook receiver on 127.0.0.1 that answers from a script and records what it got."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import attrs


@attrs.define
class Received:
    """One request the receiver got."""

    headers: dict[str, str]
    body: bytes


@attrs.define
class Receiver:
    """Answers each POST with the next scripted status (then ``default``); records requests."""

    url: str = ""
    script: list[int] = attrs.field(factory=list)
    default: int = 200
    received: list[Received] = attrs.field(factory=list)
    hold: threading.Event | None = None
    arrived: threading.Event = attrs.field(factory=threading.Event)

    def answer(self) -> int:
        return self.script.pop(0) if self.script else self.default


@contextmanager
def receiver(**options) -> Iterator[Receiver]:
    """Run a receiver for the duration of the block."""
    state = Receiver(**options)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.received.append(
                Received(headers={k.lower(): v for k, v in self.headers.items()}, body=body)
            )
            state.arrived.set()
            if state.hold is not None:
                state.hold.wait(30)
            status = state.answer()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

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
