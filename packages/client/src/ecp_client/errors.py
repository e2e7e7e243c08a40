"""What the client raises: ``EcpError`` for a problem the server answered, ``ConnectionFailed``.

Every problem (RFC 9457) becomes the ``EcpError`` subclass named by its code
(:mod:`ecp_client.problems`, generated), carrying ``status``, ``code``, ``request_id`` (the
server's ``X-Request-Id``, which its log lines carry) and the field errors.
"""

from typing import Any

import attrs

__all__ = ["ClientError", "ConnectionFailed", "EcpError", "FieldError"]


@attrs.frozen
class FieldError:
    """One failing field: where it is (keys and list indexes) and what is wrong with it."""

    loc: tuple[str | int, ...]
    msg: str


class ClientError(Exception):
    """The root of what the client raises."""


class ConnectionFailed(ClientError):
    """No answer: the server could not be reached, or the connection broke or timed out."""


class EcpError(ClientError):
    """A problem the server answered; the subclass is named by its ``code``."""

    code = "ecp_error"
    """The problem's stable snake_case code."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        code: str | None = None,
        request_id: str | None = None,
        errors: tuple[FieldError, ...] = (),
        problem: dict[str, Any] | None = None,
    ) -> None:
        """A problem of ``status``; ``code`` defaults to the class's."""
        lines = [f"HTTP {status} {code or self.code}: {detail}"]
        lines += [f"  {'.'.join(map(str, error.loc)) or '(body)'}: {error.msg}" for error in errors]
        super().__init__("\n".join(lines))
        self.status = status
        self.detail = detail
        if code is not None:
            self.code = code
        self.request_id = request_id
        self.errors = errors
        self.problem = problem or {}
