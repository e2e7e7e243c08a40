"""The ``model_call`` built-in action: one call to a catalog model, recorded as measured evidence.

ADR 0037. Arguments ``{"model", "messages", "max_tokens", "temperature"?}``; the output
``{"text", "usage", "cost_usd", "model", "provider_request_id"}`` is merged into the run state.
After a successful call the action writes one execution evidence event for its run,
``cost_measurement`` measured with the exact cost, so the run's model spend reaches the debugger,
decisions and reconciliation without separate ingestion: ``workflow_id`` is the run's graph id and
``workflow_version`` its graph version ref (``<graph_id>@<n>``: a changed prompt or model is a new
graph version, Versioning 6), ``step_id`` the node. The event is written in the attempt's unit of
work (ADR 0098): an attempt that rolls back leaves none, and its retry writes its own. A failed
call fails the attempt (the run ends ``action_error``) with the failure kind first in the message,
and writes no event: a failure never turns into a zero cost.
"""

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import attrs

from ecp_core.constraints import Items, Range, Text, checked
from ecp_core.errors import EcpError, ModelCallFailed, NotFound, ValidationFailed
from ecp_core.evidence.model import CostRole, ExecutionEvent, IngestResult
from ecp_core.evidence.rules import checked as checked_events
from ecp_core.evidence.rules import execution_problems
from ecp_core.models.model import ChatMessage, ModelAnswer, ModelRequest
from ecp_core.money import money_text
from ecp_core.ports.models import ModelProvider
from ecp_core.ports.runs import RunsUnit
from ecp_core.ports.system import Clock, IdFactory
from ecp_core.runs.run.actions import (
    ActionContext,
    ActionRegistry,
    ActionResult,
    ActionSource,
    undeclared,
)
from ecp_core.runs.run.model import Run
from ecp_core.system import SystemClock, UuidV7Factory
from ecp_core.types import Capability, CostMeasurement, SideEffectClass
from ecp_core.wire import structure
from ecp_http.wire.json_schema import SchemaBuilder

ACTION_NAME = "model_call"
FINGERPRINT = "model_call/1"
CAPABILITIES = (Capability.NETWORK_WRITE, Capability.EXTERNAL_API_CALL)
"""What the action does; a node that runs it must declare both, so that policies can deny it."""

RunReader = Callable[[str, str], Run]
"""``(tenant_id, run_id)`` to the run (``Ecp.runs.get``)."""
EvidenceWriter = Callable[[RunsUnit, str, Sequence[ExecutionEvent]], IngestResult]
"""``(unit of work, tenant_id, events)`` stored in the attempt's unit of work
(``Ecp.record_executions_in``, ADR 0098)."""
EvidenceAdmission = Callable[[str, int], None]
"""``(tenant_id, count)``: raises when that many new events could not be stored now
(``Ecp.evidence.admits``)."""


@attrs.frozen(kw_only=True, field_transformer=checked)
class ModelCallArguments:
    """The arguments of ``model_call``: a catalog model ref, the messages, the output limit."""

    model: Annotated[str, Text(1, 200)]
    messages: Annotated[tuple[ChatMessage, ...], Items(1, 1000)]
    max_tokens: Annotated[int, Range(1, 200_000)]
    temperature: Annotated[float, Range(0, 2)] | None = None


class ModelCallActionFailed(Exception):
    """The attempt failed; ``code`` says why (the message is ``"<code>: <detail>"``).

    The code is a :class:`~ecp_core.models.model.CallFailure` value for a failed provider call,
    else ``invalid_arguments``, ``unknown_model``, ``undeclared_capabilities`` or
    ``evidence_unrecorded``.
    """

    def __init__(self, code: str, detail: str) -> None:
        """A failure with a stable ``code`` and a sentence that never holds a key."""
        super().__init__(f"{code}: {detail}")
        self.code = code
        self.detail = detail


def arguments_schema() -> dict[str, Any]:
    """The JSON Schema of the arguments, generated from :class:`ModelCallArguments`."""
    builder = SchemaBuilder()
    builder.ref(ModelCallArguments)
    schema = dict(builder.components[ModelCallArguments.__name__])
    message = builder.components.get(ChatMessage.__name__)
    if message is not None:  # inline the message schema: the listing shows one object
        properties = dict(schema["properties"])
        properties["messages"] = {**properties["messages"], "items": message}
        schema["properties"] = properties
    return schema


def parse_arguments(arguments: Mapping[str, Any]) -> ModelCallArguments:
    """The arguments as a model; ModelCallActionFailed ``invalid_arguments`` naming each field."""
    try:
        return structure(dict(arguments), ModelCallArguments, what="model_call arguments")
    except ValidationFailed as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, error.loc)) or 'arguments'}: {error.msg}" for error in exc.errors
        )
        raise ModelCallActionFailed("invalid_arguments", problems) from None


