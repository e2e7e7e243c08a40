"""Decisions on an adapter equal the in-memory reference: evidence selection and whole artifacts.

On random evidence an adapter's ``EvidenceRepository.select`` equals the in-memory reference
(:func:`ecp_core.decisions.selection.select`) with either window end, and a whole
``DecisionService.compare`` artifact is the same on both stores.
"""

import itertools
import json
from typing import Any

from hypothesis import HealthCheck, event, given, settings

from ecp_core import ActorIdentity, AuthMethod, Ecp
from ecp_core.decisions.model import CompareRequest, DecisionArtifact
from ecp_core.decisions.selection import VersionWindow, economics
from ecp_core.memory import MemoryStore
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.system import FixedClock, SequentialIds
from ecp_core.testing.conformance._base import THOROUGH, ExampleStoreSuite, StoreOpener
from ecp_core.testing.conformance.decisions.drawn import (
    AS_OF,
    W_END,
    W_START,
    Comparison,
    Evidence,
    comparisons,
    evidence,
    inventories_of,
    load,
    multiset,
    selected,
)
from ecp_core.testing.conformance.decisions.samples import END, START
from ecp_core.testing.conformance.decisions.scenario import ACTOR, RUNS, build_scenario
from ecp_core.wire import structure, unstructure

_tenants = itertools.count()


def _compare(
    unit_of_work: UnitOfWorkFactory, tenant: str, data: Evidence, comparison: Comparison
) -> str:
    candidate, policy, mode = comparison
    # Decision ids are unique in the whole database, not per tenant.
    ecp = Ecp.build(
        unit_of_work, signer=None, clock=FixedClock(AS_OF), ids=SequentialIds(f"{tenant}-d")
    )
    body: dict[str, Any] = {
        "workflow_id": "wf",
        "baseline_version": "v1",
        "candidate_version": candidate,
        "start": W_START.isoformat(),
        "end": W_END.isoformat(),
        "policy": policy,
    }
    if mode != "none":
        made = inventories_of(data, mode, sorted({"v1", candidate}))
        ecp.evidence.ingest_inventories(tenant, made)
        body |= {"baseline_inventory_id": "inv-v1", "candidate_inventory_id": f"inv-{candidate}"}
    actor = ActorIdentity(subject="analyst", auth_method=AuthMethod.BEARER, tenant_id=tenant)
    found, created = ecp.decisions.compare(actor, structure(body, CompareRequest))
    assert created
    event(f"inventories {mode}: {found.verdict.value} {', '.join(found.abstain_reasons)[:40]}")
    assert ecp.decisions.compare(actor, structure(body, CompareRequest)) == (found, False)
    return _comparable(found)


def _comparable(found: DecisionArtifact) -> str:
    """The artifact as JSON text without the fields a store's clock and ids decide."""
    wire = unstructure(found)
    for field in ("decision_id", "created_at", "as_of"):
        del wire[field]
    return json.dumps(wire, sort_keys=True)


def _scenario_answers(
    unit_of_work: UnitOfWorkFactory, bodies: list[dict[str, Any]]
) -> list[tuple[str, int, bool]]:
    """Each body compared over the scenario: (the artifact's JSON, its revision, created)."""
    ecp = build_scenario(unit_of_work)
    found = []
    for body in bodies:
        full = {
            "workflow_id": "w",
            "baseline_version": "v1",
            "candidate_version": "v2",
            "start": START.isoformat(),
            "end": END.isoformat(),
        } | body
        made, created = ecp.decisions.compare(ACTOR, structure(full, CompareRequest))
        found.append((_comparable(made), made.revision, created))
    return found


