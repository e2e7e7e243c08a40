"""Project API keys: hashed at rest, shown once, tenant- and role-scoped, revocable."""

import base64
import hashlib
import itertools
import secrets
import string
from datetime import UTC, datetime

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from ecp_core import ActorIdentity, AuthMethod, Ecp, ServiceRole, structure, unstructure
from ecp_core.api_keys import ApiKeyService, CreateApiKeyRequest, hash_key, key_id_of
from ecp_core.api_keys.keys import fingerprint, new_key, new_key_id
from ecp_core.errors import Conflict, NotFound, ValidationFailed
from ecp_core.memory import MemoryStore
from ecp_core.system import FixedClock

pytestmark = pytest.mark.unit

START = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
ADMIN = ActorIdentity(
    subject="ana", auth_method=AuthMethod.BEARER, roles=(ServiceRole.ADMIN,), tenant_id="acme"
)
OTHER_ADMIN = ActorIdentity(
    subject="bo", auth_method=AuthMethod.BEARER, roles=(ServiceRole.ADMIN,), tenant_id="globex"
)


def service(random_bytes=secrets.token_bytes):
    store = MemoryStore()
    clock = FixedClock(START)
    return ApiKeyService(store.unit_of_work, clock, random_bytes), store, clock


def scripted(*chunks):
    """A random source that hands out ``chunks`` in order (each must be the size asked for)."""
    pending = iter(chunks)

    def random_bytes(count):
        chunk = next(pending)
        assert len(chunk) == count
        return chunk

    return random_bytes


def request(name="ci", role=ServiceRole.OPERATOR):
    return CreateApiKeyRequest(name=name, role=role)


def stored_values(store):
    return repr(store.tables.data)


@pytest.mark.spec("§5 project-api-keys", "C2 api-key-header")
def test_a_key_has_256_random_bits_and_a_non_secret_fingerprint():
    keys, _, _ = service()
    created = keys.create(ADMIN, request())
    prefix, key_id, secret = created.key[:4], created.key[4:12], created.key[13:]
    assert (prefix, created.key[12]) == ("ecp_", "_")
    assert key_id == created.key_id
    assert created.fingerprint == f"ecp_{key_id}" == fingerprint(key_id)
    assert created.key.startswith(created.fingerprint + "_")
    assert len(base64.urlsafe_b64decode(secret + "=")) == 32
    assert secret not in created.fingerprint
    assert key_id_of(created.key) == key_id


@pytest.mark.spec("§5 project-api-keys")
def test_only_the_hash_is_stored():
    keys, store, _ = service()
    created = keys.create(ADMIN, request())
    with store.unit_of_work() as tx:
        record = tx.api_keys.get("acme", created.key_id)
    assert record.key_hash == "sha256:" + hashlib.sha256(created.key.encode()).hexdigest()
    assert created.key not in stored_values(store)
    assert created.key[13:] not in stored_values(store)


@pytest.mark.spec("§5 project-api-keys")
def test_the_key_is_shown_once():
    keys, _, _ = service()
    created = keys.create(ADMIN, request())
    assert unstructure(created)["key"] == created.key
    assert "key_hash" not in unstructure(created)
    assert created.key not in repr(created)
    shown_later = [
        unstructure(keys.list("acme")),
        unstructure(keys.get("acme", created.key_id)),
        unstructure(keys.revoke("acme", created.key_id)),
    ]
    for body in shown_later:
        text = repr(body)
        assert created.key not in text
        assert created.key[13:] not in text
        assert "key_hash" not in text
        assert "sha256:" not in text
        assert created.fingerprint in text


@pytest.mark.spec("§5 project-api-keys")
def test_a_key_authenticates_with_its_tenant_and_one_role():
    keys, _, _ = service()
    created = keys.create(ADMIN, request(role=ServiceRole.APPROVER))
    actor = keys.lookup(created.key)
    assert actor == ActorIdentity(
        subject=f"api-key:{created.key_id}",
        auth_method=AuthMethod.API_KEY,
        roles=(ServiceRole.APPROVER,),
        tenant_id="acme",
    )
    assert (created.created_by, created.created_at, created.revoked_at) == ("ana", START, None)


