"""The HTTP model provider: one call with a per-try timeout, retried with jittered backoff.

:class:`HttpModels` implements :class:`~ecp_core.ports.models.ModelProvider` for one wire format
(:mod:`.openai`, :mod:`.anthropic`). Retries use ``stamina`` (ADR 0037): 429, 5xx and failed
connections are tried again with exponential backoff and jitter; a 429's ``Retry-After`` is
waited for when it is at most :attr:`RetryPolicy.max_retry_after` seconds and ends the call at
once otherwise; timeouts, other 4xx and malformed answers are not retried (a request that timed
out may have been served and billed). The API key is looked up by name at each call and never
appears in an error, a log line or a repr.
"""

import time
from collections.abc import Callable, Mapping
from typing import Any

import attrs
import httpx
import stamina

from ecp_core.errors import ModelCallFailed, NotFound
from ecp_core.json_text import parse_json_text
from ecp_core.models.model import (
    CallFailure,
    CatalogEntry,
    ModelAnswer,
    ModelRequest,
    TokenUsage,
)
from ecp_http.config.action_secrets import ActionSecrets, SecretUnavailable, redacted
from ecp_http.outbound.model_calls.wire import Malformed, Parsed, WireFormat

MAX_ANSWER_BYTES = 8 * 1024 * 1024
"""A provider's answer larger than this is malformed (read no further)."""


@attrs.frozen(kw_only=True)
class RetryPolicy:
    """How often and how far apart a failing call is tried again."""

    attempts: int = 3
    """Tries in all, the first included."""
    wait_initial: float = 0.5
    wait_max: float = 8.0
    wait_jitter: float = 1.0
    max_retry_after: float = 30.0
    """A 429 asking to wait longer than this ends the call as ``rate_limited`` at once."""


class _TryFailed(Exception):
    """One try failed; ``retry_after`` is the wait a 429 asked for, if it named one."""

    def __init__(
        self, failure: CallFailure, detail: str, *, retry_after: float | None = None
    ) -> None:
        super().__init__(f"{failure}: {detail}")
        self.failure = failure
        self.detail = detail
        self.retry_after = retry_after


RETRIED = frozenset({CallFailure.RATE_LIMITED, CallFailure.SERVER_ERROR, CallFailure.UNREACHABLE})
"""Failures worth another try; a timeout is not (the provider may have done and billed it)."""


def _retry_hook(policy: RetryPolicy) -> Callable[[Exception], bool | float]:
    """The backoff hook for stamina: whether to retry, or the wait a 429 asked for."""

    def retry(exc: Exception) -> bool | float:
        if not isinstance(exc, _TryFailed) or exc.failure not in RETRIED:
            return False
        if exc.retry_after is None:
            return True
        return exc.retry_after if exc.retry_after <= policy.max_retry_after else False

    return retry


def retry_after(value: str | None) -> float | None:
    """A ``Retry-After`` header's delay in seconds (delta-seconds only; a date is ignored)."""
    if value is None or not value.strip().isdigit():
        return None
    return float(value.strip())


