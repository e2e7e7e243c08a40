"""Prometheus metrics: one registry per application, families named by the contract.

Counters are bumped where the work commits (see :mod:`ecp_http.server.observability.observed`) and by the request
middleware; the queue gauges are read from the database when ``/metrics`` is scraped, one query
for all of them, and the long-poll wake-ups from the bells. No label ever holds a tenant id or
other tenant data.
"""

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

from ecp_core.types import RunPublicStatus
from ecp_postgres.operations import QueueFigures

if TYPE_CHECKING:
    from ecp_core.ports.shared import WorkGroup
    from ecp_http.server.long_poll import Bell

log = logging.getLogger("ecp_http.metrics")

UNMATCHED = "unmatched"
"""The ``route`` label of a request no route matched (never the raw path)."""

FINISHED = (
    RunPublicStatus.COMPLETED,
    RunPublicStatus.FAILED,
    RunPublicStatus.TERMINATED_BY_POLICY,
    RunPublicStatus.CANCELED,
)
DELIVERY_RESULTS = ("delivered", "retry", "dead")
"""``result`` of a webhook attempt: accepted, failed with another attempt due, or dead-lettered."""
CONNECTOR_TEST_OUTCOMES = ("ok", "failed", "refused", "replayed")
"""``outcome`` of a connector test: called and ok, called and not ok, refused by a cap, repeated."""

_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class _QueueCollector(Collector):
    """Gauges read at scrape time: dispatch queue, oldest pending run, webhook outbox, tasks."""

    def __init__(self, read: Callable[[], QueueFigures]) -> None:
        self._read = read

    def collect(self) -> Iterator[Metric]:
        try:
            figures = self._read()
        except Exception:  # a scrape reports what it can; the database may be away
            log.warning("metrics: reading the queue figures failed", exc_info=True)
        else:
            yield GaugeMetricFamily(
                "ecp_dispatch_queue_depth",
                "Runs waiting for a dispatch attempt (pending or running).",
                value=figures.runnable_runs,
            )
            yield GaugeMetricFamily(
                "ecp_dispatch_oldest_pending_seconds",
                "Age of the oldest run not yet started; 0 when none waits.",
                value=figures.oldest_pending_seconds,
            )
            yield GaugeMetricFamily(
                "ecp_webhook_outbox_depth",
                "Webhook deliveries pending (due or backing off).",
                value=figures.webhook_outbox,
            )
            yield GaugeMetricFamily(
                "ecp_tasks_waiting",
                "External tasks waiting for a worker to claim them.",
                value=figures.tasks_waiting,
            )
            yield GaugeMetricFamily(
                "ecp_timers_waiting",
                "Runs waiting at a wait node for their time (ADR 0078).",
                value=figures.timers_waiting,
            )
            yield GaugeMetricFamily(
                "ecp_timers_overdue_seconds",
                "How long ago the earliest waiting timer came due; 0 while timers keep up.",
                value=figures.overdue_timer_seconds,
            )


class _BellCollector(Collector):
    """``ecp_long_poll_wakeups_total{bell}`` and ``ecp_long_polls_waiting{bell}``, per scrape."""

    def __init__(self, bells: Mapping[str, "Bell"]) -> None:
        self._bells = dict(bells)

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(
            "ecp_long_poll_wakeups",
            "Long polls woken by a ring, by bell: each tries again (a claim, a run read; ADR 0071).",
            labels=["bell"],
        )
        waiting = GaugeMetricFamily(
            "ecp_long_polls_waiting",
            "Long polls waiting on a bell now, by bell (task claims, run reads).",
            labels=["bell"],
        )
        for name, bell in self._bells.items():
            family.add_metric([name], bell.woken)
            waiting.add_metric([name], bell.watching)
        yield family
        yield waiting


class _StreamCollector(Collector):
    """``ecp_console_streams_open``: the console's live update streams open now (ADR 0084)."""

    def __init__(self, open_streams: Callable[[], int]) -> None:
        self._open = open_streams

    def collect(self) -> Iterator[Metric]:
        yield GaugeMetricFamily(
            "ecp_console_streams_open",
            "Console live update streams (GET /console/events) open in this process now.",
            value=self._open(),
        )