@pytest.mark.spec("§5 project-api-keys", "§5 tenant-isolation")
def test_keys_are_tenant_scoped():
    keys, _, _ = service()
    mine = keys.create(ADMIN, request())
    theirs = keys.create(OTHER_ADMIN, request())
    assert [k.key_id for k in keys.list("acme").api_keys] == [mine.key_id]
    assert [k.key_id for k in keys.list("globex").api_keys] == [theirs.key_id]
    with pytest.raises(NotFound):
        keys.get("acme", theirs.key_id)
    with pytest.raises(NotFound):
        keys.revoke("acme", theirs.key_id)
    assert keys.lookup(theirs.key).tenant_id == "globex"
    assert keys.lookup(mine.key).tenant_id == "acme"


@pytest.mark.spec("§5 project-api-keys")
def test_a_revoked_key_no_longer_authenticates_and_revoking_again_succeeds():
    keys, _, clock = service()
    created = keys.create(ADMIN, request())
    kept = keys.create(ADMIN, request(name="kept"))
    first = clock.advance(60)
    revoked = keys.revoke("acme", created.key_id)
    assert revoked.revoked_at == first
    assert keys.lookup(created.key) is None
    assert keys.lookup(kept.key) is not None
    clock.advance(60)
    assert keys.revoke("acme", created.key_id).revoked_at == first
    listed = {k.key_id: k.revoked_at for k in keys.list("acme").api_keys}
    assert listed == {created.key_id: first, kept.key_id: None}
    with pytest.raises(NotFound):
        keys.revoke("acme", "nosuchid")


def test_ids_not_shaped_like_a_key_id_name_no_key():
    keys, _, _ = service()
    for key_id in ("", "ABCDEFGH", "abcdefg", "abcdefghi", "abcd\x00fgh", "ecp_abcdefgh"):
        with pytest.raises(NotFound):
            keys.revoke("acme", key_id)
        with pytest.raises(NotFound):
            keys.get("acme", key_id)


@pytest.mark.spec("§5 project-api-keys")
def test_malformed_and_unknown_keys_do_not_authenticate():
    keys, _, _ = service()
    created = keys.create(ADMIN, request())
    for presented in (
        "",
        "ecp_",
        created.fingerprint,
        created.key + "A",
        created.key[:-1],
        " " + created.key,
        created.key.upper(),
        "ecp_" + "a" * 8 + "_" + "A" * 43,
        "x" * 10_000,
    ):
        assert keys.lookup(presented) is None, presented


def test_a_colliding_key_id_is_drawn_again():
    same_id, other_id = b"\x00" * 5, b"\x01" * 5
    keys, _, _ = service(scripted(same_id, b"a" * 32, same_id, b"b" * 32, other_id, b"c" * 32))
    first = keys.create(ADMIN, request())
    second = keys.create(OTHER_ADMIN, request())
    assert first.key_id == "aaaaaaaa"
    assert second.key_id == new_key_id(lambda _: other_id)
    assert keys.lookup(first.key).tenant_id == "acme"
    assert keys.lookup(second.key).tenant_id == "globex"


def test_a_random_source_that_never_yields_a_free_id_is_a_conflict():
    keys, _, _ = service(lambda n: b"\x00" * n)
    keys.create(ADMIN, request())
    with pytest.raises(Conflict):
        keys.create(ADMIN, request())


@pytest.mark.spec("C2 api-key-header")
def test_a_short_random_source_is_refused():
    keys, _, _ = service(lambda n: b"\x00" * (n - 1))
    with pytest.raises(ValueError, match="bytes instead of"):
        keys.create(ADMIN, request())


@pytest.mark.spec("C1 list-paging")
def test_listing_pages_with_an_opaque_cursor():
    keys, _, clock = service()
    made = []
    for number in range(5):
        made.append(keys.create(ADMIN, request(name=f"k{number}")).key_id)
        clock.advance(1)
    seen, cursor = [], None
    while True:
        page = keys.list("acme", limit=2, cursor=cursor)
        seen.extend(k.key_id for k in page.api_keys)
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == made
    for bad in ("not-a-cursor", "", base64.urlsafe_b64encode(b"[1, 2]").decode()):
        with pytest.raises(ValidationFailed) as caught:
            keys.list("acme", cursor=bad)
        assert caught.value.errors[0].loc == ("cursor",)
    for limit in (0, 501):
        with pytest.raises(ValidationFailed):
            keys.list("acme", limit=limit)


