"""Audit chain throughput: appends, verification (digests, signatures) and raw SHA-256.

Run as ``python bench/audit_chain.py [--records N] [--rounds R]``. It prints figures and asserts
only that the chains it builds verify, never anything about timing. The N records are written
through the real path, AuditWriter.write inside a MemoryStore unit of work, sealed and signed with
Ed25519, as R run chains of N/R records (one chain per measuring round).

- append: records per second through ``AuditWriter.write`` plus the unit of work.
- verify (signed): records per second through ``verify_chain`` with signatures and chain head.
- verify (digest only): the same chains with signatures stripped, so this is the unkeyed axis.
- digest work: the nine commitments and the record digest recomputed with public functions.
- raw sha256: ``hashlib.sha256`` over the bytes that verification hashes (nine commitment inputs
  plus the hashed form of each record), canonicalised in advance.

The ratios to raw sha256 are medians over the R rounds; each round times raw hashing and both
verifications of one chain, in a rotating order.
"""

import argparse
import base64
import hashlib
import json
import os
import random
import statistics
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import attrs
import nacl.signing
import rfc8785

from ecp_core.audit import (
    PII_FIELDS,
    AuditVerificationResponse,
    Ed25519Signer,
    KeyRing,
    commitment,
    verify_chain,
)
from ecp_core.audit.chain import compute_digest, hashed_bytes
from ecp_core.audit.record import NodeAuditRecord, RunChain
from ecp_core.audit.verify import verify_run_chain
from ecp_core.canonical import FAST_ENCODER, canonical_json
from ecp_core.memory import MemoryStore
from ecp_core.runs.audit.writer import AuditWriter
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import Run
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.types import AttemptStatus, RunStatus

TENANT = "bench-tenant"
RUN_PREFIX = "bench-run-"
NODES = ("classify", "enrich", "review", "notify", "done")
STATUSES = (AttemptStatus.SUCCEEDED, AttemptStatus.SUCCEEDED, AttemptStatus.WAITING_APPROVAL)


def attempt_payload(index: int, rng: random.Random) -> AttemptRecord:
    """A node attempt with a realistic personal-data payload: small nested input and output."""
    node = NODES[index % len(NODES)]
    order = f"A-{100000 + index}"
    return AttemptRecord(
        node_id=node,
        status=STATUSES[index % len(STATUSES)],
        input_snapshot={
            "order": order,
            "customer": {"name": "Zoë Ândersen", "email": f"c{index}@example.com", "tier": "gold"},
            "items": [
                {
                    "sku": f"SKU-{rng.randrange(1000)}",
                    "qty": rng.randrange(1, 5),
                    "price_cents": 1299,
                },
                {"sku": f"SKU-{rng.randrange(1000)}", "qty": 1, "price_cents": 450},
            ],
        },
        output_snapshot={"category": "refund", "score": round(rng.random(), 4), "order": order},
        execution_metadata={
            "node_kind": "action",
            "step": index + 1,
            "action": "classify",
            "fingerprint": "classify/3",
            "capabilities": ["network_read"],
            "side_effect": "none",
            "next_node_id": NODES[(index + 1) % len(NODES)],
            "enforcement": {"decision": "allow", "reason": "within policy"},
        },
        validation_results=[{"rule": "amount_positive", "passed": True}],
        stdout="classified order\n" if index % 4 == 0 else None,
        tool_calls=[{"name": "lookup_order", "arguments": {"order": order}}]
        if index % 3 == 0
        else None,
    )