class DecisionsMatchReference(ExampleStoreSuite):
    """The adapter's evidence selection and whole comparisons equal the in-memory reference."""

    @settings(
        max_examples=200 if THOROUGH else 25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(data=evidence(), comparison=comparisons())
    def test_the_selection_and_artifact_equal_the_reference(
        self, open_store: StoreOpener, data: Evidence, comparison: Comparison
    ) -> None:
        """The evidence selected for a window, and the artifact compared from it, equal the reference's."""
        # Each example is a new tenant of one database; the earlier examples' tenants hold evidence
        # with the same ids in the same window, which must never be selected. The pool is opened
        # here, not in a fixture: its background connects use ``random`` (see the evidence contract).
        tenant = f"tenant-{next(_tenants)}"
        with open_store() as uow:
            stores = [MemoryStore().unit_of_work, uow]
            for unit_of_work in stores:
                load(unit_of_work, tenant, data)
            for version, end_inclusive in itertools.product(("v1", "v2", "V1"), (False, True)):
                window = VersionWindow(
                    workflow_id="wf",
                    workflow_version=version,
                    start=W_START,
                    end=W_END,
                    end_inclusive=end_inclusive,
                )
                reference, actual = (
                    selected(unit_of_work, tenant, window) for unit_of_work in stores
                )
                assert multiset(actual.executions) == multiset(reference.executions)
                assert multiset(actual.outcomes) == multiset(reference.outcomes)
                assert multiset(actual.revisions) == multiset(reference.revisions)
                assert actual.definition == reference.definition
                # The rows read back price and judge each run as the reference does.
                assert economics(actual, AS_OF) == economics(reference, AS_OF)
                event(
                    f"{version} inclusive={end_inclusive} selects an event at the end: "
                    f"{any(e.item.occurred_at == W_END for e in actual.executions)}"
                )
            # A limit caps the executions read (the service asks for one more than it accepts).
            everything = selected(stores[1], tenant, window)
            with uow() as tx:
                capped = tx.evidence.select(tenant, window, limit=2)
            assert len(capped.executions) == min(2, len(everything.executions))
            artifacts = [
                _compare(unit_of_work, tenant, data, comparison) for unit_of_work in stores
            ]
            assert artifacts[1] == artifacts[0]

    def test_a_whole_comparison_is_the_same_on_both_stores(self, open_store: StoreOpener) -> None:
        """A whole comparison is the same on both stores."""
        bodies: list[dict[str, Any]] = [
            {"policy": {"min_success_rate": 0.5}},
            {"policy": {"min_success_rate": 0.5, "confidence_level": 0.99}},
            {
                "policy": {"min_success_rate": 0.5},
                "baseline_inventory_id": "inv-v1",
                "candidate_inventory_id": "inv-v2",
            },
            {"policy": {"min_success_rate": 0.5}, "baseline_inventory_id": "inv-v1"},
            {"policy": {"min_success_rate": 0.5}, "candidate_version": "v1"},
            {"policy": {"min_success_rate": 0.5}},  # the first again: the retained artifact
        ]
        answers: list[list[tuple[str, int, bool]]] = []
        with open_store() as uow:
            answers.extend(
                _scenario_answers(unit_of_work, bodies)
                for unit_of_work in (MemoryStore().unit_of_work, uow)
            )
        memory, adapter = answers
        assert adapter == memory
        # The scenario is not trivial: a pass, revisions, both inventory paths, an exact cost.
        first = json.loads(memory[0][0])
        assert first["verdict"] == "pass"
        assert [revision for _, revision, _ in memory] == [1, 2, 3, 4, 1, 1]
        assert [created for *_, created in memory] == [True] * 5 + [False]
        inventoried = json.loads(memory[2][0])
        # The request window excludes its end, an inventory's capture interval includes it.
        assert first["source_delivery"]["candidate"]["runs"] == RUNS
        assert inventoried["source_delivery"]["candidate"]["runs"] == RUNS + 1
        assert inventoried["verdict"] == "pass"
        assert json.loads(memory[3][0])["abstain_reasons"] == ["source_inventory_one_sided"]
        rows = {row["cost_usd"] for row in first["calculation_inputs"]["baseline"]}
        assert rows == {"0.00000001", "1.00", "1.20", "123456789012345.123456789012345678"}
