"""One guard for every outbound call: which addresses may be reached, resolved once and pinned.

Webhooks use it; the ``http_request`` action and the identity, merchant and model providers that
tenants configure are meant to use it too (ADR 0016). A URL's host is resolved once, every answer is
checked, and the connection goes to the checked address: the URL names the IP literal while ``Host``
and TLS (SNI and certificate check) keep the name.
"""

import enum
import ipaddress
import socket
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TypeAlias

import attrs
import httpx

Address: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver: TypeAlias = Callable[[str, int], Sequence[str]]
"""Answers the addresses (as text) that a host name has, given the port to be contacted."""


class AddressKind(enum.Enum):
    """What an address is, as far as outbound calls care; the value completes "X is …"."""

    PUBLIC = "a public address"
    LOOPBACK = "a loopback address"
    PRIVATE = "a private address"
    METADATA = "a cloud metadata address"
    LINK_LOCAL = "a link-local address"
    SHARED = "in the shared address space 100.64.0.0/10"
    SITE_LOCAL = "a site-local address"
    MULTICAST = "a multicast address"
    UNSPECIFIED = "an unspecified address"
    RESERVED = "a reserved address"
    SPECIAL = "a special-purpose address (protocol, documentation or benchmarking range)"


def _nets(
    kind: AddressKind, *cidrs: str
) -> list[tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, AddressKind]]:
    return [(ipaddress.ip_network(cidr), kind) for cidr in cidrs]


# Known cloud metadata and instance-service endpoints; refused even where their range is allowed.
METADATA_ADDRESSES = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OCI, OpenStack, DigitalOcean … instance metadata
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "169.254.170.23",  # AWS EKS Pod Identity agent
        "100.100.100.200",  # Alibaba Cloud instance metadata
        "192.0.0.192",  # Oracle Cloud (classic) instance metadata
        "168.63.129.16",  # Azure WireServer (host agent: certificates, extension settings)
        "fd00:ec2::254",  # AWS instance metadata over IPv6
        "fd00:ec2::23",  # AWS EKS Pod Identity agent over IPv6
        "fd20:ce::254",  # Google Compute Engine metadata over IPv6
    )
)

