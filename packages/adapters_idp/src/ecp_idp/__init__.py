"""Identity-provider adapter for hosted ECP: WorkOS AuthKit (authorization code with PKCE S256).

:class:`WorkOSAuthKit` implements :class:`ecp_core.ports.accounts.IdentityProvider`;
:mod:`ecp_idp.standin` is a loopback stand-in of the provider for tests and local runs.
"""

from ecp_idp.jwks import JwksCache
from ecp_idp.pkce import challenge_of, new_verifier, verifies
from ecp_idp.workos import PROVIDER, WorkOSAuthKit

__all__ = ["PROVIDER", "JwksCache", "WorkOSAuthKit", "challenge_of", "new_verifier", "verifies"]
