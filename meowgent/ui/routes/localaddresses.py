"""This machine's own IP addresses: what a page bound to 0.0.0.0 (or ::) may be reached at.

Read from the network interfaces with getifaddrs(3), the call `ip addr` and `ifconfig` make,
through ctypes: every address of every interface, IPv4 and IPv6, primary or not, in
microseconds and without DNS. Where libc has no getifaddrs (Windows), the addresses the
machine's own name resolves to. A DHCP lease can change them, so `LocalAddresses` reads them
again when its copy is a few seconds old.
"""

from __future__ import annotations

import ctypes
import ipaddress
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

REFRESH_SECONDS = 10.0
"""How old the list may get: a new address is served, and a released one refused, within this time."""


class _IfAddrs(ctypes.Structure):
    """`struct ifaddrs` (the same first fields on Linux, macOS and the BSDs)."""


_IfAddrs._fields_ = [
    ("next", ctypes.POINTER(_IfAddrs)),
    ("name", ctypes.c_char_p),
    ("flags", ctypes.c_uint),
    ("addr", ctypes.c_void_p),
    ("netmask", ctypes.c_void_p),
    ("broadaddr", ctypes.c_void_p),
    ("data", ctypes.c_void_p),
]

# Where the address sits inside `struct sockaddr_in` / `sockaddr_in6`, after the family and the port
# (and the flow label for IPv6); the same offsets on every platform with getifaddrs.
_ADDRESS_AT = {socket.AF_INET: (4, 4), socket.AF_INET6: (8, 16)}


def interface_addresses() -> frozenset[IPAddress]:
    """Every address of this machine's network interfaces, loopback included."""
    try:
        libc = ctypes.CDLL(None)
        getifaddrs, freeifaddrs = libc.getifaddrs, libc.freeifaddrs
    except (OSError, AttributeError, TypeError):  # no getifaddrs in this C library (Windows)
        return _addresses_of_own_name()
    head = ctypes.POINTER(_IfAddrs)()
    if getifaddrs(ctypes.byref(head)) != 0:
        return _addresses_of_own_name()
    found: set[IPAddress] = set()
    try:
        entry = head
        while entry:
            address = _address(entry.contents.addr)
            if address is not None:
                found.add(address)
            entry = entry.contents.next
    finally:
        freeifaddrs(head)
    return frozenset(found)


def _address(sockaddr: int | None) -> IPAddress | None:
    if not sockaddr:
        return None
    # Linux: a 16-bit family first; macOS and the BSDs: a length byte, then an 8-bit family.
    if sys.platform.startswith("linux"):
        family = ctypes.c_uint16.from_address(sockaddr).value
    else:
        family = ctypes.c_uint8.from_address(sockaddr + 1).value
    if family not in _ADDRESS_AT:
        return None
    offset, size = _ADDRESS_AT[family]
    return ipaddress.ip_address(ctypes.string_at(sockaddr + offset, size))


def _addresses_of_own_name() -> frozenset[IPAddress]:
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None)
    except OSError:
        infos = []
    found = {ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos}
    return frozenset(found | {ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1")})


class LocalAddresses:
    """This machine's addresses, read again when older than `refresh` seconds."""

    def __init__(
        self,
        read: Callable[[], Iterable[IPAddress]] = interface_addresses,
        *,
        refresh: float = REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._read = read
        self._refresh = refresh
        self._clock = clock
        self._lock = threading.Lock()
        self._known: frozenset[IPAddress] = frozenset()
        self._read_at: float | None = None

    def __contains__(self, name: object) -> bool:
        """Whether `name` is an IP literal (`192.168.1.5`, `fe80::1`, with or without a zone) of this machine."""
        if not isinstance(name, str):
            return False
        try:
            address = ipaddress.ip_address(name.partition("%")[0])
        except ValueError:
            return False
        return address in self.current()

    def current(self) -> frozenset[IPAddress]:
        with self._lock:
            now = self._clock()
            if self._read_at is None or now - self._read_at >= self._refresh:
                self._known = frozenset(self._read())
                self._read_at = now
            return self._known
