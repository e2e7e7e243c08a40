"""What the sync and the async client share: calls, pages, answers, errors and retries.

A :class:`Call` says what to ask and how to read the answer; :func:`outcome` reads an answer
(or raises the problem's :class:`~ecp_client.errors.EcpError`); :class:`Retrying` says whether
and when to try again. Neither does I/O: ``Client`` and ``AsyncClient`` only send and sleep.
"""

import email.utils
import time
import urllib.parse
import uuid
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

import attrs

from ecp_client._convert import dumps, loads, structure
from ecp_client.errors import EcpError, FieldError
from ecp_client.problems import BY_CODE

T = TypeVar("T")
M = TypeVar("M")

REQUEST_ID_HEADER = "X-Request-Id"
IDEMPOTENCY_HEADER = "Idempotency-Key"
RETRY_STATUSES = frozenset({429, 503})
SAFE_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE"})
REQUEST_ID_URN = "urn:ecp:request:"


@attrs.frozen(kw_only=True)
class Answer:
    """An HTTP answer as the client reads it."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    links: Mapping[str | None, Mapping[str, str]] = attrs.Factory(dict)


@attrs.frozen(kw_only=True)
class Page(Generic[T]):
    """One page of a listing and the cursor of the next (None on the last)."""

    items: list[T]
    next_cursor: str | None


@attrs.frozen(kw_only=True)
class Call(Generic[T]):
    """One API call: method, path, query, JSON body, and how its answer is read."""

    method: str
    path: str
    read: Callable[[Answer], T]
    params: Mapping[str, str | int] = attrs.Factory(dict)
    body: object = None
    idempotency_key: str | None = None
    idempotent: bool = False
    """Whether a try may be repeated after a broken connection (the server dedupes it)."""
    timeout: float | None = None
    extra_headers: Mapping[str, str] = attrs.Factory(dict)

    def with_params(self, **params: str | int) -> "Call[T]":
        """The same call with more query parameters."""
        return attrs.evolve(self, params={**self.params, **params})

    @property
    def repeatable(self) -> bool:
        """Whether a broken try may be sent again: a safe method, or a deduplicated POST."""
        return self.method in SAFE_METHODS or self.idempotent

    def content(self) -> bytes | None:
        """The body as JSON text, or None when there is none."""
        return None if self.body is None else dumps(self.body)

    def headers(self, key: str | None) -> dict[str, str]:
        """The call's own headers: the body's type and the idempotency key of a POST."""
        headers = {"Accept": "application/json", **self.extra_headers}
        if self.body is not None:
            headers["Content-Type"] = "application/json"
        if key is not None:
            headers[IDEMPOTENCY_HEADER] = key
        return headers

    def key(self) -> str | None:
        """The one idempotency key every try of this call sends (POST only)."""
        if self.method != "POST":
            return None
        return self.idempotency_key or str(uuid.uuid4())


def credentials(api_key: str | None, token: str | None) -> dict[str, str]:
    """``X-API-Key`` for a project API key, or ``Authorization: Bearer`` for a JWT."""
    if api_key is not None and token is not None:
        raise ValueError("give api_key or token, not both")
    if api_key is not None:
        return {"X-API-Key": api_key}
    if token is not None:
        return {"Authorization": f"Bearer {token}"}
    return {}


def quoted(template: str, *parts: str) -> str:
    """``template`` with each ``{}`` filled by one URL-quoted path segment."""
    return template.format(*(urllib.parse.quote(part, safe="") for part in parts))


def model(kind: type[M]) -> Callable[[Answer], M]:
    """A reader that structures the JSON answer as ``kind``."""

    def read(answer: Answer) -> M:
        return structure(loads(answer.content), kind)

    return read


def nothing(_: Answer) -> None:
    """A reader of an answer without a body."""


def page(kind: type[M], items: Callable[[M], list[T]]) -> Callable[[Answer], Page[T]]:
    """A reader of one page: ``items`` of the ``kind`` answer, and the next page's cursor.

    The cursor is the body's ``next_cursor`` when it has one, else the ``Link`` rel=next's.
    """

    def read(answer: Answer) -> Page[T]:
        body = model(kind)(answer)
        cursor: str | None = getattr(body, "next_cursor", None)
        if cursor is None and (url := answer.links.get("next", {}).get("url")):
            query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
            cursor = query.get("cursor", [None])[0]
        return Page(items=items(body), next_cursor=cursor)

    return read


def request_id(answer: Answer, problem: Mapping[str, Any]) -> str | None:
    """The server's request id: its header, else the problem's ``instance``."""
    if found := answer.headers.get(REQUEST_ID_HEADER.lower()) or answer.headers.get(
        REQUEST_ID_HEADER
    ):
        return found
    instance = problem.get("instance")
    if isinstance(instance, str) and instance.startswith(REQUEST_ID_URN):
        return instance.removeprefix(REQUEST_ID_URN)
    return None


def error(answer: Answer) -> EcpError:
    """The error of a refusal: the subclass named by the problem's code (``EcpError`` if new)."""
    try:
        problem = loads(answer.content)
    except ValueError:
        problem = None
    if not isinstance(problem, dict) or not isinstance(problem.get("code"), str):
        text = answer.content[:500].decode("utf-8", "replace")
        return BY_CODE["http_error"](answer.status, text, request_id=request_id(answer, {}))
    code: str = problem["code"]
    errors = tuple(
        FieldError(loc=tuple(item.get("loc", ())), msg=str(item.get("msg", "")))
        for item in problem.get("errors") or ()
        if isinstance(item, dict)
    )
    kind = BY_CODE.get(code, EcpError)
    return kind(
        answer.status,
        str(problem.get("detail") or problem.get("title") or ""),
        code=code,
        request_id=request_id(answer, problem),
        errors=errors,
        problem=problem,
    )


