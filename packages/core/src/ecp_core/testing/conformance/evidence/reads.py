"""The evidence reads on every store, by worked examples: provider events and the tally."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from ecp_core.debugger.tally import Granularity, Grouping, Tally, scalar_key
from ecp_core.evidence.model import (
    CostRole,
    OutcomeMaturity,
    OutcomeMeasurement,
    PredicateKind,
    SuccessPredicate,
)
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.reconciliation.matching import ProviderWindow
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.evidence.samples import (
    DAY,
    by_key,
    definition,
    execution,
    outcome,
    query,
    revision,
)
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import digested
from ecp_core.types import CostMeasurement


class EvidenceReadsConformance(StoreSuite):
    """Provider events priced and judged, and the tally's totals, cohorts and windows."""

    def test_provider_events_are_priced_and_judged_charges_of_the_provider(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Provider events are priced and judged charges of the provider."""
        openai = {"provider": "openai", "model": "gpt", "project_id": "p1", "seed": 3}
        with uow() as tx:
            tx.evidence.add_definition(definition())
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", metadata=openai)),
                    digested(execution("e2", run_id="r2", metadata=openai, cost_usd=Decimal(2))),
                    digested(execution("e3", run_id=None, metadata=openai, workflow_id="wf2")),
                    digested(execution("e4", metadata={"provider": "anthropic"})),
                    digested(execution("e5", metadata={"provider": 1})),
                    digested(execution("e6", metadata=openai, occurred_at=NOW + DAY)),
                    digested(
                        execution(
                            "e7",
                            metadata=openai,
                            charge_id=None,
                            cost_usd=None,
                            cost_role=CostRole.SUMMARY,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                ],
            )
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", value=True)),
                    digested(outcome("o2", run_id="r2", value=False)),
                ],
            )
            tx.evidence.add_revisions(
                "t1", [digested(revision("rev1", charge_id="c-e1", cost="0.75"))]
            )
            window = ProviderWindow(provider="openai", start=NOW, end=NOW + DAY, as_of=NOW + DAY)
            events = tx.evidence.provider_events("t1", window, limit=10)
            assert sorted((e.cost_usd, e.outcome_status.value, e.workflow_id) for e in events) == [
                (Decimal("0.25"), "unresolved", "wf2"),
                (Decimal("0.75"), "success", "wf"),
                (Decimal(2), "failure", "wf"),
            ]
            assert {(e.model, tuple(e.scope.items())) for e in events} == {
                ("gpt", (("project_id", "p1"),))
            }
            assert len(tx.evidence.provider_events("t1", window, limit=2)) == 2
            assert tx.evidence.provider_events("t2", window, limit=10) == []

    def test_the_tally_of_a_worked_example(self, uow: UnitOfWorkFactory) -> None:
        """The tally of a worked example: totals, cohorts and windows as computed by hand."""
        later = NOW + timedelta(hours=2)
        with uow() as tx:
            tx.evidence.add_definition(definition())
            tx.evidence.add_definition(
                definition(
                    version="v2",
                    outcome_type="score",
                    predicate=SuccessPredicate(
                        kind=PredicateKind.AT_LEAST, threshold=Decimal("0.5")
                    ),
                )
            )
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", run_id="r1", step_id="a", subject_id="s1")),
                    digested(
                        execution("e2", run_id="r1", step_id="b", attempt=2, occurred_at=later)
                    ),
                    digested(
                        execution(
                            "e3",
                            run_id="r2",
                            cost_usd=Decimal("1.5"),
                            cost_measurement=CostMeasurement.ESTIMATED,
                        )
                    ),
                    digested(
                        execution(
                            "e4",
                            run_id="r2",
                            cost_usd=None,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                    digested(
                        execution(
                            "e5",
                            run_id=None,
                            charge_id=None,
                            cost_usd=None,
                            cost_role=CostRole.SUMMARY,
                            cost_measurement=CostMeasurement.UNMEASURED,
                        )
                    ),
                    digested(
                        execution(
                            "e6", workflow_version="v2", run_id="r3", dimensions={"tier": 1.0}
                        )
                    ),
                    digested(
                        execution("e7", workflow_version="v2", run_id="r4", dimensions={"tier": 1})
                    ),
                    digested(
                        execution(
                            "e8", workflow_version="v2", run_id="r5", dimensions={"tier": True}
                        )
                    ),
                ],
            )
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", run_id="r1", value=True)),
                    # r2: a later failure decides; a still later, future success does not count.
                    digested(outcome("o2", run_id="r2", value=True)),
                    digested(
                        outcome(
                            "o3",
                            run_id="r2",
                            value=False,
                            asserted_at=later,
                            maturity=OutcomeMaturity.PROVISIONAL,
                        )
                    ),
                    digested(outcome("o4", run_id="r2", value=True, asserted_at=NOW + 2 * DAY)),
                    # v2 by score: 0.5 passes, a string cannot be judged, ties go to the greater id.
                    digested(
                        outcome(
                            "o5",
                            workflow_version="v2",
                            run_id="r3",
                            outcome_type="score",
                            value=0.5,
                            outcome_measurement=OutcomeMeasurement.INFERRED,
                        )
                    ),
                    digested(
                        outcome(
                            "o6",
                            workflow_version="v2",
                            run_id="r4",
                            outcome_type="score",
                            value="high",
                        )
                    ),
                    digested(
                        outcome(
                            "O7",
                            workflow_version="v2",
                            run_id="r5",
                            outcome_type="score",
                            value=0.9,
                        )
                    ),
                    digested(
                        outcome(
                            "o7",
                            workflow_version="v2",
                            run_id="r5",
                            outcome_type="score",
                            value=0.1,
                        )
                    ),
                ],
            )
            tx.evidence.add_revisions(
                "t1",
                [
                    digested(revision("rev1", charge_id="c-e1", cost="0.75", offset=10)),
                    digested(revision("rev2", charge_id="c-e1", cost="0.30", offset=5)),
                    digested(revision("rev3", charge_id="c-e3", cost=None)),
                ],
            )
            expected = {
                Grouping.TOTAL: Tally(
                    grouping=Grouping.TOTAL,
                    events=8,
                    summary_events=1,
                    unattributed_events=1,
                    runs=5,
                    successful_runs=2,
                    failed_runs=2,
                    unresolved_runs=1,
                    inferred_outcome_runs=1,
                    provisional_outcome_runs=1,
                    measured_usd=Decimal("1.75"),
                    estimated_usd=Decimal(0),
                    unknown_cost_events=2,
                    failure_tax_usd=Decimal("0.25"),
                    repeated_attempt_events=1,
                    repeated_attempt_usd=Decimal("0.25"),
                ),
            }
            tallies = tx.evidence.tally("t1", query())
            assert by_key([t for t in tallies if t.grouping is Grouping.TOTAL]) == by_key(
                expected.values()
            )
            cohorts = {
                t.key(): (t.cohort, t.events, t.successful_runs, t.failed_runs, t.unresolved_runs)
                for t in tx.evidence.tally(
                    "t1", query(groupings=frozenset({Grouping.VERSION_COHORT}), dimension="tier")
                )
            }
            assert sorted(cohorts.values(), key=lambda v: scalar_key(v[0])) == [
                (None, 5, 1, 1, 0),
                (True, 1, 0, 1, 0),
                (1, 2, 1, 0, 1),
            ]
            assert all(type(v[0]) is not float for v in cohorts.values())
            windows = tx.evidence.tally(
                "t1",
                query(
                    workflow_version="v1",
                    granularity=Granularity.HOUR,
                    groupings=frozenset({Grouping.VERSION_WINDOW}),
                ),
            )
            assert sorted((t.window_start, t.events) for t in windows) == [
                (datetime(2026, 11, 22, 5, tzinfo=UTC), 4),
                (datetime(2026, 11, 22, 7, tzinfo=UTC), 1),
            ]
            assert tx.evidence.tally("t1", query(groupings=frozenset())) == []
            assert tx.evidence.tally("t2", query()) == []
            assert tx.evidence.tally("t1", query(workflow_id="nothing")) == []
