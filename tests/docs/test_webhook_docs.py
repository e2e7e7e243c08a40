"""The receiver guide's verification snippets work on real signatures."""

import base64

import pytest
from tests.support.webhook_guide import guide_verifiers

from ecp_core.webhooks import sign_body
from ecp_core.webhooks.signing import standard_headers

pytestmark = pytest.mark.unit

BODY = b'{"event_id":"e-1","event_type":"run.completed"}'
WHSEC = "whsec_" + base64.b64encode(bytes(range(24))).decode()


@pytest.mark.spec("§5 outbound-signature")
@pytest.mark.parametrize("secret", ["a-long-enough-secret", WHSEC])
def test_the_guides_snippet_verifies_signatures(secret):
    verified = guide_verifiers()["verified"]
    assert verified(secret, BODY, sign_body(secret, BODY))
    assert not verified(secret, BODY + b"\n", sign_body(secret, BODY))


@pytest.mark.spec("C11 standard-webhooks")
@pytest.mark.parametrize("secret", ["a-long-enough-secret", WHSEC])
def test_the_guides_standard_verifiers_agree_with_our_signatures(secret):
    verifiers = guide_verifiers()
    headers = standard_headers([secret], "e-1", 1_790_000_000, BODY)
    verify = verifiers["verify_standard"]
    assert verify(secret, BODY, headers, now=1_790_000_000 + 300)
    assert not verify(secret, BODY, headers, now=1_790_000_000 + 301)
    assert not verify(secret, BODY, headers, now=1_790_000_000 - 301)
    assert not verify(secret, BODY + b" ", headers, now=1_790_000_000)
    assert not verify("another-long-secret", BODY, headers, now=1_790_000_000)
