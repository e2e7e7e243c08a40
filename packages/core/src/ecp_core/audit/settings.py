"""A tenant's audit settings: which digest version its new records use (ADR 0047).

Version 2 is the default. A tenant opts in to version 3 (salted commitments) with
``PUT /v1/audit/settings`` and may switch back; records keep the version they were written with.
The use cases are in :mod:`ecp_core.audit.service`.
"""

from datetime import datetime
from typing import Annotated

import attrs

from ecp_core.audit.record import DIGEST_VERSION, SALTED_DIGEST_VERSION
from ecp_core.constraints import AwareUtc, Range, checked

SelectableDigestVersion = Annotated[int, Range(DIGEST_VERSION, SALTED_DIGEST_VERSION)]
"""A version a tenant may choose for new records: 2 (the default) or 3. Version 1 is legacy."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditSettingsRequest:
    """Body of ``PUT /v1/audit/settings``."""

    digest_version: SelectableDigestVersion


@attrs.frozen(kw_only=True, field_transformer=checked)
class AuditSettings:
    """The digest version a tenant's new audit records use, and who chose it when.

    ``updated_at`` and ``updated_by`` are null while the tenant never chose (the default, 2).
    """

    tenant_id: str
    digest_version: SelectableDigestVersion
    updated_at: Annotated[datetime, AwareUtc()] | None = None
    updated_by: str | None = None
    """Who last changed the settings."""
