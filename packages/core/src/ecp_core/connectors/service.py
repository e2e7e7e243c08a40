"""Use cases of connectors: create, read, list, update and delete, and read a test cost scope.

Settings-defined connectors (``source: "env"``) come with the :class:`ConnectorSetup`; every
tenant sees them and none may store, change or delete one (409 ``connector_settings_defined``).
A stored connector that a later settings file shadows stays stored, unseen, until the settings
change again (ADR 0044).
"""

import logging
from collections.abc import Callable, Mapping

import attrs

from ecp_core.connectors.model import (
    BackendType,
    Connector,
    ConnectorCostReport,
    ConnectorCreateRequest,
    ConnectorListResponse,
    ConnectorScope,
    ConnectorSource,
    ConnectorSummaryResponse,
    ConnectorUpdateRequest,
    CostScope,
)
from ecp_core.connectors.params import checked_params
from ecp_core.errors import Configurable, ConnectorSettingsDefined, NotFound, exists
from ecp_core.identity import ActorIdentity
from ecp_core.models.model import CatalogEntry
from ecp_core.pages import check_limit, decode_cursor, next_page
from ecp_core.ports.connectors import ConnectorProbe, ConnectorsUnit
from ecp_core.ports.models import ModelProvider
from ecp_core.ports.system import Clock

log = logging.getLogger("ecp_core.connectors")

LIST_CURSOR = "connectors"
COSTS_CURSOR = "connector-costs"


@attrs.frozen(kw_only=True)
class ConnectorSetup:
    """What connectors work with: the settings-defined ones, the backends, the test timeout.

    ``models`` None: no model catalog is configured, any model ref is taken and a model test
    answers ``ok: false``; ``probe`` None: an HTTP test answers ``ok: false``.
    """

    defined: Mapping[str, Connector] = attrs.field(factory=dict)
    models: ModelProvider | None = None
    probe: ConnectorProbe | None = None
    timeout_seconds: float = 10.0
    """Each test call's bound (an HTTP connector's ``timeout_seconds`` may lower it)."""

    @property
    def catalog(self) -> Mapping[str, CatalogEntry] | None:
        """The model catalog, or None when none is configured."""
        return None if self.models is None else self.models.catalog


def _origin(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme.lower()}://{rest.split('/', 1)[0]}"


def summary(
    connector: Connector, catalog: Mapping[str, CatalogEntry] | None
) -> ConnectorSummaryResponse:
    """How the API shows ``connector`` (its params hold no secret value by construction)."""
    if connector.backend_type is BackendType.MODEL:
        ref = str(connector.params["model_ref"])
        entry = None if catalog is None else catalog.get(ref)
        backend = f"uncatalogued:{ref}" if entry is None else f"{entry.provider}:{entry.model}"
    else:
        backend = _origin(str(connector.params["base_url"]))
    settings_defined = connector.source is ConnectorSource.ENV
    return ConnectorSummaryResponse(
        ref=connector.ref,
        connector_type=connector.backend_type.value,
        scope=ConnectorScope.GLOBAL if settings_defined else ConnectorScope.TENANT,
        backend=backend,
        backend_type=connector.backend_type,
        params=dict(connector.params),
        source=connector.source,
    )


