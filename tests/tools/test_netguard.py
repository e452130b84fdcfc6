"""The address guard: which URLs web_fetch may connect to. Resolvers are injected; no DNS leaves the machine."""

from __future__ import annotations

import ipaddress
import socket

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.tools.netguard import BlockedAddress, check_url, non_public_reason
from meowgent.tools.spec import ToolError


def resolver(table: dict[str, list[str]]):
    def resolve(host: str, port: int) -> list[str]:
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return table[host]

    return resolve


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("127.0.0.1", "loopback"),
        ("127.255.0.9", "loopback"),
        ("::1", "loopback"),
        ("::ffff:127.0.0.1", "loopback"),  # IPv4-mapped IPv6
        ("2002:7f00:1::", "loopback"),  # 6to4 around 127.0.0.1
        ("10.1.2.3", "private"),
        ("172.16.0.1", "private"),
        ("192.168.1.1", "private"),
        ("::ffff:192.168.1.1", "private"),
        ("64:ff9b::a00:1", "private"),  # NAT64 around 10.0.0.1
        ("fd00::1", "private"),
        ("169.254.169.254", "link-local"),  # cloud metadata service
        ("fe80::1", "link-local"),
        ("fe80::1%1", "link-local"),
        ("fec0::1", "site-local"),
        ("224.0.0.1", "multicast"),
        ("ff02::1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::", "unspecified"),
        ("240.0.0.1", "reserved"),
        ("::127.0.0.1", "reserved"),  # deprecated IPv4-compatible form
        ("100.64.0.1", "non-global"),  # carrier-grade NAT
        ("192.0.2.1", "private"),  # documentation range
        ("2001:db8::1", "private"),
        ("8.8.8.8", None),
        ("93.184.216.34", None),
        ("2606:4700::1111", None),
        ("::ffff:8.8.8.8", None),
        ("64:ff9b::808:808", None),
    ],
)
def test_address_classes(address: str, reason: str | None) -> None:
    assert non_public_reason(ipaddress.ip_address(address)) == reason


@given(st.ip_addresses(v=4, network="127.0.0.0/8") | st.ip_addresses(v=4, network="10.0.0.0/8"))
def test_private_ipv4_stays_private_in_every_ipv6_wrapping(address: ipaddress.IPv4Address) -> None:
    mapped = ipaddress.IPv6Address(f"::ffff:{address}")
    six_to_four = ipaddress.IPv6Address((0x2002 << 112) | (int(address) << 80))
    nat64 = ipaddress.IPv6Address(int(ipaddress.IPv6Address("64:ff9b::")) | int(address))
    expected = non_public_reason(address)
    assert expected in ("loopback", "private")
    assert non_public_reason(mapped) == non_public_reason(six_to_four) == non_public_reason(nat64) == expected


@given(st.ip_addresses(v=4))
def test_an_ipv4_address_is_public_exactly_when_python_calls_it_global_and_unicast(
    address: ipaddress.IPv4Address,
) -> None:
    assert (non_public_reason(address) is None) == (address.is_global and not address.is_multicast)


@pytest.mark.parametrize(
    "url",
    [
        "http://0x7f000001/",
        "http://2130706433/",
        "http://127.1/",
        "http://127.0.0.1:8080/admin",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::ffff:7f00:1]/",
        "http://0.0.0.0/",
        "http://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/",
        "http://localhost/",
    ],
)
def test_numeric_and_local_forms_are_refused_after_the_system_resolver_normalizes_them(url: str) -> None:
    # These never reach DNS: the system resolver parses numeric forms itself; localhost is in /etc/hosts.
    with pytest.raises(BlockedAddress, match=r"not on the public internet"):
        check_url(url, allow_private=False)


def test_the_message_names_the_host_and_the_address_it_resolves_to() -> None:
    with pytest.raises(BlockedAddress, match=r"metadata\.test resolves to 169\.254\.169\.254, a link-local address"):
        check_url(
            "http://metadata.test/", allow_private=False, resolve=resolver({"metadata.test": ["169.254.169.254"]})
        )


def test_one_private_address_among_public_ones_is_enough_to_refuse() -> None:
    resolve = resolver({"mixed.test": ["93.184.216.34", "2606:4700::1111", "10.0.0.7"]})
    with pytest.raises(BlockedAddress, match=r"10\.0\.0\.7, a private address"):
        check_url("https://mixed.test/", allow_private=False, resolve=resolve)


def test_a_public_host_gives_every_address_in_the_resolver_order() -> None:
    resolve = resolver({"xn--bcher-kva.example": ["93.184.216.34", "2606:4700::1111"]})
    target = check_url("https://Bücher.example:8443/a?b=1", allow_private=False, resolve=resolve)
    assert target.host == "xn--bcher-kva.example"
    assert target.port == 8443
    assert target.addresses == ("93.184.216.34", "2606:4700::1111")


def test_the_switch_lets_private_addresses_through() -> None:
    target = check_url("http://nas.lan/", allow_private=True, resolve=resolver({"nas.lan": ["192.168.1.20"]}))
    assert target.addresses == ("192.168.1.20",)
    assert target.port == 80


@pytest.mark.parametrize(
    ("url", "named"),
    [
        ("file:///etc/passwd", "'file:'"),
        ("ftp://example.com/x", "'ftp:'"),
        ("gopher://127.0.0.1:6379/_INFO", "'gopher:'"),
        ("javascript:alert(1)", "'javascript:'"),
        ("data:text/html,hi", "'data:'"),
        ("example.com/page", "no scheme"),
    ],
)
def test_only_http_and_https(url: str, named: str) -> None:
    # The switch does not widen the schemes.
    with pytest.raises(ToolError, match=rf"reads only http and https URLs; .* has {named}"):
        check_url(url, allow_private=True, resolve=resolver({}))


@pytest.mark.parametrize("url", ["http://0177.0.0.1/", "http://[::1/", "http://host:abc/", "http://127.0.0.1:99999/"])
def test_malformed_urls(url: str) -> None:
    with pytest.raises(ToolError, match=r"is not a valid URL"):
        check_url(url, allow_private=False, resolve=resolver({}))


def test_a_url_without_a_host() -> None:
    with pytest.raises(ToolError, match=r"has no host name"):
        check_url("http:///path", allow_private=False, resolve=resolver({}))


def test_a_name_that_does_not_resolve() -> None:
    with pytest.raises(ToolError, match=r"could not find the address of nowhere\.test"):
        check_url("http://nowhere.test/", allow_private=False, resolve=resolver({}))


def test_a_resolver_with_no_answer() -> None:
    with pytest.raises(ToolError, match=r"could not find the address of empty\.test\.$"):
        check_url("http://empty.test/", allow_private=False, resolve=resolver({"empty.test": []}))
