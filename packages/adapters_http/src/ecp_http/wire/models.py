"""Wire models of the HTTP adapter that the core does not define, query strings included."""

from typing import Annotated, Any, Literal

import attrs

from ecp_core.constraints import Range, Text, checked
from ecp_core.debugger.model import DebuggerQuery
from ecp_core.deployments import Deployment
from ecp_core.graphs.definition import GraphVersion
from ecp_core.pages import DEFAULT_PAGE, MAX_PAGE
from ecp_core.runs.approvals.model import ApprovalActionRecord, ApprovalRecord
from ecp_core.runs.tasks.model import TaskStatus
from ecp_core.signing import PublicSigningKey
from ecp_core.types import ApprovalStatus
from ecp_http.wire.query import described


@attrs.frozen(kw_only=True, field_transformer=checked)
class ResumeRequest:
    """Body of ``POST /runs/{run_id}/resume``: the value the interrupt waits for."""

    value: Any
    """The answer to the interrupt; the run's graph says what it may be."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalListResponse:
    """A run's approvals in creation order."""

    approvals: tuple[ApprovalRecord, ...]
    """The run's approvals."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalActionListResponse:
    """An approval's action trail (requested, approved, denied, escalated, ...), oldest first."""

    approval_id: str
    actions: tuple[ApprovalActionRecord, ...]
    """What was done on the approval."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class SigningKeysResponse:
    """Keys that verify audit record signatures (the current one last)."""

    keys: tuple[PublicSigningKey, ...]
    """The public keys signatures can be verified with."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class HealthResponse:
    """Liveness or readiness, with what was checked."""

    status: str
    """The overall status."""
    checks: dict[str, str] = attrs.field(factory=dict)
    """The status of each dependency checked, by name."""


Limit = Annotated[int, Range(1, MAX_PAGE)]
"""How many items a page may hold."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalStatusQuery:
    """The query of a run's approval listing: only those with this status, when given."""

    status: ApprovalStatus | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class PageQuery:
    """A page of a listing: at most ``limit`` items after ``cursor``."""

    limit: Limit = DEFAULT_PAGE
    cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeploymentAuditQuery:
    """A page of a deployment's audit records, of one run when ``run_id`` is given."""

    run_id: str | None = None
    limit: Limit = DEFAULT_PAGE
    cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DecisionHistoryQuery:
    """A page of retained decisions, of one workflow when ``workflow_id`` is given."""

    workflow_id: Annotated[str, Text(1)] | None = None
    limit: Limit = DEFAULT_PAGE
    cursor: str | None = None


@described(version="a version number; the latest when absent")
@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphVersionQuery:
    """Which version of a graph to read."""

    version: Annotated[int, Range(1, 2**31 - 1)] | None = None


ReportFormat = Literal["json", "markdown"]
"""How a report is answered: JSON (the default) or Markdown."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ReportFormatQuery:
    """The format of a report."""

    format: ReportFormat = "json"


described(
    start="Window start (inclusive).",
    end="Window end (exclusive).",
    cohort="``subject_id`` (default) or ``dimension:<key>``.",
)(DebuggerQuery)


@attrs.frozen(kw_only=True, field_transformer=checked)
class DebuggerReportQuery(DebuggerQuery):
    """The debugger window and the format of the combined report."""

    format: ReportFormat = "json"


@described(
    status="only approvals with this status (`pending` is the inbox proper)",
    deployment_ref="only approvals of this deployment",
    run_id="only approvals of this run",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalInboxQuery:
    """A page of the tenant's approvals across runs, matching every filter given."""

    status: ApprovalStatus | None = None
    deployment_ref: Annotated[str, Text(1)] | None = None
    run_id: Annotated[str, Text(1)] | None = None
    limit: Limit = DEFAULT_PAGE
    cursor: str | None = None


@described(
    deployment="only approvals of this deployment (empty: every deployment)",
    cursor="where the page starts: the `Next page` link's",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleInboxQuery:
    """The console inbox's filter and page (a form may send a field empty: no filter)."""

    deployment: str | None = None
    cursor: str | None = None


@described(
    topic="the topic whose tasks are listed (empty: every topic, with its counts)",
    status="only tasks of this status (empty: every status)",
    cursor="where the page starts: the `Next page` link's",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleTasksQuery:
    """The console's task queues: a topic to list, a status filter and a page."""

    topic: Annotated[str, Text(0, 512)] | None = None
    status: Annotated[str, Text(0, 32)] | None = None
    cursor: str | None = None


@described(
    status="only deliveries of this status (empty: every status)",
    cursor="where the page of deliveries starts: the `Next page` link's",
    replayed="the dead letter just replayed (the page says so)",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleWebhooksQuery:
    """The console's webhooks page: a status filter on the deliveries and their page."""

    status: Annotated[str, Text(0, 32)] | None = None
    cursor: str | None = None
    replayed: Annotated[str, Text(0, 600)] | None = None


@described(cursor="where the page starts: the `Next page` link's")
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleDeploymentsQuery:
    """A page of the console's deployments list."""

    cursor: str | None = None


@described(
    version="the version to draw (empty: the latest)",
    cursor="where the page of versions starts: the `Next page` link's",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleGraphQuery:
    """Which version of a graph the console draws, and the page of its versions listed."""

    version: Annotated[int, Range(1, 2**31 - 1)] | None = None
    cursor: str | None = None


@described(
    workflow="the workflow_id the evidence carries (empty: only the decisions are shown)",
    version="only this workflow version",
    start="the window's first day (YYYY-MM-DD, UTC; default 29 days before its last)",
    end="the window's last day, included (YYYY-MM-DD, UTC; default today)",
    granularity="the timeline's windows: `day` or `hour`",
    cohort="`subject_id` or `dimension:<key>`",
    decisions="where the decisions' page starts: the `Older decisions` link's",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleEconomicsQuery:
    """The console economics page's filter (a form may send a field empty: its default)."""

    workflow: str | None = None
    version: str | None = None
    start: str | None = None
    end: str | None = None
    granularity: str | None = None
    cohort: str | None = None
    decisions: str | None = None


@described(cursor="where the deployments' page starts: the `Next page` link's")
@attrs.frozen(kw_only=True, field_transformer=checked)
class ConsoleAuditQuery:
    """The console audit page's page of deployments."""

    cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class ApprovalPageResponse:
    """A page of approvals in approval id order (oldest first); ``next_cursor`` when more remain."""

    approvals: tuple[ApprovalRecord, ...]
    """One page of approvals."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphListResponse:
    """The latest version of each graph, by graph id; ``next_cursor`` when more remain."""

    graphs: tuple[GraphVersion, ...]
    """The tenant's graphs."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class GraphVersionListResponse:
    """A graph's versions, oldest first; ``next_cursor`` when more remain."""

    versions: tuple[GraphVersion, ...]
    """The graph's versions."""
    next_cursor: str | None = None


@attrs.frozen(kw_only=True, field_transformer=checked)
class DeploymentListResponse:
    """The tenant's deployments by deployment_ref; ``next_cursor`` when more remain."""

    deployments: tuple[Deployment, ...]
    """The tenant's deployments."""
    next_cursor: str | None = None


@described(
    status="only tasks with this status",
    topic="only tasks of this topic",
)
@attrs.frozen(kw_only=True, field_transformer=checked)
class TaskListQuery:
    """A page of the tenant's external tasks by task id, matching every filter given."""

    status: TaskStatus | None = None
    topic: Annotated[str, Text(1)] | None = None
    limit: Limit = DEFAULT_PAGE
    cursor: str | None = None
