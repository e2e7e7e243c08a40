"""The evidence a comparison selects for one version, and its per-run economics.

A side's evidence is its version's execution events in the window (an inventory's inclusive
capture interval when one is named), every outcome assertion of those runs, and the revisions
of their charges. Runs are priced and judged by the debugger's rules (``debugger/tally.py``);
the inventory, when named, is checked here.
"""

import hashlib
from collections import Counter, defaultdict
from collections.abc import Iterable
from datetime import datetime
from decimal import Decimal

import attrs

from ecp_core.canonical import canonical_json
from ecp_core.debugger.tally import OutcomeStatus, latest_revisions, outcome_verdicts, price
from ecp_core.decisions.model import CalculationRow, EvidenceCounts
from ecp_core.evidence.model import (
    ChargeRevision,
    CostRole,
    Digested,
    ExecutionEvent,
    OutcomeDefinition,
    OutcomeEvent,
    OutcomeMaturity,
    OutcomeMeasurement,
    SourceInventory,
    digest_of,
)
from ecp_core.money import EXACT, ZERO, money_text
from ecp_core.types import CostMeasurement


@attrs.frozen(kw_only=True)
class VersionWindow:
    """One version's events from ``start`` to ``end``; ``end`` itself is included when asked."""

    workflow_id: str
    workflow_version: str
    start: datetime
    end: datetime
    end_inclusive: bool = False

    def holds(self, event: ExecutionEvent) -> bool:
        """Whether ``event`` belongs to this window."""
        if event.workflow_id != self.workflow_id or event.workflow_version != self.workflow_version:
            return False
        if event.occurred_at < self.start:
            return False
        return event.occurred_at <= self.end if self.end_inclusive else event.occurred_at < self.end


@attrs.frozen(kw_only=True)
class Selection:
    """What the store holds for one side, digests included (the fingerprint's material)."""

    executions: tuple[Digested[ExecutionEvent], ...]
    outcomes: tuple[Digested[OutcomeEvent], ...]
    revisions: tuple[Digested[ChargeRevision], ...]
    definition: OutcomeDefinition | None


def select(
    window: VersionWindow,
    executions: Iterable[Digested[ExecutionEvent]],
    outcomes: Iterable[Digested[OutcomeEvent]],
    revisions: Iterable[Digested[ChargeRevision]],
    definition: OutcomeDefinition | None,
) -> Selection:
    """The reference selection over one tenant's stored evidence."""
    chosen = tuple(entry for entry in executions if window.holds(entry.item))
    runs = {entry.item.run_id for entry in chosen if entry.item.run_id is not None}
    charges = {entry.item.charge_id for entry in chosen if entry.item.charge_id is not None}
    return Selection(
        executions=chosen,
        outcomes=tuple(
            entry
            for entry in outcomes
            if entry.item.workflow_id == window.workflow_id
            and entry.item.workflow_version == window.workflow_version
            and entry.item.run_id in runs
        ),
        revisions=tuple(entry for entry in revisions if entry.item.charge_id in charges),
        definition=definition,
    )


@attrs.frozen(kw_only=True)
class RunEconomics:
    """One run's cost (None: unknown) and outcome (None: unresolved)."""

    run_id: str
    cost_usd: Decimal | None
    cost_measurement: CostMeasurement
    accepted: bool | None
    outcome_measurement: OutcomeMeasurement | None


@attrs.frozen(kw_only=True)
class SideEconomics:
    """A side's runs, delivery counts, fingerprint material and inventory findings."""

    runs: tuple[RunEconomics, ...]
    delivery: EvidenceCounts
    material: dict[str, object]
    inventory_problems: tuple[str, ...]


def semantics_digest(definition: OutcomeDefinition | None) -> str | None:
    """What a definition means, apart from the version it belongs to.

    ``sha256:`` over its outcome type and predicate: equal across versions that judge success
    alike.
    """
    if definition is None:
        return None
    return digest_of({"outcome_type": definition.outcome_type, "predicate": definition.predicate})


def ids_digest(event_ids: Iterable[str]) -> str:
    """``sha256:`` over the RFC 8785 JSON array of event ids sorted by code point."""
    return "sha256:" + hashlib.sha256(canonical_json(sorted(event_ids))).hexdigest()


def _run_cost(
    charges: list[tuple[Decimal | None, CostMeasurement]],
) -> tuple[Decimal | None, CostMeasurement]:
    known = [cost for cost, _ in charges if cost is not None]
    if not charges or len(known) < len(charges):
        return None, CostMeasurement.UNMEASURED
    total = ZERO
    for cost in known:
        total = EXACT.add(total, cost)
    estimated = any(m is CostMeasurement.ESTIMATED for _, m in charges)
    return total, CostMeasurement.ESTIMATED if estimated else CostMeasurement.MEASURED


