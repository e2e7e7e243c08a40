"""The metrics wrappers around every unit of work: whole ports, counted on commit only.

``tests/typing/test_observed_matches_ports.py`` has mypy prove each wrapper is its port; this
checks the same at run time (no ``__getattr__`` passthrough, every port member defined on the
wrapper) and that what the wrappers watch is counted once the unit of work commits.
"""

import inspect

import attrs
import pytest

from ecp_core import CreateDeploymentRequest, Ecp, GraphBuilder, RunStatus, StartRunRequest
from ecp_core.graphs import ConstantMappingOperation
from ecp_core.memory import MemoryStore
from ecp_core.ports.audit import AuditRepository
from ecp_core.ports.runs import RunRepository
from ecp_core.ports.unit_of_work import UnitOfWork
from ecp_core.ports.webhooks import WebhookRepository
from ecp_core.system import SequentialIds
from ecp_http.server.observability.metrics import Metrics
from ecp_http.server.observability.observed import ObservedUnitOfWork, observed
from ecp_http.server.observability.watched import ObservedAudit, ObservedRuns, ObservedWebhooks

pytestmark = pytest.mark.unit

WRAPPERS = [
    (ObservedRuns, RunRepository),
    (ObservedAudit, AuditRepository),
    (ObservedWebhooks, WebhookRepository),
    (ObservedUnitOfWork, UnitOfWork),
]


def members(protocol: type) -> set[str]:
    """The public members a protocol and its bases declare (methods and properties)."""
    found: set[str] = set()
    for base in inspect.getmro(protocol):
        if base is object or not getattr(base, "_is_protocol", False):
            continue
        found |= {name for name in vars(base) if not name.startswith("_")}
        found |= {name for name in getattr(base, "__annotations__", {}) if not name.startswith("_")}
    return found


@pytest.mark.parametrize(("wrapper", "port"), WRAPPERS, ids=lambda x: x.__name__)
def test_each_wrapper_defines_every_member_of_its_port_and_forwards_nothing_blindly(wrapper, port):
    assert "__getattr__" not in vars(wrapper)
    defined = set(dir(wrapper)) | set(getattr(wrapper, "__annotations__", {}))
    assert members(port) - defined == set()


def sample(metrics: Metrics, name: str, **labels: str) -> float:
    value = metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


@pytest.fixture
def watched() -> tuple[Ecp, MemoryStore, Metrics]:
    metrics = Metrics()
    store = MemoryStore()
    ecp = Ecp.build(observed(store.unit_of_work, metrics), signer=None, ids=SequentialIds("o"))
    graph = (
        GraphBuilder("shape")
        .mapping("shape", ConstantMappingOperation(target_path="done", value=True))
        .end("end")
        .chain("shape", "end")
        .build()
    )
    ecp.graphs.register("t", graph)
    ecp.graphs.deploy("t", CreateDeploymentRequest(deployment_ref="shape", graph_id="shape"))
    return ecp, store, metrics


def test_a_run_driven_to_its_end_is_counted_started_finished_and_audited(watched):
    ecp, _, metrics = watched
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="shape", input={}))
    assert sample(metrics, "ecp_runs_started_total") == 0
    done = ecp.runs.drive("t", run.run_id)
    assert done.status is RunStatus.COMPLETED
    assert sample(metrics, "ecp_runs_started_total") == 1
    assert sample(metrics, "ecp_runs_finished_total", status="completed") == 1
    assert sample(metrics, "ecp_audit_records_appended_total") == done.attempts


def test_only_what_commits_is_counted(watched):
    ecp, store, metrics = watched
    run, _ = ecp.runs.start("t", StartRunRequest(deployment_ref="shape", input={}))
    units = observed(store.unit_of_work, metrics)
    for commit in (False, True):
        with units() as uow:
            locked = uow.runs.lock("t", run.run_id)
            assert locked is not None
            uow.runs.save(attrs.evolve(locked, status=RunStatus.RUNNING))
            if commit:
                uow.commit()
        assert sample(metrics, "ecp_runs_started_total") == (1 if commit else 0)


def test_unwatched_ports_are_the_inner_unit_of_works_own():
    inner = MemoryStore().unit_of_work()
    with ObservedUnitOfWork(inner, None) as uow:
        assert uow.graphs is inner.graphs
        assert uow.evidence is inner.evidence
        assert uow.subscriptions is inner.subscriptions
        assert isinstance(uow.runs, ObservedRuns)
