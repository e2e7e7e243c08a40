"""Model calls: the OpenAI-compatible and Anthropic adapters, ``model_call``.

Modules (import them directly; this package re-exports nothing). The catalog file
(``ECP_MODEL_CATALOG``) is read at start-up with the settings, by
:mod:`ecp_http.config.model_catalog`, without loading the adapters.

- :mod:`.provider` the retrying HTTP provider and :class:`~.provider.CatalogModels`;
- :mod:`.openai`, :mod:`.anthropic` the two wire formats;
- :mod:`.providers` the server's provider built from the catalog;
- :mod:`.model_call` the ``model_call`` built-in action;
- :mod:`.standin` a loopback stand-in provider for tests (ADR 0037).
"""