def inventory_problems(
    inventory: SourceInventory, executions: Iterable[ExecutionEvent]
) -> list[str]:
    """How the selected events differ from what the inventory declares (empty: they agree).

    Unexpected records (events of runs the inventory does not list) and, per capture window,
    a different event count or id digest (which partial runs also produce) are mismatches.
    """
    listed = set(inventory.terminal_run_ids)
    events = list(executions)
    problems = []
    unexpected = sorted({e.run_id or "(no run)" for e in events if e.run_id not in listed})
    if unexpected:
        problems.append(f"events of runs the inventory does not list: {', '.join(unexpected[:5])}")
    by_window: dict[str | None, list[str]] = defaultdict(list)
    for event in events:
        by_window[event.source_window_id].append(event.event_id)
    declared = {window.source_window_id: window for window in inventory.windows}
    for window_id in sorted(set(declared) | {w for w in by_window if w is not None}):
        found = by_window.get(window_id, [])
        window = declared.get(window_id)
        if window is None:
            problems.append(f"capture window {window_id} is not in the inventory")
        elif len(found) != window.expected_events:
            problems.append(
                f"capture window {window_id}: {len(found)} events, {window.expected_events} expected"
            )
        elif ids_digest(found) != window.event_ids_digest:
            problems.append(f"capture window {window_id}: event ids differ from the inventory")
    if by_window.get(None):
        problems.append(f"{len(by_window[None])} events name no capture window")
    return problems


def economics(
    selection: Selection,
    as_of: datetime,
    inventory: Digested[SourceInventory] | None = None,
) -> SideEconomics:
    """Price and judge each run of a side; list inventory mismatches and missing runs."""
    events = [entry.item for entry in selection.executions]
    definition = selection.definition
    version = definition.workflow_version if definition is not None else ""
    assertions = [entry.item for entry in selection.outcomes if entry.item.asserted_at <= as_of]
    verdicts = (
        outcome_verdicts(assertions, {definition.workflow_version: definition}, as_of)
        if definition is not None
        else {}
    )
    pricing = latest_revisions(entry.item for entry in selection.revisions)
    charges: dict[str, list[tuple[Decimal | None, CostMeasurement]]] = defaultdict(list)
    for event in events:
        if event.run_id is None:
            continue
        charges.setdefault(event.run_id, [])
        if event.cost_role is CostRole.CHARGE:
            charges[event.run_id].append(price(event, pricing))
    listed = inventory.item.terminal_run_ids if inventory is not None else ()
    missing = [run for run in listed if run not in charges]
    runs = []
    for run_id in sorted([*charges, *missing]):
        cost, measurement = _run_cost(charges.get(run_id, []))
        verdict = verdicts.get((version, run_id))
        decided = verdict is not None and verdict.status is not OutcomeStatus.UNRESOLVED
        runs.append(
            RunEconomics(
                run_id=run_id,
                cost_usd=cost,
                cost_measurement=measurement,
                accepted=(verdict.status is OutcomeStatus.SUCCESS) if decided and verdict else None,
                outcome_measurement=(
                    (
                        OutcomeMeasurement.INFERRED
                        if verdict.inferred
                        else OutcomeMeasurement.MEASURED
                    )
                    if decided and verdict
                    else None
                ),
            )
        )
    windows = {e.source_window_id for e in events if e.source_window_id is not None}
    delivery = EvidenceCounts(
        runs=len(runs),
        execution_events=len(events),
        unattributed_events=sum(e.run_id is None for e in events),
        outcome_assertions=len(assertions),
        provisional_outcomes=sum(o.maturity is OutcomeMaturity.PROVISIONAL for o in assertions),
        charge_revisions=len(selection.revisions),
        source_windows=len(windows),
        missing_runs=len(missing),
    )
    material: dict[str, object] = {
        "executions": sorted([e.item.event_id, e.digest] for e in selection.executions),
        "outcomes": sorted(
            [e.item.event_id, e.digest] for e in selection.outcomes if e.item.asserted_at <= as_of
        ),
        "revisions": sorted([e.item.event_id, e.digest] for e in selection.revisions),
        "definition": semantics_digest(definition),
        "inventory": [inventory.item.event_id, inventory.digest] if inventory else None,
    }
    problems = tuple(inventory_problems(inventory.item, events)) if inventory else ()
    return SideEconomics(
        runs=tuple(runs), delivery=delivery, material=material, inventory_problems=problems
    )


def calculation_rows(runs: Iterable[RunEconomics]) -> tuple[CalculationRow, ...]:
    """``run-economics/1`` rows: identical runs collapsed with their multiplicity."""
    counted = Counter(
        (
            None if run.cost_usd is None else money_text(run.cost_usd),
            run.cost_measurement.value,
            run.accepted,
            None if run.outcome_measurement is None else run.outcome_measurement.value,
        )
        for run in runs
    )
    return tuple(
        CalculationRow(
            cost_usd=cost,
            cost_measurement=measurement,
            accepted=accepted,
            outcome_measurement=outcome,
            runs=count,
        )
        for (cost, measurement, accepted, outcome), count in sorted(
            counted.items(), key=lambda item: canonical_json(list(item[0])).decode()
        )
    )
