"""The run list's search on random runs and filters: each match once, newest first."""

import itertools
from datetime import timedelta

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ecp_core.runs.run.model import POLICY_VIOLATION, FailureState, PauseSource, Run
from ecp_core.runs.run.search import RunFilter
from ecp_core.testing.conformance._base import ExampleStoreSuite, StoreOpener
from ecp_core.testing.samples import NOW, run
from ecp_core.types import RunPublicStatus, RunStatus

_examples = itertools.count()

drawn_runs = st.lists(
    st.tuples(
        st.sampled_from(["t", "t", "other"]),
        st.sampled_from(list(RunStatus)),
        st.sampled_from(["d1", "d2"]),
        st.integers(0, 5),  # minutes after NOW it started
        st.booleans(),  # paused by itself
        st.booleans(),  # a policy failure (when failed)
        st.none() | st.sampled_from(["k1", "k2"]),
        st.sampled_from(["g@1", "g@2"]),
    ),
    max_size=14,
)
"""Runs as (tenant, status, deployment, start minute, paused, policy failure, key, version)."""

drawn_filters = st.builds(
    RunFilter,
    deployment_ref=st.none() | st.sampled_from(["d1", "d2"]),
    status=st.none() | st.sampled_from(list(RunPublicStatus)),
    created_from=st.none() | st.integers(0, 5).map(lambda m: NOW + timedelta(minutes=m)),
    created_to=st.none() | st.integers(0, 6).map(lambda m: NOW + timedelta(minutes=m)),
    run_or_key=st.none() | st.sampled_from(["k1", "k2", "run-00", "run-03"]),
    graph_version_ref=st.none() | st.sampled_from(["g@1", "g@2"]),
    waiting=st.booleans(),
)


def _sample(prefix: str, index: int, drawn: tuple) -> Run:  # type: ignore[type-arg]
    tenant, status, ref, minute, paused, policy, key, version = drawn
    made = run(f"{prefix}run-{index:02d}", tenant=prefix + tenant, status=status, key=key)
    moment = NOW + timedelta(minutes=minute)
    failure = FailureState(reason=POLICY_VIOLATION if policy else "action_error")
    return attrs.evolve(
        made,
        deployment_ref=ref,
        graph_version_ref=version,
        created_at=moment,
        updated_at=moment,
        paused_by=(PauseSource.RUN,) if paused else (),
        failure_state=failure if status is RunStatus.FAILED else None,
    )


class RunSearchProperties(ExampleStoreSuite):
    """Paging through the run list on random runs and filters."""

    @pytest.mark.spec("C15 console-runs", "C1 list-paging", "C17 migrate-bulk")
    @settings(
        deadline=None,
        max_examples=60,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
    @given(drawn=drawn_runs, where=drawn_filters, limit=st.integers(1, 5))
    def test_pages_return_each_match_once_newest_first(
        self,
        open_store: StoreOpener,
        drawn: list[tuple],  # type: ignore[type-arg]
        where: RunFilter,
        limit: int,
    ) -> None:
        """Paging on from each page's last id returns exactly the runs the filter admits, once."""
        prefix = f"x{next(_examples):05d}-"
        stored = _one_per_key([_sample(prefix, i, one) for i, one in enumerate(drawn)])
        if where.run_or_key is not None and where.run_or_key.startswith("run-"):
            where = attrs.evolve(where, run_or_key=prefix + where.run_or_key)
        tenant = prefix + "t"
        expected = sorted(
            (r.run_id for r in stored if r.tenant_id == tenant and where.admits(r)), reverse=True
        )
        seen: list[str] = []
        with open_store() as uow:
            with uow() as tx:
                for r in stored:
                    tx.runs.add(r)
                tx.commit()
            with uow() as tx:
                before = None
                while True:
                    page = tx.runs.search(tenant, where, limit=limit, before=before)
                    assert len(page) <= limit
                    seen.extend(r.run_id for r in page)
                    if len(page) < limit:
                        break
                    before = page[-1].run_id
        assert seen == expected


def _one_per_key(runs: list[Run]) -> list[Run]:
    """``runs`` but the later ones reusing an idempotency key in the same deployment."""
    keys: set[tuple[str, str, str]] = set()
    kept = []
    for r in runs:
        if r.idempotency_key is not None:
            slot = (r.tenant_id, r.deployment_ref, r.idempotency_key)
            if slot in keys:
                continue
            keys.add(slot)
        kept.append(r)
    return kept


__all__ = ["RunSearchProperties"]
