"""Use cases of certification: create, read (evaluated now), move, override and withdraw.

Each accepted change stores the certification and appends exactly one event in one unit of
work; a refused one raises before anything is written. Moves hold the certification's row
until they commit, so concurrent moves on one certification serialize, and the evaluation a
move needs is computed inside that unit of work (ADR 0043).
"""

import logging
from collections.abc import Callable
from datetime import datetime
from typing import Generic, TypeVar

import attrs

from ecp_core.certification.blockers import CertificationFacts, evaluate
from ecp_core.certification.checks import (
    actor_id_of,
    check_override_request,
    check_transition_request,
)
from ecp_core.certification.model import (
    Certification,
    CertificationEvent,
    CertificationOverride,
    CertificationOverrideRequest,
    CertificationResponse,
    CertificationState,
    CreateCertificationRequest,
    EventType,
    TransitionRequest,
)
from ecp_core.certification.records import event_of, response_of
from ecp_core.certification.transitions import check_transition
from ecp_core.errors import CertificationRevoked, Conflict, Forbidden, NotFound
from ecp_core.identity import ActorIdentity
from ecp_core.pages import decode_cursor, next_page
from ecp_core.permissions import Permission, permissions_of
from ecp_core.ports.certification import CertificationUnit
from ecp_core.ports.system import Clock, IdFactory

log = logging.getLogger("ecp_core.certification")

LIST_CURSOR = "certifications"

U = TypeVar("U", bound=CertificationUnit)

FactsReader = Callable[[U, str, str, datetime], CertificationFacts]
"""Gathers the facts about a deployment: ``(unit, tenant_id, deployment_ref, now)``."""


