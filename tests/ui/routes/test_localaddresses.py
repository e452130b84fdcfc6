"""This machine's own addresses: read from its interfaces, and again when the copy is old."""

import ipaddress
import socket
from pathlib import Path

from meowgent.ui.routes.localaddresses import LocalAddresses


def test_this_machines_addresses_are_read_again_when_old():
    now, own = [0.0], {ipaddress.ip_address("10.0.0.2")}
    machine = LocalAddresses(lambda: set(own), refresh=10, clock=lambda: now[0])
    assert "10.0.0.2" in machine
    own.clear()
    own.add(ipaddress.ip_address("10.0.0.9"))  # a new DHCP lease
    now[0] = 9.9
    assert "10.0.0.2" in machine
    assert "10.0.0.9" not in machine
    now[0] = 10.0
    assert "10.0.0.9" in machine
    assert "10.0.0.2" not in machine
    assert "not-an-ip" not in machine
    assert "" not in machine


def test_the_real_machine_has_its_loopback_and_interface_addresses():
    machine = LocalAddresses()
    assert "127.0.0.1" in machine
    assert "8.8.8.8" not in machine
    try:  # the address this machine would send from (a UDP connect sends nothing)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))
            outbound = probe.getsockname()[0]
    except OSError:  # no route at all
        outbound = "127.0.0.1"
    assert outbound in machine
    inet6 = Path("/proc/net/if_inet6")
    for line in inet6.read_text().splitlines() if inet6.exists() else []:
        assert str(ipaddress.ip_address(bytes.fromhex(line.split()[0]))) in machine
