"""``ecp dev-cloud`` as ``docs/hosted.md`` runs it: a real process with both stand-ins beside it.

The walkthrough's login happens by hand here (redirects followed one by one, cookies kept): the
landing page, the stand-in provider's redirect, the callback that activates the tenant and hands
out the quickstart key once, and the key at work on the API.
"""

import os
import pathlib
import signal
import socket
import subprocess
import sys
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

import httpx
import pytest

pytestmark = pytest.mark.integration

ECP = str(pathlib.Path(sys.executable).parent / "ecp")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cookies_of(response: httpx.Response) -> dict[str, str]:
    kept: dict[str, str] = {}
    for header in response.headers.get_list("set-cookie"):
        parsed = SimpleCookie()
        parsed.load(header)
        kept.update({name: morsel.value for name, morsel in parsed.items()})
    return kept


@pytest.mark.spec("§4.5 login-callback", "§9.1 hosted-activation")
def test_dev_cloud_serves_the_offer_against_its_stand_ins(tmp_path):
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ECP_")}
    env["ECP_DATA_DIR"] = str(tmp_path / "data")
    process = subprocess.Popen(
        [ECP, "dev-cloud", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        lines = []
        assert process.stdout is not None
        while not any("ECP is serving" in line for line in lines):
            line = process.stdout.readline()
            assert line, f"ecp dev-cloud ended early: {lines}"
            lines.append(line)
        printed = "".join(lines)
        assert "stand-in identity provider at http://127.0.0.1:" in printed
        assert "Bearer" not in printed  # no development token in hosted mode
        with httpx.Client(base_url=base, timeout=10.0) as client:
            assert "39 USD" in client.get("/").text
            login = client.get("/v1/cloud/auth/login", follow_redirects=False)
            assert login.status_code == 303
            answered = httpx.get(login.headers["location"], follow_redirects=False)
            assert answered.status_code == 302
            back = urlsplit(answered.headers["location"])
            client.cookies.clear()
            jar = "; ".join(f"{k}={v}" for k, v in cookies_of(login).items())
            signed = client.get(
                f"{back.path}?{back.query}", headers={"Cookie": jar}, follow_redirects=False
            )
            assert signed.status_code == 200, signed.text
            body = signed.json()
            assert body["activated"] is True
            key = body["quickstart_key"]["key"]
            assert client.get("/v1/graphs", headers={"X-API-Key": key}).status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
        finally:
            if process.stdout is not None:
                process.stdout.close()
    assert process.returncode == 0
