"""The server's words for the configuration a core answer names: its settings (ADR 0072).

The core says what an answer depends on in its own terms (:class:`ecp_core.errors.Configurable`);
where the server answers (a problem's ``detail``, a blocker's ``remediation``) it adds which of
its settings configure that, from the one settings table.
"""

from collections.abc import Sequence

import attrs

from ecp_core.certification.blockers import BLOCKER_CONFIGURATION, BlockerCode
from ecp_core.certification.model import CertificationBlocker
from ecp_core.errors import Configurable
from ecp_http.config.table.actions import SECRET, SECRETS_DIR
from ecp_http.config.table.models import BACKTEST_DIGEST_KEY, CONNECTORS_FILE, MODEL_CATALOG
from ecp_http.config.table.serving import AUDIT_SIGNING_KEY

SETTINGS_OF: dict[Configurable, str] = {
    Configurable.MODEL_CATALOG: MODEL_CATALOG.name,
    Configurable.BACKTEST_DIGEST_KEY: BACKTEST_DIGEST_KEY.name,
    Configurable.CONNECTOR_DEFINITIONS: CONNECTORS_FILE.name,
    Configurable.SECRET_STORE: f"{SECRET.name} or {SECRETS_DIR.name}",
    Configurable.AUDIT_SIGNING_KEY: AUDIT_SIGNING_KEY.name,
}
"""The settings that configure each piece the core names."""


def in_server_terms(text: str, configuration: Sequence[Configurable]) -> str:
    """``text``, then the settings that configure what it names (``text`` alone when none)."""
    if not configuration:
        return text
    return f"{text} (server settings: {' and '.join(SETTINGS_OF[c] for c in configuration)})"


def blocker_in_server_terms(blocker: CertificationBlocker) -> CertificationBlocker:
    """``blocker`` with its remediation naming the setting that lifts it, when one does."""
    needed = BLOCKER_CONFIGURATION.get(BlockerCode(blocker.code))
    if needed is None:
        return blocker
    return attrs.evolve(blocker, remediation=in_server_terms(blocker.remediation, (needed,)))


__all__ = ["SETTINGS_OF", "blocker_in_server_terms", "in_server_terms"]
