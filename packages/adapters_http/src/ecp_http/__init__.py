"""Starlette HTTP adapter, CLI and composition root for ECP.

Its sub-packages, by kind; each imports only those listed below it (the import-linter contracts
in the root pyproject.toml):

- ``cli``: the ``ecp`` command line; it reaches the server only through ``startup``.
- ``startup``: the composition root, the app it wires and ``ecp serve`` in one or N processes.
- ``openapi``: the API described: the OpenAPI document, its examples, the docs/api pages.
- ``background``: the server's background work: run dispatch, sweeps, wake-ups, backtests.
- ``server``: the HTTP surface: routing, handlers, auth, sessions, problems, pages, and what the
  running server tells its operators (``server.observability``).
- ``outbound``: every call ECP makes out, through one address guard: webhooks, actions, models.
- ``wire``: the adapter's own wire models and their JSON Schema.
- ``config``: the settings, read once from the environment.
- ``logs``: structured logs, one JSON object per line.
"""

__all__: list[str] = []