class ModelCallAction:
    """The ``model_call`` handler over a model provider; :meth:`attach` wires its evidence."""

    def __init__(
        self,
        models: ModelProvider,
        *,
        timeout_seconds: float,
        clock: Clock | None = None,
        ids: IdFactory | None = None,
    ) -> None:
        """Call ``models`` with ``timeout_seconds`` per try; ``ids`` names evidence events."""
        self._models = models
        self._timeout = timeout_seconds
        self._clock = clock or SystemClock()
        self._ids = ids or UuidV7Factory()
        self._runs: RunReader | None = None
        self._evidence: EvidenceWriter | None = None
        self._admits: EvidenceAdmission | None = None

    def attach(
        self, runs: RunReader, evidence: EvidenceWriter, admits: EvidenceAdmission | None = None
    ) -> None:
        """Where runs are read and evidence written, and asked first (set once they exist)."""
        self._runs = runs
        self._evidence = evidence
        self._admits = admits

    def __call__(self, context: ActionContext) -> ActionResult:
        """Call the model; return the answer, and the measured cost's record for the attempt."""
        missing = undeclared(context, CAPABILITIES)
        if missing:
            raise ModelCallActionFailed(
                "undeclared_capabilities",
                f"the node must declare the capabilities {', '.join(missing)} to call a model",
            )
        arguments = parse_arguments(context.arguments)
        if arguments.model not in self._models.catalog:
            raise ModelCallActionFailed(
                "unknown_model", f"{arguments.model!r} is not in the model catalog"
            )
        if self._admits is not None:
            try:
                self._admits(context.tenant_id, 1)
            except EcpError as exc:
                raise ModelCallActionFailed(
                    "evidence_unrecorded",
                    f"the model was not called: its evidence could not be stored: {exc.detail}",
                ) from None
        request = ModelRequest(
            model_ref=arguments.model,
            messages=arguments.messages,
            max_tokens=arguments.max_tokens,
            temperature=arguments.temperature,
        )
        try:
            answer = self._models.call(request, timeout_seconds=self._timeout)
        except ModelCallFailed as exc:
            raise ModelCallActionFailed(exc.failure, exc.detail) from None
        except NotFound as exc:
            raise ModelCallActionFailed("unknown_model", exc.detail) from None
        write = self._record(context, answer)
        output = {
            "text": answer.text,
            "usage": {
                "input_tokens": answer.usage.input_tokens,
                "output_tokens": answer.usage.output_tokens,
            },
            "cost_usd": money_text(answer.cost_usd),
            "model": answer.model_ref,
            "provider_request_id": answer.provider_request_id,
        }
        return ActionResult(output=output, in_attempt=(write,))

    def _record(
        self, context: ActionContext, answer: ModelAnswer
    ) -> Callable[[RunsUnit], IngestResult]:
        """The write of the call's measured execution event, made in the attempt (ADR 0098).

        The event is built and checked here: evidence_unrecorded when it cannot be.
        """
        if self._runs is None or self._evidence is None:
            msg = "model_call is not attached to the run and evidence services"
            raise RuntimeError(msg)
        evidence = self._evidence
        try:
            run = self._runs(context.tenant_id, context.run_id)
            events = [self.event(run, context.node_id, answer)]
            checked_events(events, execution_problems)
        except (EcpError, ValueError, TypeError) as exc:
            detail = exc.detail if isinstance(exc, EcpError) else type(exc).__name__
            raise ModelCallActionFailed(
                "evidence_unrecorded",
                f"the call cost {money_text(answer.cost_usd)} USD but its evidence event "
                f"could not be stored: {detail}",
            ) from None
        return lambda uow: evidence(uow, context.tenant_id, events)

    def event(self, run: Run, node_id: str, answer: ModelAnswer) -> ExecutionEvent:
        """The execution event of one answered call of ``run`` at ``node_id``."""
        entry = self._models.catalog[answer.model_ref]
        event_id = f"model_call:{self._ids.new_id()}"
        metadata: dict[str, Any] = {
            "provider": str(entry.provider),
            "model": entry.model,
            "model_ref": entry.model_ref,
            "family": entry.family,
            "input_tokens": answer.usage.input_tokens,
            "output_tokens": answer.usage.output_tokens,
        }
        if answer.provider_request_id is not None:
            metadata["provider_request_id"] = answer.provider_request_id[:256]
        return ExecutionEvent(
            event_id=event_id,
            workflow_id=run.graph_version_ref.rsplit("@", 1)[0],
            workflow_version=run.graph_version_ref,
            occurred_at=self._clock.now(),
            run_id=run.run_id,
            step_id=node_id,
            dimensions={"deployment_ref": run.deployment_ref[:256]},
            cost_usd=answer.cost_usd,
            cost_measurement=CostMeasurement.MEASURED,
            cost_role=CostRole.CHARGE,
            charge_id=event_id,
            metadata=metadata,
        )


def register_model_call(
    registry: ActionRegistry, models: ModelProvider | None, *, timeout_seconds: float
) -> ModelCallAction | None:
    """Register ``model_call`` over ``models`` (nothing when no catalog is configured)."""
    if models is None:
        return None
    action = ModelCallAction(models, timeout_seconds=timeout_seconds)
    registry.register(
        ACTION_NAME,
        action,
        fingerprint=FINGERPRINT,
        capability_refs=CAPABILITIES,
        side_effect=SideEffectClass.NON_IDEMPOTENT,
        arguments_schema=arguments_schema(),
        source=ActionSource.BUILTIN,
    )
    return action


def attach_model_call(
    registry: ActionRegistry,
    runs: RunReader,
    evidence: EvidenceWriter,
    admits: EvidenceAdmission | None = None,
) -> None:
    """Give a registered ``model_call`` its run reader and evidence writer (if it is there)."""
    action = registry.get(ACTION_NAME)
    if isinstance(action, ModelCallAction):
        action.attach(runs, evidence, admits)


__all__ = [
    "ACTION_NAME",
    "CAPABILITIES",
    "FINGERPRINT",
    "EvidenceAdmission",
    "EvidenceWriter",
    "ModelCallAction",
    "ModelCallActionFailed",
    "ModelCallArguments",
    "RunReader",
    "arguments_schema",
    "attach_model_call",
    "parse_arguments",
    "register_model_call",
]
