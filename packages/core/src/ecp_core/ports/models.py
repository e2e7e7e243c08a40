"""The model-provider port: one call to a chat model, with a timeout, priced from the catalog."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Mapping

    from ecp_core.models.model import CatalogEntry, ModelAnswer, ModelRequest


class ModelProvider(Protocol):
    """Calls the catalog's models (adapters: OpenAI-compatible servers, Anthropic)."""

    @property
    def catalog(self) -> Mapping[str, CatalogEntry]:
        """The models this provider may call, by model ref."""
        ...

    def call(self, request: ModelRequest, *, timeout_seconds: float) -> ModelAnswer:
        """Ask the model; ModelCallFailed (after retries on 429 and 5xx) when that fails.

        Each try is bounded by ``timeout_seconds``; an unknown model ref is NotFound.
        """
        ...


__all__ = ["ModelProvider"]
