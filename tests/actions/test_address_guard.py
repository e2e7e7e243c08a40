"""The outbound address guard: every special range, in every wrapping, and resolution once."""

import ipaddress

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ecp_http.outbound import AddressGuard, AddressKind, PinnedTarget, Refusal, address_kind, pin

pytestmark = [pytest.mark.unit, pytest.mark.spec("C7 address-guard")]

K = AddressKind
STRICT = AddressGuard()
LENIENT = AddressGuard(allow_loopback=True, allow_private=True)
GUARDS = [STRICT, AddressGuard(allow_loopback=True), AddressGuard(allow_private=True), LENIENT]
UNLOCKABLE = {K.LOOPBACK, K.PRIVATE}
TEREDO_SERVER = ipaddress.IPv4Address("65.54.227.120")  # a public Teredo server

IPV4_SPECIAL = [
    ("0.0.0.0", K.UNSPECIFIED),  # noqa: S104 - an address under test, never bound
    ("0.1.2.3", K.UNSPECIFIED),
    ("127.0.0.1", K.LOOPBACK),
    ("127.255.255.254", K.LOOPBACK),
    ("10.1.2.3", K.PRIVATE),
    ("172.16.0.1", K.PRIVATE),
    ("172.31.255.255", K.PRIVATE),
    ("192.168.1.1", K.PRIVATE),
    ("169.254.1.1", K.LINK_LOCAL),
    ("169.254.255.255", K.LINK_LOCAL),
    ("169.254.169.254", K.METADATA),
    ("169.254.170.2", K.METADATA),
    ("169.254.170.23", K.METADATA),
    ("100.100.100.200", K.METADATA),
    ("192.0.0.192", K.METADATA),
    ("168.63.129.16", K.METADATA),
    ("100.64.0.1", K.SHARED),
    ("100.127.255.254", K.SHARED),
    ("224.0.0.1", K.MULTICAST),
    ("239.255.255.250", K.MULTICAST),
    ("240.0.0.1", K.RESERVED),
    ("255.255.255.255", K.RESERVED),
    ("192.0.0.8", K.SPECIAL),
    ("192.0.0.170", K.SPECIAL),
    ("192.0.2.1", K.SPECIAL),
    ("192.88.99.1", K.SPECIAL),
    ("198.18.0.1", K.SPECIAL),
    ("198.19.255.254", K.SPECIAL),
    ("198.51.100.7", K.SPECIAL),
    ("203.0.113.9", K.SPECIAL),
]
IPV6_SPECIAL = [
    ("::", K.UNSPECIFIED),
    ("::1", K.LOOPBACK),
    ("fe80::1", K.LINK_LOCAL),
    ("febf::1", K.LINK_LOCAL),
    ("fc00::1", K.PRIVATE),
    ("fd12:3456::1", K.PRIVATE),
    ("fd00:ec2::254", K.METADATA),
    ("fd00:ec2::23", K.METADATA),
    ("fd20:ce::254", K.METADATA),
    ("fec0::1", K.SITE_LOCAL),
    ("feff::1", K.SITE_LOCAL),
    ("ff02::1", K.MULTICAST),
    ("ff0e::1", K.MULTICAST),
    ("100::1", K.SPECIAL),
    ("2001:2::1", K.SPECIAL),
    ("2001:10::1", K.SPECIAL),
    ("2001:db8::1", K.SPECIAL),
    ("3fff::1", K.SPECIAL),
    ("64:ff9b:1:ab::1", K.SPECIAL),
    ("::a9fe:a9fe", K.RESERVED),
    ("::ffff:0:a9fe:a9fe", K.RESERVED),
    ("5f00::1", K.RESERVED),
    ("4000::1", K.RESERVED),
    ("8000::1", K.RESERVED),
    ("fe00::1", K.RESERVED),
]
PUBLIC_IPV4 = [
    "93.184.216.34",
    "8.8.8.8",
    "1.1.1.1",
    "100.63.255.255",
    "100.128.0.0",
    "172.32.0.1",
    "198.20.0.1",
]
PUBLIC_IPV6 = ["2606:4700::1", "2a00:1450:4001::200e", "2001:4860:4860::8888"]


