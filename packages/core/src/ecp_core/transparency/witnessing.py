"""Gathering witnesses' cosignatures for each new checkpoint, and publishing them with it.

After the integrator signs a tenant's checkpoint, each configured witness (``ECP_LOG_WITNESSES``)
is sent it with a consistency proof from the size that witness last cosigned (learnt from its
409 answer after a restart). Cosignature lines that verify with the witness's key are added to
the stored note, so ``GET /v1/log/checkpoint`` and the bundles carry them. A refusal is returned
to the caller, which logs and counts it: a witness that refuses a checkpoint of ours says the
log forked or was rolled back, which an operator must see.
"""

from collections.abc import Sequence

import attrs

from ecp_core.ports.transparency import WitnessClient
from ecp_core.transparency.notes import NoteError, NoteKey, parse_note
from ecp_core.transparency.service import TransparencyLog
from ecp_core.transparency.witness import add_checkpoint_body

_CONFLICT = 409
_OK = 200


@attrs.frozen
class WitnessEndpoint:
    """A witness: where its ``add-checkpoint`` is, and the key its cosignatures verify with."""

    url: str
    key: NoteKey


@attrs.frozen
class Refusal:
    """A witness that did not cosign, and why."""

    witness: str
    status: int | None
    reason: str


@attrs.define
class Witnessing:
    """Asks every witness to cosign a tenant's newest checkpoint."""

    log: TransparencyLog
    witnesses: Sequence[WitnessEndpoint]
    client: WitnessClient
    _known: dict[tuple[str, str], int] = attrs.field(factory=dict, init=False)

    def cosign(self, tenant_id: str) -> tuple[list[str], list[Refusal]]:
        """The witnesses that cosigned the newest checkpoint (now stored with it), and refusals."""
        head = self.log.head(tenant_id)
        if head is None or not self.witnesses:
            return [], []
        note = parse_note(head.note)
        cosigned, refusals = [], []
        for witness in self.witnesses:
            lines, refusal = self._ask(witness, tenant_id, head.size, head.note)
            if refusal is not None:
                refusals.append(refusal)
                continue
            note = note.with_lines(lines)
            cosigned.append(witness.key.name)
        if cosigned:
            self.log.cosign(tenant_id, head.size, note.render())
        return cosigned, refusals

    def _ask(
        self, witness: WitnessEndpoint, tenant_id: str, size: int, note: str
    ) -> tuple[str, Refusal | None]:
        old = self._known.get((witness.url, tenant_id), 0)
        status, text = None, ""
        for _ in range(2):  # once more after a 409 names the size the witness knows
            if old > size:
                why = f"it cosigned {old} leaves, more than the log's {size}: a rollback or a fork"
                return "", Refusal(witness.key.name, status, why)
            proof = list(self.log.consistency(tenant_id, old, size)) if old else []
            status, text = self.client.add_checkpoint(
                witness.url, add_checkpoint_body(old, proof, note)
            )
            if status != _CONFLICT or not text.strip().isdigit():
                break
            old = int(text.strip())
        if status != _OK:
            return "", Refusal(witness.key.name, status, text.strip()[:300] or "no answer")
        try:
            answered = parse_note(note).with_lines(text)
            valid = answered.verified_by(witness.key) is not None
        except NoteError:
            valid = False
        if not valid:
            return "", Refusal(witness.key.name, status, "its cosignature does not verify")
        self._known[(witness.url, tenant_id)] = size
        own = [
            s.line()
            for s in answered.signatures
            if (s.name, s.key_id) == (witness.key.name, witness.key.id)
        ]
        return "".join(own), None  # lines of keys we do not know are ignored


__all__ = ["Refusal", "WitnessEndpoint", "Witnessing"]
