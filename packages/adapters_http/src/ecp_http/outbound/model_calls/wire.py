"""What a provider protocol is: where a request goes, its body, and the reading of the answer.

:mod:`.openai` and :mod:`.anthropic` implement :class:`WireFormat`; the readers here turn a bad
answer into :class:`Malformed` (the call then fails ``malformed``, never with a zero cost).
"""

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from ecp_core.models.catalog import MAX_TOKENS
from ecp_core.models.model import CatalogEntry, ModelRequest


@attrs.frozen(kw_only=True)
class Parsed:
    """What a wire format read from a provider's answer."""

    text: str
    input_tokens: int
    output_tokens: int
    request_id: str | None
    finish_reason: str | None


class Malformed(ValueError):
    """A provider's answer does not have the shape of its wire format."""


class WireFormat(Protocol):
    """One provider protocol: where to send a request, how, and how to read the answer."""

    path: str
    """Appended to the catalog's base URL."""

    def headers(self, key: str | None) -> dict[str, str]:
        """The headers of a request authenticated with ``key`` (None: no key)."""
        ...

    def body(self, entry: CatalogEntry, request: ModelRequest) -> dict[str, Any]:
        """The JSON body asking ``entry``'s model."""
        ...

    def parse(self, answer: Any) -> Parsed:  # noqa: ANN401 - any JSON
        """The answer's text, usage, id and finish reason; Malformed when it lacks them."""
        ...


def _usage_count(value: object, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        msg = f"usage.{name} is not a token count"
        raise Malformed(msg)
    return value


def tokens(usage: object, input_name: str, output_name: str) -> tuple[int, int]:
    """The input and output token counts of a usage object; Malformed when either is missing."""
    if not isinstance(usage, Mapping):
        msg = "the answer has no usage object"
        raise Malformed(msg)
    return (
        _usage_count(usage.get(input_name), input_name),
        _usage_count(usage.get(output_name), output_name),
    )


def optional_text(value: object, name: str) -> str | None:
    """A string field that may be absent or null; Malformed when it is something else."""
    if value is None:
        return None
    if not isinstance(value, str):
        msg = f"{name} is not text"
        raise Malformed(msg)
    return value


__all__ = ["Malformed", "Parsed", "WireFormat", "optional_text", "tokens"]
