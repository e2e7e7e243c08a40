"""The server's model provider, built from the catalog: one adapter per provider kind."""

from collections.abc import Mapping

from ecp_core.errors import NotFound
from ecp_core.models.model import CatalogEntry, ModelAnswer, ModelRequest, ProviderKind
from ecp_http.config.action_secrets import ActionSecrets
from ecp_http.outbound.model_calls.anthropic import AnthropicModels
from ecp_http.outbound.model_calls.openai import OpenAiModels
from ecp_http.outbound.model_calls.provider import HttpModels, RetryPolicy


class CatalogModels:
    """Routes each model ref to the adapter of its provider kind (the server's ModelProvider)."""

    def __init__(self, adapters: Mapping[ProviderKind, HttpModels]) -> None:
        """One adapter per provider kind the catalog uses."""
        self._by_ref = {ref: adapter for adapter in adapters.values() for ref in adapter.catalog}
        self._catalog = {
            ref: entry for adapter in adapters.values() for ref, entry in adapter.catalog.items()
        }

    def __repr__(self) -> str:
        """Names the models, never a key."""
        return f"CatalogModels(models={sorted(self._catalog)!r})"

    @property
    def catalog(self) -> Mapping[str, CatalogEntry]:
        """Every model of the catalog, by model ref."""
        return self._catalog

    def call(self, request: ModelRequest, *, timeout_seconds: float) -> ModelAnswer:
        """Ask the model through its provider's adapter; NotFound for an unknown model ref."""
        adapter = self._by_ref.get(request.model_ref)
        if adapter is None:
            raise NotFound(f"model {request.model_ref!r} is not in the catalog")
        return adapter.call(request, timeout_seconds=timeout_seconds)


ADAPTERS: Mapping[ProviderKind, type[OpenAiModels] | type[AnthropicModels]] = {
    ProviderKind.OPENAI: OpenAiModels,
    ProviderKind.ANTHROPIC: AnthropicModels,
}
"""The adapter class that speaks each provider kind's protocol."""


def catalog_models(
    catalog: Mapping[str, CatalogEntry],
    secrets: ActionSecrets,
    *,
    policy: RetryPolicy | None = None,
) -> CatalogModels:
    """A provider routing each of ``catalog``'s models to the adapter of its kind."""
    adapters: dict[ProviderKind, HttpModels] = {}
    for kind, adapter in ADAPTERS.items():
        models = {ref: entry for ref, entry in catalog.items() if entry.provider is kind}
        if models:
            adapters[kind] = adapter(models, secrets, policy=policy)
    return CatalogModels(adapters)


__all__ = ["ADAPTERS", "CatalogModels", "catalog_models"]
