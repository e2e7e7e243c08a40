"""Hosted accounts: an identity provider organization bound to a tenant, and its activation."""

from ecp_core.accounts.model import (
    QUICKSTART_KEY_NAME,
    IdentityBinding,
    ProviderTokens,
    SignIn,
    VerifiedIdentity,
)
from ecp_core.accounts.roles import PROVIDER_ROLES, provider_roles
from ecp_core.accounts.service import TENANT_PREFIX, AccountService

__all__ = [
    "PROVIDER_ROLES",
    "QUICKSTART_KEY_NAME",
    "TENANT_PREFIX",
    "AccountService",
    "IdentityBinding",
    "ProviderTokens",
    "SignIn",
    "VerifiedIdentity",
    "provider_roles",
]
