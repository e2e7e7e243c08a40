"""Signers for tests of audit writes that fail."""

from ecp_core.signing import Ed25519Signer, PublicSigningKey


class FailingSigner:
    """A signer whose key store is unreachable: every audit write raises.

    It publishes ``good``'s public key, so chains it failed to extend still verify under it.
    """

    def __init__(self, good: Ed25519Signer) -> None:
        """Fail in the name of ``good``."""
        self._good = good
        self.key_id = good.key_id

    def sign_text(self, text: str) -> str:  # noqa: ARG002 - the port's signature
        """Raise, as a signer whose key store is away does."""
        raise RuntimeError("key store unreachable")

    def published(self) -> PublicSigningKey:
        """The good signer's public key."""
        return self._good.published()