def outcome(call: Call[T], answer: Answer) -> T:
    """What ``call`` returns for ``answer``; a problem raises its :class:`EcpError`."""
    if answer.status >= 400:  # noqa: PLR2004 - the first refusal status
        raise error(answer)
    return call.read(answer)


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How 503 and 429 answers (and broken connections) are tried again.

    A ``Retry-After`` is honoured up to ``max_wait`` seconds; without one the waits double from
    ``backoff``. No try starts after ``deadline`` seconds from the first, nor past ``attempts``.
    """

    attempts: int = 10
    max_wait: float = 30.0
    deadline: float = 120.0
    backoff: float = 0.5


def retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """A ``Retry-After`` value in seconds (delta-seconds or an HTTP date), or None."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Retrying:
    """The tries of one call: after each answer or failure, the wait before the next or None."""

    def __init__(self, policy: RetryPolicy, clock: Callable[[], float] = time.monotonic) -> None:
        """Start counting tries and time under ``policy``."""
        self._policy = policy
        self._clock = clock
        self._started = clock()
        self._tries = 0

    def _next(self, wait: float | None) -> float | None:
        self._tries += 1
        policy = self._policy
        if wait is None:
            wait = policy.backoff * 2 ** (self._tries - 1)
        wait = min(wait, policy.max_wait)
        if self._tries >= policy.attempts:
            return None
        if self._clock() + wait - self._started > policy.deadline:
            return None
        return wait

    def after_answer(self, answer: Answer) -> float | None:
        """The wait before trying again after ``answer``, or None to keep it."""
        if answer.status not in RETRY_STATUSES:
            return None
        return self._next(retry_after(answer.headers.get("retry-after")))

    def after_failure(self, call: Call[Any], *, sent: bool) -> float | None:
        """The wait before trying again after no answer came, or None to give up.

        A request that never left (``sent`` False) is always tried again; one that may have
        reached the server only when ``call`` may be repeated.
        """
        if sent and not call.repeatable:
            return None
        return self._next(None)