def mapped(v4: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address((0xFFFF << 32) | int(v4))


def six_to_four(v4: ipaddress.IPv4Address, suffix: int = 1) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address((0x2002 << 112) | (int(v4) << 80) | suffix)


def nat64(v4: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(v4))


def nat64_local(v4: ipaddress.IPv4Address) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b:1::")) | int(v4))


def teredo(
    client: ipaddress.IPv4Address, server: ipaddress.IPv4Address = TEREDO_SERVER
) -> ipaddress.IPv6Address:
    return ipaddress.IPv6Address(
        (0x20010000 << 96)
        | (int(server) << 64)
        | (0x8000 << 48)
        | (0x63BF << 32)
        | (~int(client) & 0xFFFFFFFF)
    )


WRAPPINGS = [mapped, six_to_four, nat64, nat64_local, teredo]


def forms(text: str) -> list[ipaddress.IPv4Address | ipaddress.IPv6Address]:
    address = ipaddress.ip_address(text)
    if isinstance(address, ipaddress.IPv6Address):
        return [address]
    return [address, *(wrap(address) for wrap in WRAPPINGS)]


def never_resolve(host, port):
    raise AssertionError(f"{host} is a literal and must not be resolved")


@pytest.mark.parametrize(("text", "kind"), IPV4_SPECIAL + IPV6_SPECIAL)
def test_every_special_range_in_every_wrapping_is_refused(text, kind):
    for address in forms(text):
        assert address_kind(address) is kind, address
        reason = STRICT.refusal(address)
        assert reason is not None, address
        assert kind.value in reason
        lenient = LENIENT.refusal(address)
        assert (lenient is None) is (kind in UNLOCKABLE), address


def test_the_wrapped_forms_name_the_address_inside():
    reason = STRICT.refusal(ipaddress.ip_address("::ffff:a9fe:a9fe"))
    assert reason == "::ffff:a9fe:a9fe embeds 169.254.169.254, which is a cloud metadata address"


@pytest.mark.parametrize(
    "text",
    [
        "169.254.169.254",
        "169.254.170.2",
        "100.100.100.200",
        "192.0.0.192",
        "169.254.7.7",
        "fe80::a9fe:a9fe",
        "fd00:ec2::254",
        "fd20:ce::254",
    ],
)
def test_metadata_and_link_local_are_refused_even_with_both_unlocks(text):
    for address in forms(text):
        assert LENIENT.refusal(address) is not None, address


@pytest.mark.parametrize(
    "url",
    [
        "http://100.100.100.200/latest",
        "http://100.64.0.1/",
        "http://[fec0::1]/",
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "https://[64:ff9b::a9fe:a9fe]/",
        "http://[2002:a9fe:a9fe::]/",
    ],
)
def test_the_issues_examples_are_refused_on_a_strict_guard(url):
    found = pin(url, STRICT, resolver=never_resolve)
    assert isinstance(found, Refusal)


@pytest.mark.parametrize(
    "url",
    ["http://[::ffff:169.254.169.254]/", "http://[::ffff:a9fe:a9fe]/", "http://100.100.100.200/"],
)
def test_metadata_urls_are_refused_with_both_unlocks(url):
    found = pin(url, LENIENT, resolver=never_resolve)
    assert isinstance(found, Refusal)
    assert "metadata" in found.reason


@pytest.mark.parametrize("text", PUBLIC_IPV4 + PUBLIC_IPV6)
def test_public_addresses_are_allowed_in_every_wrapping(text):
    for address in forms(text):
        assert address_kind(address) is K.PUBLIC, address
        assert STRICT.refusal(address) is None


def test_a_non_public_teredo_server_refuses_the_address():
    address = teredo(
        ipaddress.IPv4Address("93.184.216.34"), server=ipaddress.IPv4Address("10.0.0.1")
    )
    assert address_kind(address) is K.PRIVATE
    assert "10.0.0.1" in STRICT.refusal(address)


def test_the_unlock_hint_is_given_only_where_a_setting_helps():
    guard = AddressGuard(unlock_hint="SETTING allows it")
    assert guard.refusal(ipaddress.ip_address("10.0.0.1")).endswith("SETTING allows it")
    assert "SETTING" not in guard.refusal(ipaddress.ip_address("169.254.169.254"))
    assert "SETTING" not in guard.refusal(ipaddress.ip_address("100.64.0.1"))


def test_each_flag_unlocks_only_its_own_range():
    loopback_only = AddressGuard(allow_loopback=True)
    assert loopback_only.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert loopback_only.refusal(ipaddress.ip_address("::1")) is None
    assert loopback_only.refusal(ipaddress.ip_address("10.1.2.3")) is not None
    private_only = AddressGuard(allow_private=True)
    assert private_only.refusal(ipaddress.ip_address("10.1.2.3")) is None
    assert private_only.refusal(ipaddress.ip_address("fd12::1")) is None
    assert private_only.refusal(ipaddress.ip_address("127.0.0.1")) is not None


ipv4 = st.integers(0, 2**32 - 1).map(ipaddress.IPv4Address)
ipv6 = st.integers(0, 2**128 - 1).map(ipaddress.IPv6Address)


@given(ipv4, st.integers(0, 2**80 - 1))
def test_an_ipv4_address_and_its_wrapped_forms_get_the_same_verdict(v4, suffix):
    wrapped = [mapped(v4), six_to_four(v4, suffix), nat64(v4), nat64_local(v4), teredo(v4)]
    kind = address_kind(v4)
    assert [address_kind(w) for w in wrapped] == [kind] * len(wrapped)
    for guard in GUARDS:
        allowed = guard.refusal(v4) is None
        assert [guard.refusal(w) is None for w in wrapped] == [allowed] * len(wrapped)


@given(st.one_of(ipv4, ipv6))
def test_the_flags_unlock_only_loopback_and_private(address):
    kind = address_kind(address)
    if STRICT.refusal(address) is None:
        assert kind is K.PUBLIC
    if LENIENT.refusal(address) is None and STRICT.refusal(address) is not None:
        assert kind in UNLOCKABLE
    if kind in {K.METADATA, K.LINK_LOCAL}:
        assert LENIENT.refusal(address) is not None


@given(st.one_of(ipv4, ipv6))
def test_whatever_the_strict_guard_allows_python_calls_global(address):
    if STRICT.refusal(address) is None:
        inner = address
        if isinstance(address, ipaddress.IPv6Address):
            embedded = (
                address.ipv4_mapped or address.sixtofour or (address.teredo or (None, None))[1]
            )
            if address in ipaddress.ip_network("64:ff9b::/96") or address in ipaddress.ip_network(
                "64:ff9b:1::/48"
            ):
                embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
            inner = embedded or address
        assert inner.is_global, address
        assert not (
            inner.is_multicast or inner.is_reserved or inner.is_link_local or inner.is_loopback
        )


@given(
    st.lists(st.sampled_from(PUBLIC_IPV4 + PUBLIC_IPV6), min_size=1, max_size=3),
    st.sampled_from([text for text, _ in IPV4_SPECIAL + IPV6_SPECIAL]),
    st.integers(0, 3),
)
def test_one_refused_answer_refuses_the_whole_name(good, bad, where):
    answers = [*good[:where], bad, *good[where:]]
    calls = []

    def resolver(host, port):
        calls.append((host, port))
        return answers

    found = pin("https://hooks.example.com/ecp", STRICT, resolver=resolver)
    assert isinstance(found, Refusal)
    assert found.reason.startswith("hooks.example.com: ")
    assert calls == [("hooks.example.com", 443)]


def test_a_pinned_target_keeps_the_name_and_connects_to_the_checked_address():
    found = pin(
        "https://Hooks.Example.com:8443/ecp?x=1",
        STRICT,
        resolver=lambda host, port: ["93.184.216.34", "2606:4700::1"],
    )
    assert isinstance(found, PinnedTarget)
    assert (found.scheme, found.host, found.port) == ("https", "hooks.example.com", 8443)
    assert found.address == ipaddress.ip_address("93.184.216.34")
    assert str(found.connect_url) == "https://93.184.216.34:8443/ecp?x=1"
    assert found.host_header == "hooks.example.com:8443"


def test_names_are_resolved_in_their_ascii_form_and_ipv6_answers_are_bracketed():
    asked = []

    def resolver(host, port):
        asked.append(host)
        return ["2606:4700::1"]

    found = pin("http://bücher.example/x", STRICT, resolver=resolver)
    assert asked == ["xn--bcher-kva.example"]
    assert str(found.connect_url) == "http://[2606:4700::1]/x"
    assert found.host_header == "xn--bcher-kva.example"


def test_an_ipv4_mapped_literal_is_pinned_to_its_ipv4_address():
    found = pin(
        "http://[::ffff:127.0.0.1]:8080/", AddressGuard(allow_loopback=True), resolver=never_resolve
    )
    assert found.address == ipaddress.ip_address("127.0.0.1")


@pytest.mark.parametrize(
    ("url", "answers"),
    [
        ("ftp://example.com/x", ["93.184.216.34"]),
        ("http:///nohost", ["93.184.216.34"]),
        ("http://exa\x80mple.com/", ["93.184.216.34"]),
        ("http://example.com:99999/", ["93.184.216.34"]),
        ("http://example.com/", []),
        ("http://example.com/", ["not-an-address"]),
        ("http://example.com/", OSError("no such name")),
    ],
)
def test_unusable_targets_are_refusals_not_errors(url, answers):
    def resolver(host, port):
        if isinstance(answers, Exception):
            raise answers
        return answers

    assert isinstance(pin(url, STRICT, resolver=resolver), Refusal)


def test_a_zone_on_an_answer_does_not_change_the_verdict():
    assert isinstance(
        pin("http://x.example/", LENIENT, resolver=lambda host, port: ["fe80::1%lo"]), Refusal
    )
    found = pin("http://x.example/", LENIENT, resolver=lambda host, port: ["fd12::1%lo"])
    assert found.address == ipaddress.ip_address("fd12::1")
