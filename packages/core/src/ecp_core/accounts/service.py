"""Signing in with the identity provider: bind the organization once, activate it once.

A first login of an organization creates, in one transaction, the binding to a new opaque
tenant, one local 14-day trial and one Analyst quickstart key (spec "Subscription and account",
"Hosted flow"). Every later login of that organization finds the binding and creates nothing.
"""

import secrets
from collections.abc import Callable
from types import TracebackType
from typing import Self

from ecp_core.accounts.model import QUICKSTART_KEY_NAME, IdentityBinding, SignIn, VerifiedIdentity
from ecp_core.api_keys.keys import RandomBytes
from ecp_core.api_keys.model import ApiKeyCreated, CreateApiKeyRequest
from ecp_core.api_keys.service import ApiKeyService
from ecp_core.billing.model import trial_subscription
from ecp_core.errors import Conflict, LoginRejected
from ecp_core.identity import ActorIdentity
from ecp_core.ports.accounts import AccountsUnit
from ecp_core.ports.api_keys import ApiKeyRepository
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.types import AuthMethod, ServiceRole

TENANT_PREFIX = "tn_"
"""Tenants made by activation: ``tn_`` and a fresh opaque id (nothing of the organization's)."""


class _Enclosed:
    """A unit over the enclosing transaction: entering, committing and leaving do nothing.

    It lets the API key use case add its key inside activation's transaction, which commits or
    rolls back everything together.
    """

    def __init__(self, api_keys: ApiKeyRepository) -> None:
        self._api_keys = api_keys

    @property
    def api_keys(self) -> ApiKeyRepository:
        return self._api_keys

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None

    def commit(self) -> None:
        return None


class AccountService:
    """Binds identity provider organizations to tenants and activates them on the first login."""

    def __init__(
        self,
        uow: Callable[[], AccountsUnit],
        clock: Clock,
        ids: IdFactory,
        random_bytes: RandomBytes = secrets.token_bytes,
    ) -> None:
        """Wire the service; ``random_bytes`` makes the quickstart key (tests inject one)."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._random_bytes = random_bytes

    def tenant_of(self, provider: str, organization_id: str) -> str | None:
        """The tenant an organization is bound to, or None."""
        with self._uow() as uow:
            binding = uow.identity_bindings.get(provider, organization_id)
        return None if binding is None else binding.tenant_id

    def sign_in(self, identity: VerifiedIdentity) -> SignIn:
        """The tenant of a verified identity's organization, activating it on its first login.

        Two first logins of one organization at once bind it once: the one that loses the race
        finds the winner's binding and creates nothing.
        """
        with self._uow() as uow:
            found = uow.identity_bindings.get(identity.provider, identity.organization_id)
            if found is not None:
                return SignIn(tenant_id=found.tenant_id, identity=identity, activated=False)
            now = self._clock.now()
            binding = IdentityBinding(
                provider=identity.provider,
                organization_id=identity.organization_id,
                tenant_id=TENANT_PREFIX + self._ids.new_id(),
                created_at=now,
            )
            try:
                uow.identity_bindings.add(binding)
            except Conflict:
                pass  # bound meanwhile by a concurrent first login: read it below
            else:
                uow.subscriptions.add(trial_subscription(binding.tenant_id, now))
                key = self._quickstart_key(uow.api_keys, binding.tenant_id, identity.user_id)
                uow.commit()
                return SignIn(
                    tenant_id=binding.tenant_id,
                    identity=identity,
                    activated=True,
                    quickstart_key=key,
                )
        bound = self.tenant_of(identity.provider, identity.organization_id)
        if bound is None:
            raise LoginRejected("the organization could not be bound to a tenant; log in again")
        return SignIn(tenant_id=bound, identity=identity, activated=False)

    def _quickstart_key(
        self, api_keys: ApiKeyRepository, tenant_id: str, user_id: str
    ) -> ApiKeyCreated:
        """The Analyst key of a new tenant, added in the enclosing transaction."""
        creator = ActorIdentity(
            subject=user_id,
            auth_method=AuthMethod.BEARER,
            roles=(ServiceRole.ADMIN,),
            tenant_id=tenant_id,
        )
        keys = ApiKeyService(lambda: _Enclosed(api_keys), self._clock, self._random_bytes)
        request = CreateApiKeyRequest(name=QUICKSTART_KEY_NAME, role=ServiceRole.ANALYST)
        return keys.create(creator, request)


__all__ = ["TENANT_PREFIX", "AccountService"]
