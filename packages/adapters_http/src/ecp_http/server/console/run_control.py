"""Cancel, pause and resume a run from its page (``run_control``, as the API's routes).

Each form carries the run's control CSRF token; each post calls the core service the API's
``POST /runs/{id}/cancel|pause|unpause`` calls, then returns to the run's page. Cancel needs a
reason and a ticked confirmation; without them nothing is canceled (422).
"""

from starlette.responses import Response

from ecp_core.errors import FieldError, ValidationFailed
from ecp_core.permissions import Permission
from ecp_core.runs.run.model import CancelRunRequest, PauseRequest
from ecp_core.wire import structure
from ecp_http.server.console.browser import Visit, redirect, signed_in


def _checked(visit: Visit) -> tuple[str, str]:
    """The run id and the caller's tenant, once the form's token and the role allow control."""
    run_id = visit.call.path["run_id"]
    visit.check_form(f"run-control:{run_id}")
    return run_id, visit.actor(Permission.RUN_CONTROL).tenant_id


def _reason(visit: Visit) -> str | None:
    return visit.call.form.get("reason", "").strip() or None


def _cancel(visit: Visit) -> Response:
    """Cancel the run and the runs it started, with the form's reason, once confirmed."""
    run_id, _ = _checked(visit)
    if visit.call.form.get("confirm") != "yes":
        msg = "tick the box to confirm: a canceled run cannot go on"
        raise ValidationFailed(
            "the cancellation was not confirmed", errors=[FieldError(loc=("confirm",), msg=msg)]
        )
    request = structure({"reason": _reason(visit) or ""}, CancelRunRequest, what="the cancel form")
    visit.services.ecp.runs.cancel(visit.session.actor(), run_id, request)
    return redirect(f"/console/runs/{run_id}")


def _pause(visit: Visit) -> Response:
    """Pause the run's dispatch."""
    run_id, _ = _checked(visit)
    request = structure({"reason": _reason(visit)}, PauseRequest, what="the pause form")
    visit.services.ecp.runs.pause(visit.session.actor(), run_id, request)
    return redirect(f"/console/runs/{run_id}")


def _unpause(visit: Visit) -> Response:
    """Lift the run's own pause; the dispatcher is woken."""
    run_id, _ = _checked(visit)
    request = structure({"reason": _reason(visit)}, PauseRequest, what="the resume form")
    visit.services.ecp.runs.unpause(visit.session.actor(), run_id, request)
    visit.services.background.wake()
    return redirect(f"/console/runs/{run_id}")


cancel = signed_in(_cancel)
pause = signed_in(_pause)
unpause = signed_in(_unpause)

__all__ = ["cancel", "pause", "unpause"]
