"""Writes one sealed record per node attempt, extending the run's chain inside a unit of work."""

from collections.abc import Callable

import attrs

from ecp_core.audit.chain import seal
from ecp_core.audit.record import SALTED_DIGEST_VERSION
from ecp_core.audit.salted import new_salt
from ecp_core.audit.service import digest_version_for
from ecp_core.ports.audit import WithAudit
from ecp_core.ports.system import Clock, IdFactory, Signer
from ecp_core.rollouts.model import METHOD_VERSION
from ecp_core.runs.run.attempts import AttemptRecord
from ecp_core.runs.run.model import Run


def _with_rollout(attempt: AttemptRecord, run: Run) -> AttemptRecord:
    """The first attempt of a run a rollout assigned, saying which arm and why (ADR 0089)."""
    rollout = {
        "rollout_id": run.rollout_id,
        "arm": run.arm,
        "graph_version_ref": run.graph_version_ref,
        "method_version": METHOD_VERSION,
        "reason": "the rollout active on the deployment assigned this arm from an HMAC of the "
        "run's unit under the rollout's key",
    }
    metadata = attempt.execution_metadata
    merged = (
        {**metadata, "rollout": rollout} if isinstance(metadata, dict) else {"rollout": rollout}
    )
    return attrs.evolve(attempt, execution_metadata=merged)


class AuditWriter:
    """Seals attempts into records and appends them under the run's locked chain head."""

    def __init__(
        self,
        clock: Clock,
        ids: IdFactory,
        signer: Signer | None,
        salts: Callable[[], bytes] = new_salt,
    ) -> None:
        """Sign with ``signer`` (None writes unsigned records, which verification reports).

        ``salts`` draws each version 3 record's salt (32 random bytes from :mod:`secrets`).
        """
        self._clock = clock
        self._ids = ids
        self._signer = signer
        self._salts = salts

    def write(self, uow: WithAudit, run: Run, attempt: AttemptRecord) -> int:
        """Append ``attempt`` to ``run``'s chain; return its attempt number (the chain's length).

        The record uses the digest version the run's tenant has chosen at this moment.
        """
        head = uow.audit.head(run.run_id)
        number = 1 if head is None else head.attempt + 1
        version = digest_version_for(uow.audit, run.tenant_id)
        if number == 1 and run.rollout_id is not None:
            attempt = _with_rollout(attempt, run)
        record = seal(
            previous_record_digest=None if head is None else head.record_digest,
            signer=self._signer,
            created_at=self._clock.now(),
            digest_version=version,
            salt=self._salts() if version == SALTED_DIGEST_VERSION else None,
            audit_id=self._ids.new_id(),
            run_id=run.run_id,
            tenant_id=run.tenant_id,
            deployment_ref=run.deployment_ref,
            graph_version_ref=run.graph_version_ref,
            attempt=number,
            **attrs.asdict(attempt, recurse=False),
        )
        uow.audit.append(record)
        return number
