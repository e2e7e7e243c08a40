"""What the handlers use: the core's facade and the few adapter parts a request touches.

The composition root (:mod:`ecp_http.startup.bootstrap`) builds one :class:`Services`; every handler is a
plain function ``handler(call, services)``. The two protocols name what handlers need of the
running process and of the API's own description, so that this module imports neither.
"""

from collections.abc import Mapping
from typing import Any, Protocol

import attrs

from ecp_core.runs.engine.starts import PreparedStart
from ecp_core.runs.run.model import Run
from ecp_core.service import Ecp
from ecp_http.config.settings import Settings
from ecp_http.server.api_reference import Asset
from ecp_http.server.auth import Authenticator
from ecp_http.server.console_sessions import ConsoleSessions
from ecp_http.server.live_feed import LiveFeed
from ecp_http.server.long_poll import Bell
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.sessions import CloudIdentity
from ecp_http.server.task_offers import TaskOffers


class Background(Protocol):
    """The workers and the schema behind the requests, as handlers see them."""

    def wake(self, *, announced: bool = False) -> None:
        """Tell the run workers that there is work now; ``announced``: a notification says so."""

    def start_by_worker(self, start: PreparedStart, seconds: float) -> tuple[Run, bool] | None:
        """A start made by a run worker taken within ``seconds`` (ADR 0099, 0106).

        The run and whether it was created. None when no worker took it in time (or none runs): the caller starts the run itself.
        """

    def schema_state(self) -> str:
        """``current``, ``pending`` or ``newer`` (than this build); raises when it cannot be read."""

    def dispatcher_alive(self) -> bool:
        """Whether the run workers run."""

    def scheduler_alive(self) -> bool | None:
        """Whether the decision scheduler runs; None when it is disabled."""


class ApiDescription(Protocol):
    """The API described by its own operations (built once, on first use)."""

    def document(self) -> dict[str, Any]:
        """The OpenAPI document."""

    def page(self) -> str:
        """The same as a self-contained HTML page."""

    def assets(self) -> Mapping[str, Asset]:
        """The page's scripts and stylesheets by their fingerprinted names."""


@attrs.frozen(kw_only=True)
class Services:
    """Everything a handler may use, and nothing else."""

    ecp: Ecp
    settings: Settings
    authenticate: Authenticator
    background: Background
    api: ApiDescription
    metrics: Metrics | None = None
    """The Prometheus registry, unless ``ECP_METRICS_ENABLED`` is false."""
    task_offers: TaskOffers = attrs.field(factory=TaskOffers)
    """The bell long-polling claims wait on, rung for the tasks this process makes claimable."""
    runs_moved: Bell = attrs.field(factory=Bell)
    """Rung when a run of this process starts to wait or ends; ``Prefer: wait`` reads wait on it."""
    cloud_identity: CloudIdentity | None = None
    """The identity provider and the sealed cookies, while ``ECP_IDP_AUTHKIT_ENABLED`` is set."""
    console: ConsoleSessions | None = None
    """The console's sealed sessions (the composition root always builds them)."""
    live: LiveFeed = attrs.field(factory=LiveFeed)
    """The runs and approvals that moved, for the console's live updates (ADR 0084)."""
