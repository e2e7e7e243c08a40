"""Model calls: the catalog file, the OpenAI-compatible and Anthropic adapters, ``model_call``.

Modules (import them directly; this package re-exports nothing, so that the settings can read
the catalog without loading the adapters):

- :mod:`.catalog_file` reads ``ECP_MODEL_CATALOG`` at start-up;
- :mod:`.provider` the retrying HTTP provider and :class:`~.provider.CatalogModels`;
- :mod:`.openai`, :mod:`.anthropic` the two wire formats;
- :mod:`.providers` the server's provider built from the catalog;
- :mod:`.model_call` the ``model_call`` built-in action;
- :mod:`.standin` a loopback stand-in provider for tests (ADR 0037).
"""