@pytest.mark.spec("§7 no-extras")
def test_the_create_request_is_strict():
    assert structure({"name": "ci", "role": "viewer"}, CreateApiKeyRequest) == CreateApiKeyRequest(
        name="ci", role=ServiceRole.VIEWER
    )
    assert structure({"name": "Ünïcødé ✓ ci", "role": "admin"}, CreateApiKeyRequest).name == (
        "Ünïcødé ✓ ci"
    )
    cases = [
        ({"name": "ci", "role": "viewer", "key": "mine"}, [(("key",), "unknown property")]),
        ({"name": "", "role": "viewer"}, [(("name",), "must have at least 1 characters")]),
        ({"name": "x" * 201, "role": "viewer"}, [(("name",), "must have at most 200 characters")]),
        ({"name": " ci", "role": "viewer"}, [(("name",), "must not start or end with whitespace")]),
        ({"name": "ci", "role": "owner"}, [(("role",), None)]),
        ({"name": "c\x00i", "role": "viewer"}, [(("name",), None)]),
        ({"name": "c\ni", "role": "viewer"}, [(("name",), None)]),
        ({"name": "\ud800", "role": "viewer"}, [(("name",), None)]),
        ({}, [(("name",), "required"), (("role",), "required")]),
    ]
    for data, expected in cases:
        with pytest.raises(ValidationFailed) as caught:
            structure(data, CreateApiKeyRequest)
        errors = [(e.loc, e.msg) for e in caught.value.errors]
        assert [loc for loc, _ in errors] == [loc for loc, _ in expected], data
        for (_, msg), (_, wanted) in zip(errors, expected, strict=True):
            assert wanted is None or msg == wanted


def test_the_core_wires_the_service():
    ecp = Ecp.in_memory()
    created = ecp.api_keys.create(ADMIN, request(role=ServiceRole.VIEWER))
    assert ecp.api_keys.lookup(created.key).roles == (ServiceRole.VIEWER,)


# Properties --------------------------------------------------------------------------------

key_material = st.tuples(st.binary(min_size=5, max_size=5), st.binary(min_size=32, max_size=32))


@pytest.mark.spec("§5 project-api-keys")
@given(st.lists(key_material, min_size=2, max_size=6, unique_by=lambda pair: pair[0]))
def test_distinct_keys_never_collide_in_lookup(materials):
    keys, _, _ = service(scripted(*itertools.chain.from_iterable(materials)))
    roles = itertools.cycle(ServiceRole)
    tenants = itertools.cycle([ADMIN, OTHER_ADMIN])
    created = [keys.create(next(tenants), request(role=next(roles))) for _ in materials]
    assert len({c.key for c in created}) == len(created)
    assert len({hash_key(c.key) for c in created}) == len(created)
    for made in created:
        actor = keys.lookup(made.key)
        assert actor is not None
        assert (actor.subject, actor.tenant_id, actor.roles) == (
            f"api-key:{made.key_id}",
            made.tenant_id,
            (made.role,),
        )


KEY_ALPHABET = string.ascii_letters + string.digits + "_-" + " ."


@pytest.mark.spec("§5 project-api-keys")
@given(key_material, st.data())
def test_a_key_with_one_character_changed_never_authenticates(material, data):
    keys, _, _ = service(scripted(*material))
    created = keys.create(ADMIN, request())
    position = data.draw(st.integers(0, len(created.key) - 1), label="position")
    replacement = data.draw(
        st.sampled_from(KEY_ALPHABET) | st.characters(codec="utf-8"), label="replacement"
    )
    assume(replacement != created.key[position])
    changed = created.key[:position] + replacement + created.key[position + 1 :]
    assert keys.lookup(changed) is None
    assert keys.lookup(created.key) is not None


@pytest.mark.spec("§5 project-api-keys")
@given(st.text(max_size=80))
def test_arbitrary_text_never_authenticates(presented):
    keys, _, _ = service()
    created = keys.create(ADMIN, request())
    assume(presented != created.key)
    assert keys.lookup(presented) is None


def test_new_key_uses_the_id_it_is_given():
    key = new_key("abcdefgh", lambda n: b"\xff" * n)
    assert key == "ecp_abcdefgh_" + "_" * 42 + "8"
    assert key_id_of(key) == "abcdefgh"
