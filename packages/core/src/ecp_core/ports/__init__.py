"""Ports: what the core needs from the outside world, as ``typing.Protocol``s.

One leaf module per area (``ports.runs``, ``ports.evidence``, ...) plus ``ports.system`` for
time, identifiers, signing and outbound HTTP. A port module imports only models. Each area's
use cases name the narrow unit of work they need (``RegistryUnit``, ``RunsUnit``, ...); the full
:class:`~ecp_core.ports.unit_of_work.UnitOfWork` that adapters implement satisfies every one.
``ecp_core.memory`` and ``ecp_postgres`` implement them; ``ecp_core.testing`` holds the
conformance suites both must pass.
"""