class ConnectorService:
    """Connectors as a tenant sees them: the settings' ones and its own."""

    def __init__(
        self, uow: Callable[[], ConnectorsUnit], clock: Clock, setup: ConnectorSetup
    ) -> None:
        """Wire the service over ``setup`` (settings-defined connectors, backends)."""
        self._uow = uow
        self._clock = clock
        self._setup = setup

    @property
    def setup(self) -> ConnectorSetup:
        """The backends and settings-defined connectors."""
        return self._setup

    def connector(self, tenant_id: str, ref: str) -> Connector:
        """The connector ``ref`` as the tenant sees it (settings first); NotFound otherwise."""
        defined = self._setup.defined.get(ref)
        if defined is not None:
            return defined
        with self._uow() as uow:
            found = uow.connectors.get(tenant_id, ref)
        if found is None:
            raise NotFound(f"connector {ref!r} not found")
        return found

    def _refuse_settings_defined(self, ref: str) -> None:
        if ref in self._setup.defined:
            raise ConnectorSettingsDefined(
                f"connector {ref!r} is defined by the connector definitions the service was "
                "configured with; the API cannot store, change or delete it",
                configuration=(Configurable.CONNECTOR_DEFINITIONS,),
            )

    def create(
        self, actor: ActorIdentity, request: ConnectorCreateRequest
    ) -> ConnectorSummaryResponse:
        """Store a new connector of the actor's tenant; 409 when its ref is taken."""
        self._refuse_settings_defined(request.ref)
        params = checked_params(request.backend_type, request.params, self._setup.catalog)
        now = self._clock.now()
        connector = Connector(
            ref=request.ref,
            backend_type=request.backend_type,
            params=params,
            source=ConnectorSource.API,
            tenant_id=actor.tenant_id,
            created_at=now,
            updated_at=now,
        )
        with self._uow() as uow:
            if uow.connectors.get(actor.tenant_id, request.ref) is not None:
                raise exists("connector", request.ref)
            uow.connectors.add(connector)
            uow.commit()
        log.info(
            "connector stored",
            extra={"tenant_id": actor.tenant_id, "connector_ref": request.ref},
        )
        return summary(connector, self._setup.catalog)

    def get(self, tenant_id: str, ref: str) -> ConnectorSummaryResponse:
        """One connector the tenant sees."""
        return summary(self.connector(tenant_id, ref), self._setup.catalog)

    def page(
        self, tenant_id: str, *, limit: int, cursor: str | None = None
    ) -> ConnectorListResponse:
        """The connectors the tenant sees, settings-defined and stored, by ref."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor(LIST_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            stored = uow.connectors.page(tenant_id, limit=limit + 1, after=after)
        defined = self._setup.defined
        merged = sorted(
            [c for ref, c in defined.items() if after is None or ref > after]
            + [c for c in stored if c.ref not in defined],
            key=lambda c: c.ref,
        )
        page, next_cursor = next_page(merged[: limit + 1], limit, LIST_CURSOR, lambda c: [c.ref])
        catalog = self._setup.catalog
        return ConnectorListResponse(
            connectors=tuple(summary(c, catalog) for c in page), next_cursor=next_cursor
        )

    def update(
        self, actor: ActorIdentity, ref: str, request: ConnectorUpdateRequest
    ) -> ConnectorSummaryResponse:
        """Replace a stored connector's backend type and params."""
        self._refuse_settings_defined(ref)
        params = checked_params(request.backend_type, request.params, self._setup.catalog)
        with self._uow() as uow:
            found = uow.connectors.get(actor.tenant_id, ref)
            if found is None:
                raise NotFound(f"connector {ref!r} not found")
            connector = attrs.evolve(
                found,
                backend_type=request.backend_type,
                params=params,
                updated_at=self._clock.now(),
            )
            uow.connectors.replace(connector)
            uow.commit()
        log.info("connector updated", extra={"tenant_id": actor.tenant_id, "connector_ref": ref})
        return summary(connector, self._setup.catalog)

    def delete(self, tenant_id: str, ref: str) -> None:
        """Delete a stored connector (its tests' ledger stays)."""
        self._refuse_settings_defined(ref)
        with self._uow() as uow:
            if not uow.connectors.remove(tenant_id, ref):
                raise NotFound(f"connector {ref!r} not found")
            uow.commit()
        log.info("connector deleted", extra={"tenant_id": tenant_id, "connector_ref": ref})

    def costs(
        self,
        tenant_id: str,
        campaign_id: str,
        run_id: str | None,
        *,
        limit: int,
        cursor: str | None = None,
    ) -> ConnectorCostReport:
        """A test cost scope's totals and a page of its ledger (zeros for an unknown scope)."""
        check_limit(limit)
        after = None if cursor is None else decode_cursor(COSTS_CURSOR, cursor, 1)[0]
        with self._uow() as uow:
            scope = uow.connector_costs.scope(tenant_id, campaign_id, run_id) or CostScope(
                tenant_id=tenant_id, campaign_id=campaign_id, run_id=run_id
            )
            found = uow.connector_costs.entries(
                tenant_id, campaign_id, run_id, limit=limit + 1, after=after
            )
        entries, next_cursor = next_page(found, limit, COSTS_CURSOR, lambda e: [e.cost_event_id])
        return ConnectorCostReport(
            campaign_id=campaign_id,
            run_id=run_id,
            committed_usd=scope.committed_usd,
            reserved_usd=scope.reserved_usd,
            entries=tuple(entries),
            next_cursor=next_cursor,
        )


__all__ = ["ConnectorService", "ConnectorSetup", "summary"]
