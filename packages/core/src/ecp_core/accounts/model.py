"""Hosted accounts: who the identity provider says signed in, and the tenant it is bound to.

The organization id in the provider's verified access token owns the tenant (spec
"Authentication" 5): one binding per (provider, organization), made at the first login and never
changed. E-mail addresses and request fields never choose a tenant.
"""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.api_keys.model import ApiKeyCreated
from ecp_core.constraints import AwareUtc, Text, checked
from ecp_core.types import ServiceRole

QUICKSTART_KEY_NAME = "Quickstart (analyst)"
"""The name of the Analyst key a first login creates."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class IdentityBinding:
    """An identity provider's organization bound to one local tenant, once and for good."""

    provider: Annotated[str, Text(1, 64)]
    organization_id: Annotated[str, Text(1, 512)]
    tenant_id: Annotated[str, Text(1, 512)]
    created_at: Annotated[datetime, AwareUtc()]


@attrs.frozen(kw_only=True)
class ProviderTokens:
    """What the provider hands over for a code or a refresh token (not yet verified)."""

    access_token: str = attrs.field(repr=False)
    refresh_token: str = attrs.field(repr=False)
    organization_id: str | None = None
    """The organization the provider's answer names (the access token must name the same)."""


@attrs.frozen(kw_only=True)
class VerifiedIdentity:
    """The claims of a verified access token: signature, issuer, expiry and organization checked.

    ``roles`` are the service roles the token's role slugs name (unknown slugs were refused).
    """

    provider: str
    organization_id: str
    user_id: str
    roles: tuple[ServiceRole, ...]
    expires_at: datetime
    session_id: str | None = None


@attrs.frozen(kw_only=True)
class SignIn:
    """The outcome of a login: the tenant, and whether this login activated it.

    ``quickstart_key`` carries the Analyst key's plaintext only in the answer to the activating
    login; it is stored nowhere and never shown again.
    """

    tenant_id: str
    identity: VerifiedIdentity
    activated: bool
    quickstart_key: ApiKeyCreated | None = None


__all__ = [
    "QUICKSTART_KEY_NAME",
    "IdentityBinding",
    "ProviderTokens",
    "SignIn",
    "VerifiedIdentity",
]
