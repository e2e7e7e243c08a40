"""Conformance of the transparency log's storage: what an audit append queues, and the log.

Every appended audit record is queued as a pending leaf of its tenant's log in the same
transaction (a rolled-back append queues nothing), oldest first; the integrator's append logs
them at consecutive indices, keeps the tiles and the signed head, and empties the queue of them;
an append that does not start at the log's size is refused.
"""

from collections.abc import Callable
from datetime import timedelta

import attrs
import pytest

from ecp_core.errors import Conflict
from ecp_core.ports.transparency import TransparencyUnit
from ecp_core.ports.unit_of_work import UnitOfWorkFactory
from ecp_core.signing import Ed25519Signer
from ecp_core.system import FixedClock
from ecp_core.testing.conformance._base import StoreSuite
from ecp_core.testing.samples import NOW
from ecp_core.testing.strategies.audit import build_chain
from ecp_core.transparency.checkpoints import Checkpoint
from ecp_core.transparency.integrator import LogIntegrator
from ecp_core.transparency.keys import LogKeys
from ecp_core.transparency.merkle import leaf_hash, perfect_root, split_point
from ecp_core.transparency.model import PendingLeaf, leaf_entry
from ecp_core.transparency.notes import parse_note

KEYS = LogKeys(origin="log.example", signing=Ed25519Signer(bytes(32)))


def integrator(uow: Callable[[], TransparencyUnit], batch: int = 10_000) -> LogIntegrator:
    """An integrator over ``uow`` signing with a fixed key at a fixed time."""
    return LogIntegrator(uow, KEYS, FixedClock(NOW), batch=batch)


def reference_root(entries: list[bytes]) -> bytes:
    """The Merkle tree hash of ``entries`` by RFC 9162's recursive definition."""
    if len(entries) == 1:
        return leaf_hash(entries[0])
    k = split_point(len(entries))
    left, right = reference_root(entries[:k]), reference_root(entries[k:])
    return perfect_root([left, right])


class TransparencyConformance(StoreSuite):
    """The log's queue, leaves, tiles and heads."""

    @pytest.mark.spec("C16 log-queue")
    def test_an_audit_append_queues_its_leaf_and_a_rollback_does_not(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Appended records wait as pending leaves of their tenant, in append order."""
        records, _ = build_chain([{}, {}, {}])
        other, _ = build_chain([{}], run_id="run-9", audit_prefix="other-")
        other = [attrs.evolve(record, tenant_id="t2") for record in other]
        with uow() as tx:
            for record in [*records, *other]:
                tx.audit.append(record)
            tx.commit()
        rolled_back, _ = build_chain([{}], run_id="run-5", audit_prefix="gone-")
        with uow() as tx:
            tx.audit.append(rolled_back[0])
        with uow() as tx:
            assert tx.transparency.tenants_pending(10) == ["t1", "t2"]
            assert tx.transparency.tenants_pending(1) == ["t1"]
            assert tx.transparency.pending("t1", 10) == [
                PendingLeaf(record.audit_id, record.record_digest) for record in records
            ]
            assert tx.transparency.pending("t1", 2) == tx.transparency.pending("t1", 10)[:2]
            assert [leaf.audit_id for leaf in tx.transparency.pending("t2", 10)] == ["other-1"]
            assert tx.transparency.head("t1") is None

    @pytest.mark.spec("C16 log-append")
    def test_the_integrator_logs_pending_leaves_and_signs_each_head(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Leaves get consecutive indices; each head's root is the tree's; the queue empties."""
        records, _ = build_chain([{} for _ in range(7)])
        with uow() as tx:
            for record in records:
                tx.audit.append(record)
            tx.commit()
        passes = [integrator(uow, batch=3).integrate() for _ in range(4)]
        assert [[(i.tenant_id, i.appended, i.size) for i in p] for p in passes] == [
            [("t1", 3, 3)],
            [("t1", 3, 6)],
            [("t1", 1, 7)],
            [],
        ]
        entries = [leaf_entry(record.record_digest) for record in records]
        with uow() as tx:
            log = tx.transparency
            assert log.pending("t1", 10) == []
            head = log.head("t1")
            assert head is not None
            assert (head.size, head.root) == (7, reference_root(entries))
            note = parse_note(head.note)
            assert Checkpoint.parse(note.text) == Checkpoint("log.example/t1", 7, head.root)
            assert note.verified_by(KEYS.verifiers("t1")[0]) == 0
            older = log.head_at("t1", 3)
            assert older is not None
            assert older.root == reference_root(entries[:3])
            assert log.head_at("t1", 4) is None
            placed = log.leaves("t1", ["audit-1", "audit-7", "missing"])
            assert {k: v.leaf_index for k, v in placed.items()} == {"audit-1": 0, "audit-7": 6}
            assert log.leaves("t2", ["audit-1"]) == {}
            tile = log.tiles("t1", [(0, 0), (1, 0)])
            assert tile == {(0, 0): b"".join(leaf_hash(e) for e in entries)}

    @pytest.mark.spec("C16 log-append")
    def test_an_append_that_does_not_start_at_the_log_s_size_is_refused(
        self, uow: UnitOfWorkFactory
    ) -> None:
        """Two integrators cannot both append at the same size."""
        records, _ = build_chain([{}, {}])
        with uow() as tx:
            for record in records:
                tx.audit.append(record)
            tx.commit()
        integrator(uow).integrate()
        with uow() as tx:
            head = tx.transparency.head("t1")
            assert head is not None
            with pytest.raises(Conflict):
                tx.transparency.append("t1", 0, [], {}, attrs.evolve(head, size=3))

    @pytest.mark.spec("C16 log-export")
    def test_leaves_by_index_and_heads_by_time(self, uow: UnitOfWorkFactory) -> None:
        """Leaves in an index range in order; the heads around an instant; records by id."""
        records, _ = build_chain([{} for _ in range(5)])
        clock = FixedClock(NOW)
        with uow() as tx:
            for record in records[:2]:
                tx.audit.append(record)
            tx.commit()
        LogIntegrator(uow, KEYS, clock).integrate()  # a head of 2 at NOW
        clock.advance(60)
        with uow() as tx:
            for record in records[2:]:
                tx.audit.append(record)
            tx.commit()
        LogIntegrator(uow, KEYS, clock).integrate()  # a head of 5 a minute later
        minute = timedelta(seconds=60)
        with uow() as tx:
            log = tx.transparency
            assert [leaf.audit_id for leaf in log.leaves_between("t1", 1, 4)] == [
                "audit-2",
                "audit-3",
                "audit-4",
            ]
            assert [leaf.leaf_index for leaf in log.leaves_between("t1", 3, 99)] == [3, 4]
            assert log.leaves_between("t2", 0, 5) == []
            sizes = [
                (h.size if h else None)
                for h in (
                    log.head_before("t1", NOW - minute),
                    log.head_before("t1", NOW),
                    log.head_before("t1", NOW + 2 * minute),
                    log.head_after("t1", NOW),
                    log.head_after("t1", NOW + timedelta(seconds=1)),
                    log.head_after("t1", NOW + 2 * minute),
                    log.head_before("t2", NOW + 2 * minute),
                )
            ]
            assert sizes == [None, 2, 5, 2, 5, None, None]
            found = tx.audit.many("t1", ["audit-1", "audit-5", "missing"])
            assert {k: v.attempt for k, v in found.items()} == {"audit-1": 1, "audit-5": 5}
            assert tx.audit.many("t2", ["audit-1"]) == {}
            assert log.lock("t1", wait=True)  # a free log is taken at once, waiting or not


__all__ = ["TransparencyConformance", "integrator", "reference_root"]
