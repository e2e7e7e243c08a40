"""Moving a waiting run to another version of its graph: the requests and answers (ADR 0090)."""

import enum
from typing import Annotated

import attrs

from ecp_core.constraints import Range, Text, checked
from ecp_core.runs.run.model import RunStatusResponse

VersionRef = Annotated[str, Text(1, 512)]
MIGRATION_PAGE = 100
"""How many runs one call of the bulk move looks at when it names no ``limit``."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class MigrateRunRequest:
    """Body of ``POST /runs/{run_id}/migrate``."""

    graph_version_ref: VersionRef
    """The version to move the run to (`<graph_id>@<version>`): another version of its graph."""
    node_map: dict[str, str] | None = None
    """Renamed nodes, `{"old": "new"}`: the node the run waits at in its version, and the node it
    is in the target. A node it leaves out keeps its id. Each old node must exist in the run's
    version and each new one in the target."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class MigrateVersionRequest:
    """Body of ``POST /v1/runs/migrate``: move the waiting runs of one version, a page at a time."""

    from_version: VersionRef
    """The version whose waiting runs move (`<graph_id>@<version>`)."""
    to_version: VersionRef
    """The version they move to: another version of the same graph."""
    node_map: dict[str, str] | None = None
    """Renamed nodes, `{"old": "new"}`, as for one run."""
    limit: Annotated[int, Range(1, 500)] = MIGRATION_PAGE
    """How many waiting runs this call looks at (1 to 500)."""
    cursor: Annotated[str, Text(1, 512)] | None = None
    """Where the previous call stopped (its `next_cursor`)."""


class MigrationOutcome(enum.StrEnum):
    """What the bulk move did to one run."""

    MIGRATED = "migrated"
    REFUSED = "refused"


@attrs.frozen(kw_only=True, field_transformer=checked)
class RunMigrationResult:
    """One run of the bulk move: moved, or refused and why."""

    run_id: str
    outcome: MigrationOutcome
    """`migrated`, or `refused` (nothing about the run changed)."""
    reason: str | None = None
    """Why it was refused, as `migration_not_possible` says it for one run; null when moved."""
    run: RunStatusResponse | None = None
    """The run after the move; null when refused."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class MigrateVersionResponse:
    """What one call of the bulk move did to each waiting run it looked at, newest first."""

    results: tuple[RunMigrationResult, ...]
    """Each run looked at, in the order they were tried."""
    next_cursor: str | None = None
    """Send it back as `cursor` for the next page; null when every waiting run was looked at."""


__all__ = [
    "MIGRATION_PAGE",
    "MigrateRunRequest",
    "MigrateVersionRequest",
    "MigrateVersionResponse",
    "MigrationOutcome",
    "RunMigrationResult",
]
