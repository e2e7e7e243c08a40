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

__all__ = ["UNKNOWN_VERSION", "version"]

UNKNOWN_VERSION = "0+unknown"
"""The version said by a source tree that was never installed (a valid PEP 440 version)."""


def version() -> str:
    """This release's version: the installed ``ecp-http``'s, which every package shares.

    ``ecp --version``, the OpenAPI document's ``info.version`` and the webhooks' User-Agent all
    say this; the packages' ``pyproject.toml`` files and CHANGELOG.md agree with it (ADR 0096).
    """
    from importlib.metadata import PackageNotFoundError  # noqa: PLC0415 - looked up only when asked
    from importlib.metadata import version as installed  # noqa: PLC0415

    try:
        return installed("ecp-http")
    except PackageNotFoundError:
        return UNKNOWN_VERSION