def timed(action: Callable[[], Any], repeats: int = 1) -> tuple[float, Any]:
    """Seconds ``action`` takes (the best of ``repeats`` runs) and its last result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = action()
        best = min(best, time.perf_counter() - started)
    return best, result


def write_chains(count: int, chains: int, signer: Ed25519Signer) -> tuple[MemoryStore, float]:
    """Append ``count`` attempts over ``chains`` runs through AuditWriter.write; store and time."""
    rng = random.Random(7)
    attempts = [attempt_payload(index, rng) for index in range(count)]
    store = MemoryStore()
    writer = AuditWriter(SystemClock(), UuidV7Factory(), signer)
    now = datetime.now(UTC)
    runs = [
        Run(
            run_id=f"{RUN_PREFIX}{number}",
            tenant_id=TENANT,
            deployment_ref="refunds",
            graph_version_ref="refund-triage@1",
            thread_id=f"{RUN_PREFIX}{number}",
            status=RunStatus.RUNNING,
            created_at=now,
            updated_at=now,
        )
        for number in range(chains)
    ]
    per_chain = -(-count // chains)

    def append_all() -> None:
        for index, attempt in enumerate(attempts):
            with store.unit_of_work() as uow:
                writer.write(uow, runs[index // per_chain], attempt)
                uow.commit()

    seconds, _ = timed(append_all)
    return store, seconds


def digest_work(records: list[NodeAuditRecord]) -> None:
    """What the digest axis recomputes per record, through public functions."""
    for record in records:
        commitments = {field: commitment(getattr(record, field)) for field in PII_FIELDS}
        if commitments != record.pii_commitments or compute_digest(record) != record.record_digest:
            raise AssertionError(record.audit_id)


def contains_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, dict):
        return any(contains_float(item) for item in value.values())
    if isinstance(value, list | tuple):
        return any(contains_float(item) for item in value)
    return False


def hashed_inputs(records: list[NodeAuditRecord]) -> list[bytes]:
    """The canonical bytes verification hashes: nine commitment inputs and the hashed form."""
    blobs: list[bytes] = []
    for record in records:
        blobs.extend(canonical_json(getattr(record, field)) for field in PII_FIELDS)
        blobs.append(hashed_bytes(record))
    return blobs


def raw_hashing(blobs: list[bytes]) -> None:
    sha256 = hashlib.sha256
    for blob in blobs:
        sha256(blob).hexdigest()


def end_to_end(rounds: list[dict[str, float]]) -> float:
    """Median of raw hashing over the store's read plus verification from its texts."""
    return statistics.median(r["raw"] / (r["read"] + r["stored"]) for r in rounds)


def expect_verified(result: AuditVerificationResponse, *, signatures: bool | None) -> None:
    """Stop when a chain the benchmark built does not verify (a bug, not a timing)."""
    if not result.verified or result.signature_verified is not signatures:
        raise SystemExit(f"chain failed to verify: {result}")


def rate(count: int, seconds: float) -> str:
    return f"{count / seconds:>12,.0f} records/s  ({seconds * 1e6 / count:8.2f} µs/record)"


def canonical_comparison(records: list[NodeAuditRecord], sample: int) -> None:
    """canonical_json against rfc8785.dumps and json.dumps(sort_keys=True) on record payloads."""
    payloads: list[Any] = []
    for record in records[:sample]:
        payloads.extend(getattr(record, field) for field in ("input_snapshot", "output_snapshot"))
        payloads.append(record.execution_metadata)
        payloads.append(record.pii_commitments)
    dumps = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode
    contenders: dict[str, Callable[[Any], bytes]] = {
        "ecp canonical_json": canonical_json,
        "rfc8785.dumps": rfc8785.dumps,
        "json.dumps(sort_keys=True)": lambda value: dumps(value).encode("utf-8"),
    }
    outputs: dict[str, list[bytes]] = {}
    print(
        f"\ncanonical JSON on {len(payloads):,} record payloads (snapshots, metadata, commitments)"
    )
    baseline = None
    for name, function in contenders.items():
        seconds, outputs[name] = timed(
            lambda function=function: [function(p) for p in payloads], repeats=3
        )
        per = seconds * 1e6 / len(payloads)
        baseline = baseline or per
        print(f"  {name:<28} {per:8.2f} µs/payload  ({per / baseline:5.2f}x canonical_json)")
    jcs = outputs["rfc8785.dumps"]
    same_jcs = sum(a == b for a, b in zip(outputs["ecp canonical_json"], jcs, strict=True))
    same_json = sum(a == b for a, b in zip(outputs["json.dumps(sort_keys=True)"], jcs, strict=True))
    print(
        f"  byte-identical to rfc8785: canonical_json {same_jcs:,}/{len(payloads):,}, "
        f"json.dumps {same_json:,}/{len(payloads):,}"
    )