class _GroupCollector(Collector):
    """``ecp_commit_groups_total{kind}`` and ``ecp_commit_group_works_total{kind}``, per scrape."""

    def __init__(self, groups: Mapping[str, "WorkGroup"]) -> None:
        self._groups = dict(groups)

    def collect(self) -> Iterator[Metric]:
        shared = CounterMetricFamily(
            "ecp_commit_groups",
            "Transactions that commit groups of works, by kind (run starts, approval "
            "resolutions; ADRs 0102, 0107); a group of one runs in a plain transaction.",
            labels=["kind"],
        )
        works = CounterMetricFamily(
            "ecp_commit_group_works",
            "Works those transactions held, by kind: works / groups is the mean group size.",
            labels=["kind"],
        )
        for kind, group in self._groups.items():
            shared.add_metric([kind], group.groups)
            works.add_metric([kind], group.works)
        yield shared
        yield works


class Metrics:
    """The registry and the families an application reports."""

    def __init__(self) -> None:
        """A fresh registry: applications built in one process never share figures."""
        self.registry = CollectorRegistry(auto_describe=False)
        registry = self.registry
        self.http_requests = Counter(
            "ecp_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.http_duration = Histogram(
            "ecp_http_request_duration_seconds",
            "Time to answer an HTTP request, by method and route template.",
            ["method", "route"],
            buckets=_BUCKETS,
            registry=registry,
        )
        self.runs_started = Counter(
            "ecp_runs_started",
            "Runs that left pending (first dispatch attempt).",
            registry=registry,
        )
        self.runs_finished = Counter(
            "ecp_runs_finished", "Runs that ended, by status.", ["status"], registry=registry
        )
        self.child_runs_started = Counter(
            "ecp_child_runs_started",
            "Child runs that subgraph nodes started (ADR 0046).",
            registry=registry,
        )
        self.webhook_deliveries = Counter(
            "ecp_webhook_deliveries",
            "Webhook delivery attempts, by result (delivered, retry, dead).",
            ["result"],
            registry=registry,
        )
        self.audit_records = Counter(
            "ecp_audit_records_appended",
            "Audit records appended to run chains.",
            registry=registry,
        )
        self.connector_tests = Counter(
            "ecp_connector_tests",
            "Connector tests answered, by outcome (ok, failed, refused, replayed).",
            ["outcome"],
            registry=registry,
        )
        self.connector_reservations_abandoned = Counter(
            "ecp_connector_reservations_abandoned",
            "Connector test reservations a dead process left, settled at their worst case"
            " (ADR 0050).",
            registry=registry,
        )
        self.timer_lateness = Histogram(
            "ecp_timer_lateness_seconds",
            "How long after its due time each run waiting at a wait node woke (ADR 0078).",
            buckets=_BUCKETS,
            registry=registry,
        )
        self.log_leaves = Counter(
            "ecp_log_leaves_appended_total",
            "Audit records appended to the tenants' transparency logs (ADR 0086).",
            registry=registry,
        )
        self.log_checkpoints = Counter(
            "ecp_log_checkpoints_signed_total",
            "Checkpoints the transparency log integrator signed (ADR 0086).",
            registry=registry,
        )
        self.log_cosignatures = Counter(
            "ecp_log_cosignatures_total",
            "Witnesses' cosignatures published with new checkpoints (ADR 0086).",
            registry=registry,
        )
        self.log_witness_refusals = Counter(
            "ecp_log_witness_refusals_total",
            "New checkpoints a witness did not cosign, by witness: a fork, a rollback, or it "
            "could not be reached (log line `witness refused checkpoint`).",
            ["witness"],
            registry=registry,
        )
        for outcome in CONNECTOR_TEST_OUTCOMES:
            self.connector_tests.labels(outcome)
        for status in FINISHED:
            self.runs_finished.labels(status.value)
        for result in DELIVERY_RESULTS:
            self.webhook_deliveries.labels(result)

    def watch_queues(self, read: Callable[[], QueueFigures]) -> None:
        """Report the queue gauges from ``read``, called once per scrape."""
        self.registry.register(_QueueCollector(read))

    def watch_bells(self, bells: Mapping[str, "Bell"]) -> None:
        """Report the polls each of ``bells`` (by name) woke and has waiting, once per scrape."""
        self.registry.register(_BellCollector(bells))

    def watch_groups(self, groups: Mapping[str, "WorkGroup"]) -> None:
        """Report the commit groups (by kind) and the works they held, once per scrape."""
        self.registry.register(_GroupCollector(groups))

    def watch_streams(self, open_streams: Callable[[], int]) -> None:
        """Report ``ecp_console_streams_open`` from ``open_streams``, once per scrape."""
        self.registry.register(_StreamCollector(open_streams))

    def render(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
