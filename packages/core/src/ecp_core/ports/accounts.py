"""The accounts port: external identity bindings and the identity provider."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ecp_core.ports.api_keys import WithApiKeys
from ecp_core.ports.billing import WithSubscriptions
from ecp_core.ports.unit import Transaction

if TYPE_CHECKING:
    from ecp_core.accounts.model import IdentityBinding, ProviderTokens, VerifiedIdentity


class IdentityBindingRepository(Protocol):
    """Provider organizations bound to tenants: one binding per (provider, organization)."""

    def get(self, provider: str, organization_id: str) -> IdentityBinding | None:
        """The organization's binding, or None (it never logged in)."""
        ...

    def add(self, binding: IdentityBinding) -> None:
        """Bind an organization (Conflict when it is bound, or its tenant is bound to another)."""
        ...


class WithIdentityBindings(Protocol):
    """A unit of work that reaches the identity bindings."""

    @property
    def identity_bindings(self) -> IdentityBindingRepository:
        """The identity bindings."""
        ...


class AccountsUnit(Transaction, WithIdentityBindings, WithSubscriptions, WithApiKeys, Protocol):
    """What activation needs: the binding, the trial and the quickstart key in one transaction."""


class IdentityProvider(Protocol):
    """An OAuth 2 authorization-code provider with PKCE (S256) that issues signed access tokens.

    Refusals raise LoginRejected (a code or refresh token refused, a token that fails
    verification or names another organization) or UnknownRole; an unreachable or failing
    provider raises IdentityProviderUnavailable.
    """

    name: str
    """The provider's name in identity bindings (``workos``)."""

    def authorization_url(self, *, state: str, code_challenge: str) -> str:
        """Where to send the browser to log in; the provider redirects back with code and state."""
        ...

    def authenticate(self, *, code: str, code_verifier: str) -> ProviderTokens:
        """Exchange a callback's code, proven by the PKCE verifier, for tokens."""
        ...

    def refresh(self, *, refresh_token: str, organization_id: str) -> ProviderTokens:
        """New tokens for a (single-use) refresh token, in the session's organization."""
        ...

    def verify(self, access_token: str, *, organization_id: str | None) -> VerifiedIdentity:
        """Check the token's signature, issuer, expiry and organization; read its claims.

        ``organization_id`` is the organization the token must name (None: any, but one).
        """
        ...

    def logout_url(self, *, session_id: str, return_to: str) -> str:
        """Where to send the browser to end the provider's session, then come back."""
        ...


__all__ = [
    "AccountsUnit",
    "IdentityBindingRepository",
    "IdentityProvider",
    "WithIdentityBindings",
]
