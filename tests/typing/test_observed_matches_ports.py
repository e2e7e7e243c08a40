"""The metrics wrappers of ``ecp_http.server.observability`` are the ports they wrap: a drift fails type-checking.

``mypy --strict`` checks this module (see the Makefile's ``lint``); pytest only imports it. The
wrappers forward every port method by name, with no ``__getattr__``: a port method renamed,
added or changed in signature is a type error here (and in the wrappers' own modules,
``ecp_http.server.observability.watched`` and ``.observed``), so a watched method can never stop
counting without a word.
"""

from ecp_core.ports.audit import AuditRepository
from ecp_core.ports.runs import RunRepository
from ecp_core.ports.unit_of_work import UnitOfWork, UnitOfWorkFactory
from ecp_core.ports.webhooks import WebhookRepository
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.observability.observed import ObservedUnitOfWork, observed
from ecp_http.server.observability.watched import ObservedAudit, ObservedRuns, ObservedWebhooks


def observed_runs(x: ObservedRuns) -> RunRepository:
    """ObservedRuns is a RunRepository."""
    return x


def observed_audit(x: ObservedAudit) -> AuditRepository:
    """ObservedAudit is an AuditRepository."""
    return x


def observed_webhooks(x: ObservedWebhooks) -> WebhookRepository:
    """ObservedWebhooks is a WebhookRepository."""
    return x


def observed_unit_of_work(x: ObservedUnitOfWork) -> UnitOfWork:
    """ObservedUnitOfWork is the whole UnitOfWork."""
    return x


def observed_factory(x: UnitOfWorkFactory, metrics: Metrics) -> UnitOfWorkFactory:
    """``observed`` makes a UnitOfWorkFactory of a UnitOfWorkFactory."""
    return observed(x, metrics)
