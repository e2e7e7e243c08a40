"""Outbound calls connect to the address that was checked: a name that re-resolves between the
check and the connection cannot move the request (DNS rebinding), and TLS still checks the name.

Only 127.0.0.1 is ever contacted; the other answers are refused or never used.
"""

import ipaddress
import shutil
import ssl
import subprocess
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from tests.support.receiver import receiver

from ecp_http.outbound import (
    AddressGuard,
    PinnedTarget,
    Refusal,
    outbound_client,
    pin,
    pinned_stream,
)
from ecp_http.outbound.webhook_sender import HttpxSender

pytestmark = [pytest.mark.integration, pytest.mark.spec("C7 address-guard")]

LOOPBACK_ONLY = AddressGuard(allow_loopback=True)


class FlipResolver:
    """Answers ``first`` the first time it is asked and ``then`` every time after."""

    def __init__(self, first: str, then: str) -> None:
        self.answers = [first, then]
        self.calls: list[tuple[str, int]] = []

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        return [self.answers[min(len(self.calls), 2) - 1]]


def named(url: str, host: str) -> str:
    """``url`` (a receiver on 127.0.0.1) with its host replaced by a name."""
    return str(httpx.URL(url).copy_with(host=host))


def test_a_name_that_rebinds_to_a_private_address_still_reaches_the_checked_one():
    resolver = FlipResolver("127.0.0.1", "10.1.2.3")
    with receiver() as hook, outbound_client(5) as client:
        url = named(hook.url, "hooks.rebind.test")
        target = pin(url, LOOPBACK_ONLY, resolver=resolver)
        assert isinstance(target, PinnedTarget)
        assert target.address == ipaddress.ip_address("127.0.0.1")
        # The name now answers a private address, which this guard refuses ...
        assert LOOPBACK_ONLY.refusal(ipaddress.ip_address(resolver.answers[1])) is not None
        # ... but the request goes to the address that was checked, without resolving again.
        with pinned_stream(
            client, "POST", target, content=b"{}", headers={"Host": "evil"}
        ) as answer:
            assert answer.status_code == 200
    assert resolver.calls == [("hooks.rebind.test", target.port)]
    assert [r.body for r in hook.received] == [b"{}"]
    assert hook.received[0].headers["host"] == f"hooks.rebind.test:{target.port}"


def test_a_name_that_first_answers_a_private_address_is_refused_and_nothing_is_sent():
    resolver = FlipResolver("10.1.2.3", "127.0.0.1")
    with receiver() as hook:
        found = pin(named(hook.url, "hooks.rebind.test"), LOOPBACK_ONLY, resolver=resolver)
    assert isinstance(found, Refusal)
    assert "10.1.2.3 is a private address" in found.reason
    assert len(resolver.calls) == 1
    assert hook.received == []


def test_the_webhook_sender_resolves_once_per_delivery_and_sends_to_what_it_checked():
    resolver = FlipResolver("127.0.0.1", "192.0.2.1")  # a documentation address: always refused
    with receiver() as hook:
        sender = HttpxSender(timeout_seconds=5, allow_private=True, resolver=resolver)
        url = named(hook.url, "hooks.rebind.test")
        first = sender.post(url, b'{"n":1}', {"X-Service-Event-Id": "e-1"})
        second = sender.post(url, b'{"n":2}', {"X-Service-Event-Id": "e-2"})
        sender.close()
    assert first.delivered
    assert not second.delivered
    assert "192.0.2.1" in second.error
    assert len(resolver.calls) == 2  # once per delivery, never again to connect
    assert [r.body for r in hook.received] == [b'{"n":1}']
    assert hook.received[0].headers["host"].startswith("hooks.rebind.test:")


def test_the_sender_refuses_a_name_that_answers_a_metadata_address():
    sender = HttpxSender(
        timeout_seconds=5, allow_private=True, resolver=FlipResolver("169.254.169.254", "x")
    )
    answer = sender.post("http://metadata.rebind.test/latest", b"{}", {})
    sender.close()
    assert not answer.delivered
    assert "cloud metadata" in answer.error


# TLS: the URL names 127.0.0.1, yet SNI and the certificate check use the original name.

NAME = "hooks.pinned.test"


def openssl(*args: str, cwd) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)  # noqa: S607


@pytest.fixture
def certificates(tmp_path):
    if shutil.which("openssl") is None:
        pytest.skip("the openssl command is needed to make a test certificate")
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes")
    openssl("req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
            "-subj", "/CN=ECP test CA", "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign", cwd=tmp_path)  # fmt: skip
    openssl("req", *ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", f"/CN={NAME}", cwd=tmp_path)  # fmt: skip
    (tmp_path / "leaf.ext").write_text(f"subjectAltName=DNS:{NAME}\n")
    openssl("x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "leaf.pem", "-days", "2", "-extfile", "leaf.ext", cwd=tmp_path)  # fmt: skip
    return tmp_path


@contextmanager
def tls_receiver(directory):
    """An https server on 127.0.0.1 that records the SNI names and Host headers it saw."""
    seen: dict[str, list[str]] = {"sni": [], "host": []}
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(directory / "leaf.pem", directory / "leaf.key")
    context.sni_callback = lambda _socket, name, _context: seen["sni"].append(name)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length", "0")))
            seen["host"].append(self.headers["Host"])
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1], seen
    finally:
        server.shutdown()
        server.server_close()


def test_https_to_a_pinned_address_verifies_the_original_name(certificates):
    verify = ssl.create_default_context(cafile=str(certificates / "ca.pem"))
    with (
        tls_receiver(certificates) as (port, seen),
        httpx.Client(verify=verify, trust_env=False) as client,
    ):
        target = pin(
            f"https://{NAME}:{port}/hook", LOOPBACK_ONLY, resolver=lambda host, p: ["127.0.0.1"]
        )
        assert str(target.connect_url) == f"https://127.0.0.1:{port}/hook"
        with pinned_stream(client, "POST", target, content=b"{}") as answer:
            assert answer.status_code == 204
        other = pin(
            f"https://other.pinned.test:{port}/hook",
            LOOPBACK_ONLY,
            resolver=lambda host, p: ["127.0.0.1"],
        )
        with (
            pytest.raises(httpx.ConnectError, match="certificate"),
            pinned_stream(client, "POST", other, content=b"{}"),
        ):
            pass
    assert seen["sni"] == [NAME, "other.pinned.test"]
    assert seen["host"] == [f"{NAME}:{port}"]
