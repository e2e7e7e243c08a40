"""The request path's shortcuts keep every answer (ADR 0064): remembered tokens still expire and
stay with their secret, handlers run in the request's context, headers and JSON are as before."""

import asyncio
import contextvars
import threading
import time

import jwt
import pytest
from hypothesis import given
from hypothesis import strategies as st
from starlette.datastructures import Headers
from starlette.responses import JSONResponse

from ecp_core.errors import Unauthenticated
from ecp_http.logs import request_id
from ecp_http.server import auth
from ecp_http.server.auth import Authenticator, mint_token
from ecp_http.server.rendering import JsonAnswer
from ecp_http.server.routing import header_map
from ecp_http.server.threads import HandlerThreads

pytestmark = pytest.mark.unit

SECRET = "r" * 40


@pytest.fixture
def decoded(monkeypatch) -> list[str]:
    """The tokens PyJWT was asked to verify, in order (it still verifies them)."""
    seen: list[str] = []
    real = jwt.decode

    def spy(token, *args, **kwargs):
        seen.append(token)
        return real(token, *args, **kwargs)

    monkeypatch.setattr(auth.jwt, "decode", spy)
    return seen


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


def test_a_token_is_verified_once_while_it_is_valid(decoded):
    authenticate = Authenticator(SECRET)
    token = mint_token(SECRET, tenant="t", roles=["admin"], subject="ana")
    actors = [authenticate(bearer(token)) for _ in range(3)]
    assert decoded == [token]
    assert {(a.subject, a.tenant_id) for a in actors} == {("ana", "t")}


def test_a_token_that_failed_is_verified_every_time(decoded):
    authenticate = Authenticator(SECRET)
    forged = mint_token("f" * 40, tenant="t", roles=["admin"])
    for _ in range(2):
        with pytest.raises(Unauthenticated, match="invalid"):
            authenticate(bearer(forged))
    assert decoded == [forged, forged]


@pytest.mark.spec("C2 bearer-jwt")
def test_a_remembered_token_still_expires():
    authenticate = Authenticator(SECRET)
    token = mint_token(SECRET, tenant="t", roles=["viewer"], ttl_seconds=1)
    assert authenticate(bearer(token)).tenant_id == "t"
    expires = jwt.decode(token, options={"verify_signature": False})["exp"]
    while time.time() < expires:
        time.sleep(0.05)
    with pytest.raises(Unauthenticated, match="expired"):
        authenticate(bearer(token))


@pytest.mark.spec("C2 bearer-jwt")
def test_a_remembered_token_is_not_taken_by_another_secret():
    token = mint_token(SECRET, tenant="t", roles=["admin"])
    assert Authenticator(SECRET)(bearer(token)).tenant_id == "t"
    with pytest.raises(Unauthenticated):
        Authenticator("o" * 40)(bearer(token))


def test_the_oldest_remembered_token_is_forgotten_first(decoded):
    authenticate = Authenticator(SECRET, remembered_tokens=2)
    tokens = [mint_token(SECRET, tenant=f"t{i}", roles=["admin"]) for i in range(3)]
    for token in [*tokens, tokens[2], tokens[1], tokens[0]]:
        authenticate(bearer(token))
    assert decoded == [*tokens, tokens[0]]


def test_handlers_run_on_another_thread_in_the_requests_context():
    threads = HandlerThreads(size=2)
    flag: contextvars.ContextVar[str] = contextvars.ContextVar("flag", default="unset")

    def handler(suffix: str) -> tuple[str | None, str]:
        flag.set("changed in the handler")
        return f"{request_id.get()}{suffix}", threading.current_thread().name

    def failing() -> None:
        raise Unauthenticated("no")

    async def serve() -> tuple[tuple[str | None, str], str]:
        request_id.set("req-1")
        answer = await threads.run(handler, "!")
        with pytest.raises(Unauthenticated):
            await threads.run(failing)
        return answer, flag.get()

    try:
        (seen, thread), after = asyncio.run(serve())
    finally:
        threads.close()
    assert seen == "req-1!"
    assert thread.startswith("ecp-handler") and thread != threading.current_thread().name
    assert after == "unset"  # the handler's changes stay in its copy of the context


HEADER_NAMES = st.sampled_from([b"authorization", b"x-api-key", b"prefer", b"accept", b"x-a"])
HEADER_VALUES = st.binary(max_size=12).filter(lambda b: b"\r" not in b and b"\n" not in b)


@given(st.lists(st.tuples(HEADER_NAMES, HEADER_VALUES), max_size=8))
def test_headers_read_as_starlette_reads_them(raw):
    assert header_map({"headers": raw}) == dict(Headers(raw=raw))


JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


@given(JSON)
def test_json_answers_are_the_bytes_starlette_writes(value):
    assert JsonAnswer(value).body == JSONResponse(value).body


def test_json_answers_refuse_what_starlette_refuses():
    for value in (float("nan"), [float("inf")]):
        with pytest.raises(ValueError, match="JSON compliant"):
            JSONResponse(value)
        with pytest.raises(ValueError, match="JSON compliant"):
            JsonAnswer(value)
