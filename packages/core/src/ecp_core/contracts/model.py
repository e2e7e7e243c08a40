"""Contract requests and stored contracts."""

from datetime import datetime
from typing import Annotated, Any

import attrs

from ecp_core.constraints import AwareUtc, Text, checked


@attrs.frozen(kw_only=True, field_transformer=checked)
class CreateContractRequest:
    """Body of ``POST /v1/contracts``: a JSON Schema under a name."""

    name: Annotated[str, Text(1, 200, no_whitespace=True)]
    json_schema: dict[str, Any]
    metadata: dict[str, Any] = attrs.field(factory=dict)


@attrs.frozen(kw_only=True, field_transformer=checked)
class Contract:
    """A tenant's immutable contract."""

    tenant_id: str
    name: str
    json_schema: dict[str, Any]
    metadata: dict[str, Any]
    digest: str
    created_at: Annotated[datetime, AwareUtc()]