# The ranges do not overlap; METADATA_ADDRESSES, which sit inside some of them, are checked first.
_RANGES = (
    _nets(AddressKind.UNSPECIFIED, "0.0.0.0/8", "::/128")
    + _nets(AddressKind.LOOPBACK, "127.0.0.0/8", "::1/128")
    + _nets(AddressKind.LINK_LOCAL, "169.254.0.0/16", "fe80::/10")
    + _nets(AddressKind.SHARED, "100.64.0.0/10")
    + _nets(AddressKind.SITE_LOCAL, "fec0::/10")
    + _nets(AddressKind.PRIVATE, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7")
    + _nets(AddressKind.MULTICAST, "224.0.0.0/4", "ff00::/8")
    + _nets(
        AddressKind.SPECIAL,
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # TEST-NET-1
        "192.88.99.0/24",  # deprecated 6to4 relay anycast
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # TEST-NET-2
        "203.0.113.0/24",  # TEST-NET-3
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments (benchmarking, ORCHID …)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
    )
    + _nets(AddressKind.RESERVED, "240.0.0.0/4")  # 255.255.255.255 included
)
_GLOBAL_UNICAST = ipaddress.ip_network("2000::/3")
_MAPPED = ipaddress.ip_network("::ffff:0:0/96")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")
_NAT64_LOCAL_96 = ipaddress.ip_network("64:ff9b:1::/96")


def _embedded(address: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...] | None:
    """The IPv4 addresses a transition form carries (Teredo: server and client), or None."""
    if address in _MAPPED:
        return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
    if address in _NAT64 or address in _NAT64_LOCAL_96:
        return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
    if address.sixtofour is not None:
        return (address.sixtofour,)
    if address.teredo is not None:
        return address.teredo
    return None


def _plain_kind(address: Address) -> AddressKind:
    if address in METADATA_ADDRESSES:
        return AddressKind.METADATA
    for network, kind in _RANGES:
        if address in network:
            return kind
    if isinstance(address, ipaddress.IPv6Address) and address not in _GLOBAL_UNICAST:
        return AddressKind.RESERVED  # IPv4-compatible and -translated forms, 5f00::/16 …
    if not address.is_global or address.is_reserved:
        return AddressKind.SPECIAL  # whatever this Python's registry knows beyond our table
    return AddressKind.PUBLIC


def classify(address: Address) -> tuple[AddressKind, ipaddress.IPv4Address | None]:
    """The kind of ``address``, and the embedded IPv4 address it was decided on, if any.

    IPv4-mapped, 6to4, NAT64 and Teredo forms are judged by the IPv4 address they carry (a
    Teredo server that is not public decides before the client).
    """
    address = _unscoped(address)
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL and address not in _NAT64_LOCAL_96:
            return AddressKind.SPECIAL, None  # a local-use NAT64 layout we cannot read safely
        inner = _embedded(address)
        if inner is not None:
            for server in inner[:-1]:  # a Teredo server
                kind = _plain_kind(server)
                if kind is not AddressKind.PUBLIC:
                    return kind, server
            return _plain_kind(inner[-1]), inner[-1]
    return _plain_kind(address), None


def address_kind(address: Address) -> AddressKind:
    """What ``address`` is once any embedded IPv4 address is unwrapped."""
    return classify(address)[0]


@attrs.frozen(kw_only=True)
class AddressGuard:
    """Which addresses an outbound call may reach: public ones, and what the flags unlock.

    Only loopback and private (RFC 1918, fc00::/7) ranges can be unlocked; link-local, metadata,
    shared, site-local, multicast, reserved, unspecified and special-purpose addresses never.
    ``unlock_hint`` is appended to a refusal that a setting could lift (it names the setting).
    """

    allow_loopback: bool = False
    allow_private: bool = False
    unlock_hint: str = ""

    def refusal(self, address: Address) -> str | None:
        """Why ``address`` may not be contacted, or None when it may."""
        kind, inner = classify(address)
        if (
            kind is AddressKind.PUBLIC
            or (kind is AddressKind.LOOPBACK and self.allow_loopback)
            or (kind is AddressKind.PRIVATE and self.allow_private)
        ):
            return None
        shown = f"{address} embeds {inner}, which is" if inner is not None else f"{address} is"
        reason = f"{shown} {kind.value}"
        if kind in (AddressKind.LOOPBACK, AddressKind.PRIVATE) and self.unlock_hint:
            reason += f"; {self.unlock_hint}"
        return reason


@attrs.frozen(kw_only=True)
class Refusal:
    """An outbound call that must not happen, and why."""

    reason: str


@attrs.frozen(kw_only=True)
class PinnedTarget:
    """A URL whose host was resolved once and checked: connect to ``address``, speak to ``host``."""

    url: str
    scheme: str
    host: str
    port: int
    address: Address

    @property
    def connect_url(self) -> httpx.URL:
        """The URL with its host replaced by the checked address."""
        return httpx.URL(self.url).copy_with(host=str(self.address), port=self.port)

    @property
    def host_header(self) -> str:
        """The original ``Host`` (ASCII name, port when it is not the scheme's default)."""
        return httpx.URL(self.url).netloc.decode("ascii")


def resolve_host(host: str, port: int) -> list[str]:
    """The system resolver (``socket.getaddrinfo``) for TCP."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def _unscoped(address: Address) -> Address:
    if isinstance(address, ipaddress.IPv6Address) and address.scope_id is not None:
        return ipaddress.IPv6Address(int(address))
    return address


def _literal(text: str) -> Address | None:
    try:
        return _unscoped(ipaddress.ip_address(text))
    except ValueError:
        return None


def _resolve(host: str, port: int, resolver: Resolver) -> list[Address] | Refusal:
    try:
        answers = list(resolver(host, port))
    except (OSError, UnicodeError, ValueError) as exc:
        return Refusal(reason=f"{host} does not resolve: {exc}")
    addresses = []
    for answer in answers:
        address = _literal(answer)
        if address is None:
            return Refusal(reason=f"{host} resolved to {answer!r}, which is not an address")
        addresses.append(address)
    return addresses or Refusal(reason=f"{host} resolved to no address")


def pin(
    url: str, guard: AddressGuard, *, resolver: Resolver = resolve_host
) -> PinnedTarget | Refusal:
    """Resolve ``url``'s host once, check every address, and pin the first one.

    A host that is an IP literal is not resolved. Any refused or unreadable answer refuses the
    whole target, so a name cannot slip one bad address in among good ones.
    """
    try:
        parsed = httpx.URL(url)
        host = parsed.raw_host.decode("ascii")
    except (httpx.InvalidURL, UnicodeError) as exc:
        return Refusal(reason=f"the URL is malformed: {exc}")
    if parsed.scheme not in ("http", "https") or not host:
        return Refusal(reason="the target must be an http(s) URL with a host")
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    if not 0 < port < 2**16:
        return Refusal(reason=f"the port {port} is out of range")
    literal = _literal(host)
    found = [literal] if literal is not None else _resolve(host, port, resolver)
    if isinstance(found, Refusal):
        return found
    for address in found:
        reason = guard.refusal(address)
        if reason is not None:
            return Refusal(reason=reason if literal is not None else f"{host}: {reason}")
    chosen = found[0]
    if isinstance(chosen, ipaddress.IPv6Address) and chosen.ipv4_mapped is not None:
        chosen = chosen.ipv4_mapped  # the kernel would connect to the IPv4 address anyway
    return PinnedTarget(url=url, scheme=parsed.scheme, host=host, port=port, address=chosen)


def outbound_client(timeout_seconds: float) -> httpx.Client:
    """A client for pinned calls: no redirects, and nothing taken from the environment.

    A proxy from ``HTTP_PROXY`` would resolve the name itself and defeat the pin.
    """
    return httpx.Client(timeout=timeout_seconds, follow_redirects=False, trust_env=False)


@contextmanager
def pinned_stream(
    client: httpx.Client,
    method: str,
    target: PinnedTarget,
    *,
    content: bytes | None = None,
    headers: Mapping[str, str] | None = None,
) -> Iterator[httpx.Response]:
    """Send one request to the pinned address and stream its answer; redirects are not followed.

    ``Host`` is the original host. Over https the SNI name and the certificate check use the
    original host too, and the connection is not kept alive: the pool is keyed by address, and
    a connection verified for one name must not carry a request for another.
    """
    sent = {key: value for key, value in (headers or {}).items() if key.lower() != "host"}
    sent["Host"] = target.host_header
    extensions: dict[str, str] = {}
    if target.scheme == "https":
        extensions["sni_hostname"] = target.host
        sent["Connection"] = "close"
    request = client.build_request(
        method, target.connect_url, content=content, headers=sent, extensions=extensions
    )
    response = client.send(request, stream=True, follow_redirects=False)
    try:
        yield response
    finally:
        response.close()