def load_note() -> str:
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def stripped_entries(chain: RunChain) -> RunChain:
    """``chain`` with every signature removed: the unkeyed (digest-only) axis."""
    entries = tuple(
        attrs.evolve(entry, signature=None, signing_key_id=None) for entry in chain.entries
    )
    return attrs.evolve(chain, entries=entries)


def interleaved_rounds(
    chains: list[tuple[list[NodeAuditRecord], Any]], store: MemoryStore, ring: KeyRing
) -> list[dict[str, float]]:
    """Per chain (round): seconds of raw hashing, digest-only verification of the records and of
    the store's chain (its kept texts, ADR 0069), the store's read, and signed verification;
    in a rotating order."""
    seen: list[dict[str, float]] = []
    for number, (chain, head) in enumerate(chains):
        stripped = [attrs.evolve(record, signature=None, signing_key_id=None) for record in chain]
        run_id = chain[0].run_id
        with store.unit_of_work() as uow:
            (stored,) = uow.audit.chains(TENANT, [run_id])
        stored_stripped = stripped_entries(stored)
        blobs = hashed_inputs(chain)

        def signed(chain: list[NodeAuditRecord] = chain, head: Any = head) -> None:
            expect_verified(verify_chain(chain, ring, scope="bench", head=head), signatures=True)

        def digest(stripped: list[NodeAuditRecord] = stripped, head: Any = head) -> None:
            expect_verified(verify_chain(stripped, ring, scope="bench", head=head), signatures=None)

        def from_texts(stored: RunChain = stored_stripped) -> None:
            expect_verified(verify_run_chain(stored, ring), signatures=None)

        def read(run_id: str = run_id) -> None:
            with store.unit_of_work() as uow:
                uow.audit.chains(TENANT, [run_id])

        steps: dict[str, Callable[[], Any]] = {
            "raw": lambda blobs=blobs: raw_hashing(blobs),
            "digest": digest,
            "stored": from_texts,
            "read": read,
            "signed": signed,
        }
        names = list(steps)
        shift = number % len(names)
        timing: dict[str, float] = {}
        for name in names[shift:] + names[:shift]:
            timing[name], _ = timed(steps[name])
        seen.append(timing)
    return seen


