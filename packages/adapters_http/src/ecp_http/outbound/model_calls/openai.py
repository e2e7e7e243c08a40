"""The OpenAI-compatible chat-completions wire format (OpenAI, vLLM, Ollama, a LiteLLM proxy).

``POST {base_url}/chat/completions`` with ``Authorization: Bearer <key>``; the answer's ``id``,
``choices[0].message.content``, ``choices[0].finish_reason`` and ``usage.prompt_tokens`` /
``usage.completion_tokens`` make the :class:`~ecp_core.models.model.ModelAnswer`. The base URL
includes the API's version segment (``https://api.openai.com/v1``, ``http://localhost:11434/v1``).
"""

from collections.abc import Mapping
from typing import Any

from ecp_core.models.model import CatalogEntry, ModelRequest
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.provider import HttpModels, RetryPolicy
from ecp_http.outbound.model_calls.wire import Malformed, Parsed, optional_text, tokens


class OpenAiWire:
    """Chat completions: the request body and the reading of the answer."""

    path = "/chat/completions"

    def headers(self, key: str | None) -> dict[str, str]:
        """A bearer key, when the server needs one."""
        return {} if key is None else {"Authorization": f"Bearer {key}"}

    def body(self, entry: CatalogEntry, request: ModelRequest) -> dict[str, Any]:
        """The messages as they are (system messages included), the token limit, no streaming."""
        body: dict[str, Any] = {
            "model": entry.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "max_tokens": request.max_tokens,
            "stream": False,
        }
        if request.temperature is not None:
            body["temperature"] = request.temperature
        return body

    def parse(self, answer: Any) -> Parsed:  # noqa: ANN401 - any JSON
        """The first choice's text and finish reason, the usage and the completion's id."""
        if not isinstance(answer, Mapping):
            msg = "the answer is not a JSON object"
            raise Malformed(msg)
        choices = answer.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
            msg = "the answer has no choices[0]"
            raise Malformed(msg)
        message = choices[0].get("message")
        if not isinstance(message, Mapping) or "content" not in message:
            msg = "choices[0] has no message content"
            raise Malformed(msg)
        input_tokens, output_tokens = tokens(
            answer.get("usage"), "prompt_tokens", "completion_tokens"
        )
        return Parsed(
            text=optional_text(message["content"], "choices[0].message.content") or "",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            request_id=optional_text(answer.get("id"), "id"),
            finish_reason=optional_text(choices[0].get("finish_reason"), "finish_reason"),
        )


class OpenAiModels(HttpModels):
    """The catalog's ``openai`` models over the chat-completions API."""

    def __init__(
        self,
        catalog: Mapping[str, CatalogEntry],
        secrets: ActionSecrets,
        *,
        policy: RetryPolicy | None = None,
    ) -> None:
        """As :class:`HttpModels`, in the chat-completions format."""
        super().__init__(catalog, secrets, OpenAiWire(), policy=policy)


__all__ = ["OpenAiModels", "OpenAiWire"]
