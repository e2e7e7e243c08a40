"""The stand-in provider's scripted steps and its answers in both wire formats (:mod:`.standin`)."""

from collections.abc import Callable
from typing import Any

import attrs

OPENAI_PATH = "/v1/chat/completions"
ANTHROPIC_PATH = "/v1/messages"


@attrs.frozen
class Reply:
    """A scripted answer: its text and the tokens it reports."""

    text: str = "ok"
    input_tokens: int = 10
    output_tokens: int = 5
    finish_reason: str | None = None
    """None: ``stop`` (OpenAI) or ``end_turn`` (Anthropic)."""


DEFAULT_REPLY = Reply()


@attrs.frozen
class Fail:
    """Answer ``status`` (with ``Retry-After`` when given) and a small JSON error body."""

    status: int
    retry_after: float | None = None


@attrs.frozen
class Hang:
    """Wait ``seconds`` (or until the stand-in stops), then answer with the default reply."""

    seconds: float


@attrs.frozen
class Raw:
    """Answer 200 with this body as it is (malformed JSON, a wrong shape)."""

    body: bytes


Step = Reply | Fail | Hang | Raw
Responder = Callable[[dict[str, Any]], Step]


@attrs.frozen
class Received:
    """One call the stand-in got: its path, headers (lowercase names) and JSON body."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def answer_body(path: str, model: str, reply: Reply, number: int) -> dict[str, Any]:
    """A successful answer in the wire format of ``path``."""
    if path == ANTHROPIC_PATH:
        return {
            "id": f"msg_standin_{number}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": reply.text}],
            "stop_reason": reply.finish_reason or "end_turn",
            "usage": {"input_tokens": reply.input_tokens, "output_tokens": reply.output_tokens},
        }
    return {
        "id": f"chatcmpl-standin-{number}",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply.text},
                "finish_reason": reply.finish_reason or "stop",
            }
        ],
        "usage": {
            "prompt_tokens": reply.input_tokens,
            "completion_tokens": reply.output_tokens,
            "total_tokens": reply.input_tokens + reply.output_tokens,
        },
    }


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
    "Step",
    "answer_body",
]