class HttpModels:
    """A :class:`~ecp_core.ports.models.ModelProvider` over httpx for one wire format."""

    def __init__(
        self,
        catalog: Mapping[str, CatalogEntry],
        secrets: ActionSecrets,
        wire: WireFormat,
        *,
        policy: RetryPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Call ``catalog``'s models in ``wire``'s protocol, with keys from ``secrets``."""
        self._catalog = dict(catalog)
        self._secrets = secrets
        self._wire = wire
        self._policy = policy or RetryPolicy()
        self._clock = clock

    def __repr__(self) -> str:
        """Names the models, never a key."""
        return f"{type(self).__name__}(models={sorted(self._catalog)!r})"

    @property
    def catalog(self) -> Mapping[str, CatalogEntry]:
        """The models this provider may call, by model ref."""
        return self._catalog

    def call(self, request: ModelRequest, *, timeout_seconds: float) -> ModelAnswer:
        """Ask the model; ModelCallFailed (after retries on 429, 5xx, lost connections)."""
        entry = self._catalog.get(request.model_ref)
        if entry is None:
            raise NotFound(f"model {request.model_ref!r} is not in the catalog")
        key = self._key(entry)
        secrets = [key] if key else []
        body = self._wire.body(entry, request)
        headers = self._wire.headers(key)
        url = entry.base_url + self._wire.path
        policy = self._policy
        tries = 0
        try:
            for attempt in stamina.retry_context(
                on=_retry_hook(policy),
                attempts=policy.attempts,
                timeout=None,
                wait_initial=policy.wait_initial,
                wait_max=policy.wait_max,
                wait_jitter=policy.wait_jitter,
            ):
                with attempt:
                    tries += 1
                    parsed = self._try(url, headers, body, timeout_seconds)
                    usage = TokenUsage(
                        input_tokens=parsed.input_tokens, output_tokens=parsed.output_tokens
                    )
                    return ModelAnswer(
                        model_ref=entry.model_ref,
                        text=parsed.text,
                        usage=usage,
                        cost_usd=entry.cost(usage),
                        provider_request_id=parsed.request_id,
                        finish_reason=parsed.finish_reason,
                    )
        except _TryFailed as exc:
            detail = redacted(exc.detail, secrets)
            plural = "try" if tries == 1 else "tries"
            raise ModelCallFailed(
                f"model {entry.model_ref!r}: {detail} ({tries} {plural})",
                failure=exc.failure,
                attempts=tries,
            ) from None
        raise AssertionError  # pragma: no cover - stamina either returns or raises

    def _key(self, entry: CatalogEntry) -> str | None:
        if entry.secret_name is None:
            return None
        try:
            return self._secrets.value(entry.secret_name)
        except SecretUnavailable as exc:
            raise ModelCallFailed(
                f"model {entry.model_ref!r}: {exc}", failure=CallFailure.REFUSED, attempts=0
            ) from None

    def _try(
        self, url: str, headers: dict[str, str], body: dict[str, Any], timeout_seconds: float
    ) -> Parsed:
        deadline = self._clock() + timeout_seconds
        try:
            with (
                httpx.Client(timeout=timeout_seconds, follow_redirects=False) as client,
                client.stream("POST", url, json=body, headers=headers) as response,
            ):
                status = response.status_code
                if status == 429:  # noqa: PLR2004
                    wait = retry_after(response.headers.get("retry-after"))
                    raise _TryFailed(
                        CallFailure.RATE_LIMITED, "the provider answered 429", retry_after=wait
                    )
                if status >= 500:  # noqa: PLR2004
                    raise _TryFailed(CallFailure.SERVER_ERROR, f"the provider answered {status}")
                if status != 200:  # noqa: PLR2004
                    raise _TryFailed(CallFailure.REFUSED, f"the provider answered {status}")
                raw = self._read(response, deadline)
                request_id = response.headers.get("request-id") or response.headers.get(
                    "x-request-id"
                )
        except httpx.TimeoutException:
            raise _TryFailed(
                CallFailure.TIMEOUT, f"no answer within {timeout_seconds:g} seconds"
            ) from None
        except httpx.HTTPError as exc:
            raise _TryFailed(CallFailure.UNREACHABLE, f"{type(exc).__name__}") from None
        try:
            parsed = self._wire.parse(parse_json_text(raw))
        except Malformed as exc:
            raise _TryFailed(CallFailure.MALFORMED, str(exc)) from None
        except Exception:  # noqa: BLE001 - any unreadable body is malformed, never a 500
            raise _TryFailed(CallFailure.MALFORMED, "the answer is not JSON") from None
        if parsed.request_id is None and request_id:
            parsed = attrs.evolve(parsed, request_id=request_id[:256])
        return parsed

    def _read(self, response: httpx.Response, deadline: float) -> bytes:
        chunks: list[bytes] = []
        read = 0
        for chunk in response.iter_bytes():
            read += len(chunk)
            if read > MAX_ANSWER_BYTES:
                raise _TryFailed(
                    CallFailure.MALFORMED, f"the answer is over {MAX_ANSWER_BYTES} bytes"
                )
            if self._clock() > deadline:
                raise httpx.ReadTimeout("the try's deadline passed")
            chunks.append(chunk)
        return b"".join(chunks)


__all__ = ["MAX_ANSWER_BYTES", "RETRIED", "HttpModels", "RetryPolicy", "retry_after"]
