"""Starlette HTTP adapter, CLI and composition root for ECP.

A skeleton for now: later issues fill it in behind the ports of `ecp_core`.
"""

__all__: list[str] = []
