"""Identity-provider adapter for hosted ECP (OAuth2 authorization code with PKCE).

A skeleton for now: later issues fill it in behind the ports of `ecp_core`.
"""

__all__: list[str] = []
