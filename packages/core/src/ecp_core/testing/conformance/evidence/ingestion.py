"""Evidence ingestion on every store: idempotent replays, charge ownership, definitions, erasure."""

from collections.abc import Callable
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pytest

from ecp_core.debugger.tally import Grouping
from ecp_core.errors import Conflict
from ecp_core.evidence.model import PredicateKind, SuccessPredicate
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.conformance.evidence.samples import (
    definition,
    execution,
    inventory,
    outcome,
    query,
    revision,
)
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.evidence import digested


class EvidenceIngestionConformance(StoreSuite):
    """Idempotent ingestion, charge ownership, definitions, counting and erasure."""

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_new_events_are_stored_and_exact_replays_counted(self, uow: UnitOfWorkFactory) -> None:
        """New events are stored and exact replays counted."""
        first = [digested(execution("e1")), digested(execution("e2", run_id=None))]
        with uow() as tx:
            assert tx.evidence.add_executions("t1", first) == 0
            tx.commit()
        again = [*first, digested(execution("e3")), first[0]]
        with uow() as tx:
            assert tx.evidence.add_executions("t1", again) == 3
            assert tx.evidence.add_executions("t1", []) == 0
            tx.commit()
        with uow() as tx:
            assert tx.evidence.count_executions("t1", query(), limit=100) == 3
            # Another tenant's identical ids are its own.
            assert tx.evidence.add_executions("t2", first) == 0
            assert tx.evidence.count_executions("t2", query(), limit=100) == 2

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_replays_inside_one_batch_count(self, uow: UnitOfWorkFactory) -> None:
        """Replays inside one batch count."""
        event = digested(outcome("o1"))
        with uow() as tx:
            assert tx.evidence.add_outcomes("t1", [event, event, event]) == 2
            assert tx.evidence.add_outcomes("t1", [event]) == 1

    @pytest.mark.spec("C6 evidence-ingestion")
    @pytest.mark.parametrize(
        ("add", "make"),
        [
            ("add_executions", lambda i, **f: execution(i, attempt=f.get("n", 1))),
            ("add_outcomes", lambda i, **f: outcome(i, value=f.get("n", 1))),
            ("add_revisions", lambda i, **f: revision(i, cost=str(f.get("n", 1)))),
            ("add_inventories", lambda i, **f: inventory(i, expected=f.get("n", 1))),
        ],
    )
    def test_a_changed_replay_conflicts_and_keeps_nothing_of_the_batch(
        self, uow: UnitOfWorkFactory, add: str, make: Callable[..., Any]
    ) -> None:
        """A changed replay conflicts and keeps nothing of the batch."""
        with uow() as tx:
            assert getattr(tx.evidence, add)("t1", [digested(make("a"))]) == 0
            tx.commit()
        with uow() as tx, pytest.raises(Conflict, match="a was stored with other content"):
            getattr(tx.evidence, add)(
                "t1", [digested(make("b")), digested(make("a", n=2)), digested(make("c"))]
            )
        with uow() as tx:
            # Nothing of the refused batch was kept: b and c are new again, a is unchanged.
            assert (
                getattr(tx.evidence, add)(
                    "t1", [digested(make("b")), digested(make("c")), digested(make("a"))]
                )
                == 1
            )

    @pytest.mark.spec("C6 evidence-ingestion")
    def test_one_id_with_two_contents_in_one_batch_conflicts(self, uow: UnitOfWorkFactory) -> None:
        """One id with two contents in one batch conflicts."""
        with uow() as tx, pytest.raises(Conflict, match="o1 was stored with other content"):
            tx.evidence.add_outcomes(
                "t1", [digested(outcome("o1")), digested(outcome("o1", value=2))]
            )
        with uow() as tx:
            assert tx.evidence.add_outcomes("t1", [digested(outcome("o1"))]) == 0

    @pytest.mark.spec("§2.9 charge-ownership")
    def test_a_charge_belongs_to_one_event(self, uow: UnitOfWorkFactory) -> None:
        """A charge belongs to one event."""
        with uow() as tx:
            tx.evidence.add_executions("t1", [digested(execution("e1", charge_id="c"))])
            tx.commit()
        with uow() as tx, pytest.raises(Conflict, match="charge c belongs to event e1"):
            tx.evidence.add_executions(
                "t1", [digested(execution("e0")), digested(execution("e2", charge_id="c"))]
            )
        with uow() as tx, pytest.raises(Conflict, match="charge d belongs to event"):
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e3", charge_id="d")),
                    digested(execution("e4", charge_id="d")),
                ],
            )
        with uow() as tx:
            # The owner's own replay is fine; another tenant has its own charge ids.
            assert tx.evidence.add_executions("t1", [digested(execution("e1", charge_id="c"))]) == 1
            assert tx.evidence.add_executions("t2", [digested(execution("e2", charge_id="c"))]) == 0
            assert tx.evidence.count_executions("t1", query(), limit=10) == 1

    @pytest.mark.spec("§2.9 charge-ownership")
    def test_erasing_an_owner_frees_its_charge(self, uow: UnitOfWorkFactory) -> None:
        """Erasing an owner frees its charge."""
        with uow() as tx:
            tx.evidence.add_executions(
                "t1", [digested(execution("e1", charge_id="c", run_id="r1"))]
            )
            assert tx.evidence.erase_run("t1", "r1", []) == 1
            assert tx.evidence.add_executions("t1", [digested(execution("e2", charge_id="c"))]) == 0

    @pytest.mark.spec("§2.9 outcome-definition")
    @pytest.mark.parametrize(
        "predicate",
        [
            SuccessPredicate(kind=PredicateKind.EQUALS, value=True),
            SuccessPredicate(kind=PredicateKind.EQUALS, value=1e300),
            SuccessPredicate(kind=PredicateKind.EQUALS, value=1.0),
            SuccessPredicate(kind=PredicateKind.EQUALS, value="passé"),
            SuccessPredicate(
                kind=PredicateKind.AT_LEAST, threshold=Decimal("0.123456789012345678901")
            ),
            SuccessPredicate(kind=PredicateKind.LESS_THAN, threshold=Decimal("-1E+3")),
        ],
    )
    def test_definitions_are_stored_once(
        self, uow: UnitOfWorkFactory, predicate: SuccessPredicate
    ) -> None:
        """Definitions are stored once."""
        stored = definition(predicate=predicate)
        with uow() as tx:
            assert tx.evidence.definition("t1", "wf", "v1") is None
            tx.evidence.add_definition(stored)
            tx.commit()
        with uow() as tx:
            found = tx.evidence.definition("t1", "wf", "v1")
            assert found == stored
            assert type(found.predicate.value) is type(stored.predicate.value)
            assert tx.evidence.definition("t2", "wf", "v1") is None
            assert tx.evidence.definition("t1", "wf", "v2") is None
            assert tx.evidence.definition("t1", "other", "v1") is None
            with pytest.raises(Conflict):
                tx.evidence.add_definition(definition(outcome_type="other", offset=5))
            tx.evidence.add_definition(definition(tenant="t2"))
            tx.evidence.add_definition(definition(version="v2"))

    @pytest.mark.spec("§7 debugger-event-limit")
    def test_count_executions_stops_at_the_limit(self, uow: UnitOfWorkFactory) -> None:
        """Counting executions stops at the limit and counts the half-open window."""
        events = [
            digested(execution(f"e{i}", occurred_at=NOW + timedelta(minutes=i))) for i in range(10)
        ]
        events.append(digested(execution("other-wf", workflow_id="wf2")))
        events.append(digested(execution("v2", workflow_version="v2")))
        with uow() as tx:
            tx.evidence.add_executions("t1", events)
            assert tx.evidence.count_executions("t1", query(), limit=100) == 11
            assert tx.evidence.count_executions("t1", query(), limit=4) == 4
            assert tx.evidence.count_executions("t1", query(workflow_version="v1"), limit=100) == 10
            assert tx.evidence.count_executions("t1", query(workflow_version="v2"), limit=100) == 1
            # The window is half open: start counts, end does not.
            window = query(start=NOW + timedelta(minutes=2), end=NOW + timedelta(minutes=5))
            assert tx.evidence.count_executions("t1", window, limit=100) == 3
            assert tx.evidence.count_executions("t2", query(), limit=100) == 0

    @pytest.mark.spec("§9.1 econ-erasure-join-key")
    def test_erase_run_deletes_executions_and_outcomes_of_the_run_or_join_keys(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Erase run deletes executions and outcomes of the run or join keys."""
        with uow() as tx:
            tx.evidence.add_executions(
                "t1",
                [
                    digested(execution("e1", run_id="r1")),
                    digested(execution("e2", run_id="r2", join_key="k1")),
                    digested(execution("e3", run_id=None, join_key="k2")),
                    digested(execution("e4", run_id="r3")),
                ],
            )
            tx.evidence.add_executions("t2", [digested(execution("e1", run_id="r1"))])
            tx.evidence.add_outcomes(
                "t1",
                [
                    digested(outcome("o1", run_id="r1")),
                    digested(outcome("o2", run_id="r4", join_key="k2")),
                    digested(outcome("o3", run_id="r3")),
                ],
            )
            tx.evidence.add_revisions("t1", [digested(revision("rev1", charge_id="c-e1"))])
            tx.commit()
        with uow() as tx:
            assert tx.evidence.erase_run("t1", "r1", ["k1", "k2"]) == 5
            tx.commit()
        with uow() as tx:
            assert tx.evidence.erase_run("t1", "r1", ["k1", "k2"]) == 0
            assert tx.evidence.count_executions("t1", query(), limit=100) == 1
            assert tx.evidence.count_executions("t2", query(), limit=100) == 1
            assert tx.evidence.erase_run("t1", "nothing", []) == 0
            # Outcome o3 (run r3) survived: it still decides r3.
            tx.evidence.add_definition(definition())
            (total,) = tx.evidence.tally("t1", query(groupings=frozenset({Grouping.TOTAL})))
            assert (total.events, total.runs, total.successful_runs) == (1, 1, 1)
