"""The log's signing key and the public keys that verify its checkpoints, per tenant.

Each tenant's log has its own origin, ``<origin>/<tenant id>``, and its checkpoints are signed
under that name. The key is the audit signing key (a checkpoint note and a record digest are
different texts, so one key cannot be made to sign one for the other); a rotated audit key keeps
verifying the checkpoints it signed, as it does the records.
"""

import base64
from collections.abc import Callable, Sequence

import attrs

from ecp_core.ports.system import Signer
from ecp_core.signing import PublicSigningKey
from ecp_core.transparency.notes import ED25519, NoteKey, NoteSigner

DEFAULT_LOG_ORIGIN = "ecp.localhost"
"""The origin prefix when none is configured (a server configures its host name)."""


@attrs.frozen
class LogKeys:
    """The origin prefix, the audit signer, and the retired audit keys that still verify."""

    origin: str
    signing: Signer
    retired: Sequence[PublicSigningKey] = ()

    def origin_of(self, tenant_id: str) -> str:
        """The origin line (and key name) of ``tenant_id``'s log."""
        return f"{self.origin}/{tenant_id}"

    def signer(self, tenant_id: str) -> NoteSigner:
        """What signs ``tenant_id``'s checkpoints."""
        public = base64.b64decode(self.signing.published().public_key)
        sign: Callable[[str], bytes] = lambda text: base64.b64decode(self.signing.sign_text(text))  # noqa: E731
        return NoteSigner(self.origin_of(tenant_id), public, sign, ED25519)

    def verifiers(self, tenant_id: str) -> list[NoteKey]:
        """The current key first, then the retired ones, under the tenant's name."""
        name = self.origin_of(tenant_id)
        current = self.signer(tenant_id).key
        retired = [
            NoteKey(name=name, public_key=base64.b64decode(key.public_key), kind=ED25519)
            for key in self.retired
        ]
        return [current, *(key for key in retired if key != current)]


def key_view(key: NoteKey) -> dict[str, str]:
    """How the API and a bundle show a note key: name, key hash, public key, verifier key."""
    return {
        "name": key.name,
        "key_hash": key.id.hex(),
        "public_key": base64.b64encode(key.public_key).decode("ascii"),
        "vkey": key.vkey(),
    }


__all__ = ["DEFAULT_LOG_ORIGIN", "LogKeys", "key_view"]
