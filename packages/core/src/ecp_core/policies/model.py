"""A deployment's policy: capabilities it denies, versioned on every change."""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.constraints import AwareUtc, Items, Range, checked
from ecp_core.types import Capability


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeploymentPolicyRequest:
    """Body of ``PUT /v1/deployments/{ref}/policy``."""

    deny_capabilities: Annotated[tuple[Capability, ...], Items(0, 64, unique=True)] = ()
    """The capabilities no action of the deployment may use."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeploymentPolicy:
    """The policy in force for a deployment; ``policy_version`` grows with every change."""

    tenant_id: str
    deployment_ref: str
    policy_id: str
    """The policy's id."""
    policy_version: Annotated[int, Range(1)]
    """The policy's version; each change adds one."""
    deny_capabilities: tuple[Capability, ...]
    """The capabilities no action of the deployment may use."""
    updated_at: Annotated[datetime, AwareUtc()]