class CertificationService(Generic[U]):
    """Certifications of builds over storage ``uow``; ``facts`` reads a deployment's facts."""

    def __init__(
        self, uow: Callable[[], U], clock: Clock, ids: IdFactory, facts: FactsReader[U]
    ) -> None:
        """Wire the service; ``facts`` runs inside the caller's unit of work."""
        self._uow = uow
        self._clock = clock
        self._ids = ids
        self._facts = facts

    def create(
        self, actor: ActorIdentity, request: CreateCertificationRequest
    ) -> tuple[CertificationResponse, bool]:
        """A new ``buildable`` certification with its ``created`` event; ``(it, created)``.

        The same request again returns the stored one; another deployment_ref or workspace_id
        for a stored build is a Conflict.
        """
        tenant, now = actor.tenant_id, self._clock.now()
        key = (request.app_name, request.app_commit, request.image_digest)
        with self._uow() as uow:
            stored = uow.certifications.find(tenant, *key)
            if stored is None:
                certification = Certification(
                    certification_id=self._ids.new_id(),
                    tenant_id=tenant,
                    app_name=request.app_name,
                    app_commit=request.app_commit,
                    image_digest=request.image_digest,
                    deployment_ref=request.deployment_ref,
                    workspace_id=request.workspace_id,
                    state=CertificationState.BUILDABLE,
                    created_at=now,
                    updated_at=now,
                )
                event = event_of(
                    self._ids.new_id(), certification, actor.subject, EventType.CREATED, now
                )
                if uow.certifications.add(certification, event):
                    uow.commit()
                    self._logged(event)
                    return self._response(uow, certification, now), True
                stored = uow.certifications.find(tenant, *key)  # a racing request stored it
                if stored is None:
                    msg = "a certification was neither stored nor found"
                    raise Conflict(msg)
            if (stored.deployment_ref, stored.workspace_id) != (
                request.deployment_ref,
                request.workspace_id,
            ):
                raise Conflict(
                    f"this build is certified as deployment {stored.deployment_ref}"
                    f" (workspace {stored.workspace_id}); a build has one certification"
                )
            return self._response(uow, stored, now), False

    def get(self, tenant_id: str, certification_id: str) -> CertificationResponse:
        """One of the tenant's certifications, evaluated now; NotFound otherwise."""
        now = self._clock.now()
        with self._uow() as uow:
            return self._response(uow, self._require(uow, tenant_id, certification_id), now)

    def page(
        self,
        tenant_id: str,
        *,
        limit: int,
        cursor: str | None = None,
        app_name: str | None = None,
        state: CertificationState | None = None,
    ) -> tuple[list[CertificationResponse], str | None]:
        """The tenant's certifications by id, each evaluated now, and the next page's cursor."""
        after = None if cursor is None else decode_cursor(LIST_CURSOR, cursor, 1)[0]
        now = self._clock.now()
        with self._uow() as uow:
            found = uow.certifications.page(
                tenant_id, limit=limit + 1, after=after, app_name=app_name, state=state
            )
            page, next_cursor = next_page(
                found, limit, LIST_CURSOR, lambda c: (c.certification_id,)
            )
            facts: dict[str, CertificationFacts] = {}  # one reading per deployment
            answers = [self._response(uow, c, now, facts) for c in page]
        return answers, next_cursor

    def transition(
        self, actor: ActorIdentity, certification_id: str, request: TransitionRequest
    ) -> CertificationResponse:
        """Move to ``request.to`` when the table and the evaluation allow it now.

        Promotion needs the ``certification_promote`` permission. A refusal raises (409 with
        the pair named) and writes nothing.
        """
        check_transition_request(request)
        promoting = request.to is CertificationState.PROMOTED
        if promoting and Permission.CERTIFICATION_PROMOTE not in permissions_of(actor.roles):
            raise Forbidden("promotion needs the certification_promote permission")
        now = self._clock.now()
        with self._uow() as uow:
            stored = self._require(uow, actor.tenant_id, certification_id, lock=True)
            facts = self._facts(uow, stored.tenant_id, stored.deployment_ref, now)
            check_transition(stored.state, request.to, evaluate(facts, stored.override, now))
            moved = attrs.evolve(
                stored,
                state=request.to,
                updated_at=now,
                promotion_target_key=request.promotion_target_key
                if promoting
                else stored.promotion_target_key,
            )
            event = event_of(
                self._ids.new_id(),
                moved,
                actor.subject,
                EventType.TRANSITIONED,
                now,
                reason=request.reason,
                promotion_target_key=request.promotion_target_key,
            )
            return self._saved(uow, moved, event, now, {stored.deployment_ref: facts})

    def grant_override(
        self, actor: ActorIdentity, certification_id: str, request: CertificationOverrideRequest
    ) -> CertificationResponse:
        """Grant (or replace) the certification's time-boxed override; one event."""
        now = self._clock.now()
        check_override_request(request, now)
        actor_id = actor_id_of(actor)
        override = CertificationOverride(
            scopes=request.scopes,
            reason=request.reason,
            actor_id=actor_id,
            created_at=now,
            expires_at=request.expires_at,
        )
        with self._uow() as uow:
            stored = self._require_open(uow, actor.tenant_id, certification_id)
            granted = attrs.evolve(stored, override=override, updated_at=now)
            event = event_of(
                self._ids.new_id(),
                granted,
                actor.subject,
                EventType.OVERRIDE_GRANTED,
                now,
                reason=request.reason,
                override=override,
            )
            return self._saved(uow, granted, event, now)

    def withdraw_override(
        self, actor: ActorIdentity, certification_id: str
    ) -> CertificationResponse:
        """Withdraw the stored override (active or expired); NotFound when there is none.

        Allowed on a revoked certification too: it changes no state and waives nothing more.
        """
        now = self._clock.now()
        with self._uow() as uow:
            stored = self._require(uow, actor.tenant_id, certification_id, lock=True)
            if stored.override is None:
                raise NotFound(f"certification {certification_id} has no override")
            withdrawn = attrs.evolve(stored, override=None, updated_at=now)
            event = event_of(
                self._ids.new_id(),
                withdrawn,
                actor.subject,
                EventType.OVERRIDE_WITHDRAWN,
                now,
                override=stored.override,
            )
            return self._saved(uow, withdrawn, event, now)

    def _require(
        self, uow: U, tenant_id: str, certification_id: str, *, lock: bool = False
    ) -> Certification:
        found = uow.certifications.get(tenant_id, certification_id, lock=lock)
        if found is None:
            raise NotFound(f"certification {certification_id} not found")
        return found

    def _require_open(self, uow: U, tenant_id: str, certification_id: str) -> Certification:
        stored = self._require(uow, tenant_id, certification_id, lock=True)
        if stored.state is CertificationState.REVOKED:
            raise CertificationRevoked(
                f"certification {certification_id} is revoked: no override can be granted"
            )
        return stored

    def _saved(
        self,
        uow: U,
        certification: Certification,
        event: CertificationEvent,
        now: datetime,
        facts: dict[str, CertificationFacts] | None = None,
    ) -> CertificationResponse:
        uow.certifications.save(certification, event)
        uow.commit()
        self._logged(event)
        return self._response(uow, certification, now, facts)

    def _response(
        self,
        uow: U,
        certification: Certification,
        now: datetime,
        facts: dict[str, CertificationFacts] | None = None,
    ) -> CertificationResponse:
        cache = {} if facts is None else facts
        ref = certification.deployment_ref
        if ref not in cache:
            cache[ref] = self._facts(uow, certification.tenant_id, ref, now)
        evaluation = evaluate(
            cache[ref],
            certification.override,
            now,
            certification_id=certification.certification_id,
            state=certification.state,
        )
        events = uow.certifications.events(certification.tenant_id, certification.certification_id)
        return response_of(certification, evaluation, events)

    @staticmethod
    def _logged(event: CertificationEvent) -> None:
        log.info(
            "certification changed",
            extra={
                "tenant_id": event.tenant_id,
                "certification_id": event.certification_id,
                "event_type": event.event_type,
                "state": event.state.value,
            },
        )


__all__ = ["CertificationService", "FactsReader"]