def signature_context(
    records: list[NodeAuditRecord], signer: Ed25519Signer, ring: KeyRing, signed_per_record: float
) -> None:
    """Ed25519 verification alone (pynacl, and through the key ring) on a sample of records."""
    sample = records[: min(len(records), 10_000)]
    key = nacl.signing.VerifyKey(signer.public_key)
    pairs = [(r.record_digest.encode("ascii"), base64.b64decode(r.signature)) for r in sample]
    nacl_seconds, _ = timed(
        lambda: [key.verify(message, signature) for message, signature in pairs], repeats=3
    )
    ring_seconds, _ = timed(
        lambda: [ring.verify_text(r.signing_key_id, r.record_digest, r.signature) for r in sample],
        repeats=3,
    )

    print(f"\nEd25519 verification (pynacl) on {len(sample):,} records, for context")
    print(f"  VerifyKey.verify                           {rate(len(sample), nacl_seconds)}")
    print(f"  KeyRing.verify_text (with base64, lookup)  {rate(len(sample), ring_seconds)}")
    share = (ring_seconds / len(sample)) / signed_per_record
    print(f"  share of signed verification time          {share:6.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--records", type=int, default=100_000, help="chain length (default 100000)"
    )
    parser.add_argument(
        "--rounds", type=int, default=5, help="run chains, one per measuring round (default 5)"
    )
    arguments = parser.parse_args()
    count, rounds = arguments.records, max(1, min(arguments.rounds, arguments.records))
    signer = Ed25519Signer(bytes(range(32)))
    ring = KeyRing.of([signer])
    print(
        f"audit chain benchmark: {count:,} records in {rounds} run chains, Ed25519-signed"
        f" ({load_note()})"
    )

    store, append_seconds = write_chains(count, rounds, signer)
    chains: list[tuple[list[NodeAuditRecord], Any]] = []
    with store.unit_of_work() as uow:
        for number in range(rounds):
            run_id = f"{RUN_PREFIX}{number}"
            chains.append((uow.audit.for_run(TENANT, run_id), uow.audit.head(run_id)))
    records = [record for chain, _ in chains for record in chain]
    if len(records) != count:
        raise SystemExit(f"expected {count} records, found {len(records)}")
    print(f"  first-tier canonical JSON encoder: {FAST_ENCODER}")
    print(f"  append (AuditWriter.write + unit of work)   {rate(count, append_seconds)}")

    rounds_seen = interleaved_rounds(chains, store, ring)
    seconds = {name: sum(r[name] for r in rounds_seen) for name in rounds_seen[0]}
    signed_seconds, raw_seconds = seconds["signed"], seconds["raw"]
    print(f"  verify_chain, signatures + digests         {rate(count, signed_seconds)}")
    print(f"  verify_chain, digests only (records)       {rate(count, seconds['digest'])}")
    print(f"  verify_run_chain, digests only (store's    {rate(count, seconds['stored'])}")
    print("    chain, proven from its kept texts)")
    print(f"  the store's read of its chains             {rate(count, seconds['read'])}")

    work_seconds, _ = timed(lambda: digest_work(records))
    print(f"  commitments + compute_digest (public API)  {rate(count, work_seconds)}")
    commit_seconds, _ = timed(
        lambda: [commitment(getattr(r, field)) for r in records for field in PII_FIELDS]
    )
    form_seconds, _ = timed(lambda: [compute_digest(r) for r in records])
    print(f"    of which the nine commitments            {rate(count, commit_seconds)}")
    print(f"    of which compute_digest (hashed form)    {rate(count, form_seconds)}")
    slow = sum(contains_float(getattr(r, field)) for r in records for field in PII_FIELDS)
    print(f"    values holding a float: {slow / count:.2f}/record")

    blobs = hashed_inputs(records)
    size = sum(len(blob) for blob in blobs)
    print(f"  raw sha256 over the same canonical bytes   {rate(count, raw_seconds)}")
    print(
        f"    ({len(blobs):,} inputs, {size / count:.0f} bytes/record, "
        f"{size / raw_seconds / 1e6:.0f} MB/s)"
    )

    def median_ratio(numerator: str, denominator: str) -> float:
        return statistics.median(r[numerator] / r[denominator] for r in rounds_seen)

    print(f"\nratios (medians of {len(rounds_seen)} interleaved rounds; {load_note()})")
    print(
        f"  digest-only verification from the store's  {median_ratio('raw', 'stored'):6.3f}"
        "  (target >= 0.25)\n    chain (kept texts) / raw sha256"
    )
    print(f"  the same, with the store's read            {end_to_end(rounds_seen):6.3f}")
    print(f"  digest-only verification of the records    {median_ratio('raw', 'digest'):6.3f}")
    print("    (Python values recomputed) / raw sha256")
    print(f"  digest work (public API) / raw sha256      {raw_seconds / work_seconds:6.3f}")
    print(f"  signed verification / raw sha256           {median_ratio('raw', 'signed'):6.3f}")
    print(f"  signed / digest-only verification time     {median_ratio('signed', 'digest'):6.2f}x")
    signature_context(records, signer, ring, signed_seconds / count)

    canonical_comparison(records, min(count, 5_000))


if __name__ == "__main__":
    main()
