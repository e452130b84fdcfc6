"""Which addresses web_fetch may reach: http(s) URLs whose host resolves only to public addresses.

The check returns the addresses it approved so the caller connects to one of them, never to
a second DNS answer (DNS rebinding).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import httpx

from meowgent.tools.spec import ToolError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str, int], Sequence[str]]
"""(host, port) -> the host's addresses as strings; raises OSError when the name does not resolve."""

ALLOWED_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}
# DNS64 answers with this prefix on IPv6-only networks; the gateway forwards to the IPv4 address in the last 32 bits.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


class BlockedAddress(ToolError):
    """The URL's host is, or resolves to, an address that is not public."""


@dataclass(frozen=True)
class Target:
    """A URL that passed the check, with the addresses to connect to, in the resolver's order."""

    url: httpx.URL
    host: str
    """The host as sent in `Host:` and TLS SNI: IDNA-encoded, no brackets."""
    port: int
    addresses: tuple[str, ...]


def resolve_host(host: str, port: int) -> list[str]:
    """The system resolver's addresses for host, without duplicates."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in infos))


def non_public_reason(address: IPAddress) -> str | None:
    """Why an address is not on the public internet ("loopback", "private", ...), or None if it is."""
    if isinstance(address, ipaddress.IPv6Address):
        # An IPv6 form that carries an IPv4 address reaches that IPv4 address.
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address in _NAT64:
            embedded = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
        if embedded is not None:
            return non_public_reason(embedded)
        if address.is_site_local:
            return "site-local"
    checks = (
        ("unspecified", address.is_unspecified),
        ("loopback", address.is_loopback),
        ("link-local", address.is_link_local),
        ("multicast", address.is_multicast),
        ("reserved", address.is_reserved),
        ("private", address.is_private),
    )
    for reason, applies in checks:
        if applies:
            return reason
    # is_global also knows the shared and special-purpose ranges that have no flag of their own (100.64.0.0/10).
    return None if address.is_global else "non-global"


def parse_url(url: str | httpx.URL) -> httpx.URL:
    """The URL if web_fetch may read it at all (http or https, a host, a valid port); ToolError says why not."""
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        raise ToolError(f"{str(url)!r} is not a valid URL ({exc}).") from None
    if parsed.scheme not in ALLOWED_SCHEMES:
        shown = f"'{parsed.scheme}:'" if parsed.scheme else "no scheme"
        raise ToolError(f"web_fetch reads only http and https URLs; {str(url)!r} has {shown}.")
    if not parsed.raw_host:
        raise ToolError(f"{str(url)!r} has no host name.")
    port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
    if not 0 < port < 65536:
        raise ToolError(f"{str(url)!r} is not a valid URL (port {port} is out of range).")
    return parsed


def check_url(url: str | httpx.URL, *, allow_private: bool, resolve: Resolver = resolve_host) -> Target:
    """The URL ready to connect to, or ToolError: not http(s), no host, unresolvable, or (BlockedAddress) not public.

    With allow_private every resolved address is accepted; the scheme is still checked.
    """
    parsed = parse_url(url)
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
    try:
        addresses = tuple(resolve(host, port))
    except (OSError, UnicodeError) as exc:
        raise ToolError(f"could not find the address of {host} ({exc}).") from None
    if not addresses:
        raise ToolError(f"could not find the address of {host}.")
    if not allow_private:
        for address in addresses:
            reason = non_public_reason(ipaddress.ip_address(address))
            if reason is not None:
                where = f"{host} is" if address == host else f"{host} resolves to {address},"
                raise BlockedAddress(
                    f"refusing {str(url)!r}: {where} a {reason} address, not on the public internet. "
                    "The person can allow private addresses with --allow-private-fetch."
                )
    return Target(url=parsed, host=host, port=port, addresses=addresses)
