"""Anthropic's Messages API wire format.

``POST {base_url}/v1/messages`` with ``x-api-key`` and ``anthropic-version``; system messages go
to the top-level ``system`` field, the others stay in order. The answer's ``id``, its ``content``
blocks of type ``text`` (joined), ``stop_reason`` and ``usage.input_tokens`` /
``usage.output_tokens`` make the :class:`~ecp_core.models.model.ModelAnswer`. The base URL has
no version segment (``https://api.anthropic.com``).
"""

from collections.abc import Mapping
from typing import Any

from ecp_core.models.model import CatalogEntry, ModelRequest
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.provider import HttpModels, RetryPolicy
from ecp_http.outbound.model_calls.wire import Malformed, Parsed, optional_text, tokens

API_VERSION = "2023-06-01"
"""The ``anthropic-version`` header the adapter speaks."""


class AnthropicWire:
    """Messages: the request body and the reading of the answer."""

    path = "/v1/messages"

    def headers(self, key: str | None) -> dict[str, str]:
        """The API version, and the key when there is one."""
        headers = {"anthropic-version": API_VERSION}
        if key is not None:
            headers["x-api-key"] = key
        return headers

    def body(self, entry: CatalogEntry, request: ModelRequest) -> dict[str, Any]:
        """System messages joined into ``system``; user and assistant messages in order."""
        system = [m.content for m in request.messages if m.role == "system"]
        body: dict[str, Any] = {
            "model": entry.model,
            "max_tokens": request.max_tokens,
            "messages": [
                {"role": m.role, "content": m.content}
                for m in request.messages
                if m.role != "system"
            ],
        }
        if system:
            body["system"] = "\n\n".join(system)
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def parse(self, answer: Any) -> Parsed:  # noqa: ANN401 - any JSON
        """The text blocks joined, the usage, the message id and the stop reason."""
        if not isinstance(answer, Mapping):
            msg = "the answer is not a JSON object"
            raise Malformed(msg)
        blocks = answer.get("content")
        if not isinstance(blocks, list) or not all(isinstance(b, Mapping) for b in blocks):
            msg = "the answer has no content blocks"
            raise Malformed(msg)
        texts = []
        for block in blocks:
            if block.get("type") == "text":
                text = block.get("text")
                if not isinstance(text, str):
                    msg = "a text block has no text"
                    raise Malformed(msg)
                texts.append(text)
        input_tokens, output_tokens = tokens(answer.get("usage"), "input_tokens", "output_tokens")
        return Parsed(
            text="".join(texts),
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            request_id=optional_text(answer.get("id"), "id"),
            finish_reason=optional_text(answer.get("stop_reason"), "stop_reason"),
        )


class AnthropicModels(HttpModels):
    """The catalog's ``anthropic`` models over the Messages API."""

    def __init__(
        self,
        catalog: Mapping[str, CatalogEntry],
        secrets: ActionSecrets,
        *,
        policy: RetryPolicy | None = None,
    ) -> None:
        """As :class:`HttpModels`, in the Messages format."""
        super().__init__(catalog, secrets, AnthropicWire(), policy=policy)


__all__ = ["API_VERSION", "AnthropicModels", "AnthropicWire"]
