"""Standard Webhooks signing: whsec_ secrets, v1 signatures, the secrets that sign at a time.

The ``standardwebhooks`` library (the reference implementation) checks our signatures here; the
integration tests check it again on real deliveries.
"""

import base64
import hashlib
import hmac
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st
from standardwebhooks import Webhook

from ecp_core.testing.conformance.webhooks import subscription
from ecp_core.webhooks.signing import (
    new_secret,
    secret_problem,
    sign_body,
    signing_key,
    standard_headers,
    standard_signature,
)

pytestmark = pytest.mark.unit

BODY = b'{"event_id":"e-1","event_type":"run.completed"}'
KEY = bytes(range(32))
WHSEC = "whsec_" + base64.b64encode(KEY).decode()


@pytest.mark.spec("C11 whsec-secrets")
def test_a_whsec_secret_is_keyed_by_its_decoded_bytes():
    assert signing_key(WHSEC) == KEY
    assert signing_key(WHSEC.rstrip("=")) == KEY  # padding may be left out, as the library allows
    assert sign_body(WHSEC, BODY) == hmac.new(KEY, BODY, hashlib.sha256).hexdigest()


@pytest.mark.spec("C11 whsec-secrets")
def test_a_plain_secret_is_keyed_by_its_text_as_before():
    plain = "a-long-enough-secret"
    assert signing_key(plain) == plain.encode()
    assert secret_problem(plain) is None
    assert sign_body(plain, BODY) == hmac.new(plain.encode(), BODY, hashlib.sha256).hexdigest()


@pytest.mark.spec("C11 whsec-secrets")
@pytest.mark.parametrize(
    ("secret", "says"),
    [
        ("whsec_not*base64!at#all", "standard base64"),
        ("whsec_" + base64.urlsafe_b64encode(b"\xfb\xff" * 16).decode(), "standard base64"),
        ("whsec_" + "A" * 33, "standard base64"),  # a length no padding can mend
        ("whsec_" + base64.b64encode(bytes(23)).decode(), "24 to 64 bytes, not 23"),
        ("whsec_" + base64.b64encode(bytes(65)).decode(), "24 to 64 bytes, not 65"),
        ("whsec_", "standard base64"),
    ],
)
def test_a_bad_whsec_secret_is_refused_with_a_reason(secret, says):
    assert says in secret_problem(secret)
    assert signing_key(secret) == secret.encode()  # stored before ADR 0054: keyed by its text


@pytest.mark.spec("C11 whsec-secrets")
def test_made_secrets_are_whsec_with_32_random_bytes():
    made = {new_secret() for _ in range(20)}
    assert len(made) == 20
    for secret in made:
        assert secret.startswith("whsec_")
        assert secret_problem(secret) is None
        assert len(signing_key(secret)) == 32


@pytest.mark.spec("C11 standard-webhooks")
@given(
    key=st.binary(min_size=24, max_size=64),
    body=st.binary(max_size=200).map(lambda raw: raw.decode("latin-1").encode()),
    message_id=st.from_regex(r"[A-Za-z0-9_-]{1,40}", fullmatch=True),
)
def test_the_reference_library_signs_exactly_as_we_do(key, body, message_id):
    secret = "whsec_" + base64.b64encode(key).decode()
    at = datetime(2026, 11, 22, 7, 0, 0, tzinfo=UTC)
    ours = standard_signature(secret, message_id, int(at.timestamp()), body)
    assert ours == Webhook(secret).sign(message_id, at, body.decode())


@pytest.mark.spec("C11 standard-webhooks")
def test_the_headers_carry_one_signature_per_secret_in_order():
    other = "a-plain-secret-0123456789"
    headers = standard_headers([WHSEC, other], "evt-1", 1_790_000_000, BODY)
    assert headers["webhook-id"] == "evt-1"
    assert headers["webhook-timestamp"] == "1790000000"
    first, second = headers["webhook-signature"].split(" ")
    assert first == standard_signature(WHSEC, "evt-1", 1_790_000_000, BODY)
    assert second == standard_signature(other, "evt-1", 1_790_000_000, BODY)
    signed = b"evt-1.1790000000." + BODY
    assert (
        second
        == "v1,"
        + base64.b64encode(hmac.new(other.encode(), signed, hashlib.sha256).digest()).decode()
    )


@pytest.mark.spec("C11 secret-rotation")
def test_the_previous_secret_signs_until_its_expiry_exclusive():
    expires = datetime(2026, 11, 23, 7, 0, tzinfo=UTC)
    rotated = attrs.evolve(
        subscription(secret="new-secret-0123456"),
        previous_secret="old-secret-0123456",
        previous_secret_expires_at=expires,
    )
    before = expires - timedelta(microseconds=1)
    assert rotated.signing_secrets(before) == ("new-secret-0123456", "old-secret-0123456")
    assert rotated.signing_secrets(expires) == ("new-secret-0123456",)
    assert subscription(secret="only-secret-012345").signing_secrets(before) == (
        "only-secret-012345",
    )
