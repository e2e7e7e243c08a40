"""Sealed cookie values: they round-trip, and any tampering, another key or expiry is refused."""

import base64
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_http.server.sealing import VERSION, SealBroken, Sealer, derive_key

pytestmark = pytest.mark.unit

PASSWORD = "p" * 16 + "a-cookie-password-of-32-chars!!"
NOW = datetime(2026, 11, 22, 5, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=10)

json_scalars = st.none() | st.booleans() | st.integers(-(2**53), 2**53) | st.text(max_size=40)
payloads = st.dictionaries(
    st.text(max_size=10), json_scalars | st.lists(json_scalars, max_size=4), max_size=6
)
SEALER = Sealer(PASSWORD, "ecp session")


def _raw(sealed: str) -> bytes:
    text = sealed[len(VERSION) :]
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _text(raw: bytes) -> str:
    return VERSION + base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


@pytest.mark.spec("C12 hosted-sessions")
@given(payloads)
def test_a_sealed_value_opens_to_what_was_sealed(data):
    assert SEALER.unseal(SEALER.seal(data, expires_at=LATER), now=NOW) == data


@pytest.mark.spec("C12 hosted-sessions")
@given(payloads, st.data())
def test_any_flipped_byte_is_refused(data, draw):
    raw = bytearray(_raw(SEALER.seal(data, expires_at=LATER)))
    at = draw.draw(st.integers(0, len(raw) - 1))
    raw[at] ^= draw.draw(st.integers(1, 255))
    with pytest.raises(SealBroken):
        SEALER.unseal(_text(bytes(raw)), now=NOW)


@pytest.mark.spec("C12 hosted-sessions")
@given(payloads, st.sampled_from(["replace", "cut", "insert"]), st.data())
def test_any_changed_truncated_or_extended_text_is_refused(data, how, draw):
    sealed = SEALER.seal(data, expires_at=LATER)
    at = draw.draw(st.integers(0, len(sealed) - 1))
    if how == "replace":
        other = draw.draw(st.characters().filter(lambda c: c != sealed[at]))
        changed = sealed[:at] + other + sealed[at + 1 :]
    elif how == "cut":
        changed = sealed[:at]
    else:
        changed = sealed[:at] + draw.draw(st.characters()) + sealed[at:]
    with pytest.raises(SealBroken):
        SEALER.unseal(changed, now=NOW)


@pytest.mark.spec("C12 hosted-sessions")
@given(st.text(max_size=200))
def test_arbitrary_text_never_opens(text):
    with pytest.raises(SealBroken):
        SEALER.unseal(text, now=NOW)


@pytest.mark.spec("C12 hosted-sessions")
def test_another_purpose_or_password_cannot_open_it_and_it_expires():
    sealed = SEALER.seal({"tenant": "acme"}, expires_at=LATER)
    with pytest.raises(SealBroken):
        Sealer(PASSWORD, "ecp login state").unseal(sealed, now=NOW)
    with pytest.raises(SealBroken):
        Sealer(PASSWORD + "x", "ecp session").unseal(sealed, now=NOW)
    with pytest.raises(SealBroken, match="expired"):
        SEALER.unseal(sealed, now=LATER)
    assert SEALER.unseal(sealed, now=LATER - timedelta(seconds=1)) == {"tenant": "acme"}


def test_the_key_is_derived_per_purpose_not_the_password():
    one, two = derive_key(PASSWORD, "ecp session"), derive_key(PASSWORD, "ecp login state")
    assert len(one) == len(two) == 32
    assert one != two
    assert PASSWORD.encode()[:32] not in (one, two)
