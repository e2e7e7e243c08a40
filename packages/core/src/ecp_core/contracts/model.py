"""Contract requests and stored contracts."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Text, checked


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateContractRequest:
    """Body of ``POST /v1/contracts``: a JSON Schema under a name."""

    name: Annotated[str, Text(1, 200, no_whitespace=True)]
    """The contract's name within the tenant (no whitespace)."""
    json_schema: dict[str, Any]
    """The JSON Schema a resolution or payload must satisfy."""
    metadata: dict[str, Any] = attrs.field(factory=dict)
    """Free-form data kept with the contract."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class Contract:
    """A tenant's immutable contract."""

    tenant_id: str
    name: str
    """The contract's name within the tenant."""
    json_schema: dict[str, Any]
    """The JSON Schema a resolution or payload must satisfy."""
    metadata: dict[str, Any]
    """Free-form data kept with the contract."""
    digest: str
    """The digest of the schema, to tell versions apart."""
    created_at: Annotated[datetime, AwareUtc()]
