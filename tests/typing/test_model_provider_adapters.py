"""The model-provider adapters are the port: a drift between them fails type-checking."""

from ecp_core.ports.models import ModelProvider
from ecp_http.outbound.model_calls.anthropic import AnthropicModels
from ecp_http.outbound.model_calls.openai import OpenAiModels
from ecp_http.outbound.model_calls.provider import HttpModels
from ecp_http.outbound.model_calls.providers import CatalogModels


def http_models(x: HttpModels) -> ModelProvider:
    """HttpModels is a ModelProvider."""
    return x


def openai_models(x: OpenAiModels) -> ModelProvider:
    """OpenAiModels is a ModelProvider."""
    return x


def anthropic_models(x: AnthropicModels) -> ModelProvider:
    """AnthropicModels is a ModelProvider."""
    return x


def catalog_models(x: CatalogModels) -> ModelProvider:
    """CatalogModels is a ModelProvider (the server's, routing by model ref)."""
    return x
