"""Reading a proxy request's head: the end found however the bytes arrive, and only BadRequest for bad ones."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.tools.proxyrequest import (
    MAX_LINE,
    BadRequest,
    ProxyRequest,
    check_size,
    head_length,
    host_allowed,
    parse_head,
)

GET = b"GET http://Example.TEST.:8080/a/b?c=1 HTTP/1.1\r\nHost: example.test:8080\r\nProxy-Connection: keep-alive\r\n"
GET += b"Proxy-Authorization: Basic eDp5\r\nConnection: keep-alive\r\nAccept: */*\r\n\r\n"


def test_an_absolute_form_request_goes_on_in_origin_form_without_the_proxys_headers():
    request = parse_head(GET)
    assert (request.host, request.port, request.tunnel) == ("example.test", 8080, False)
    assert request.head == (
        b"GET /a/b?c=1 HTTP/1.1\r\nHost: example.test:8080\r\nAccept: */*\r\nConnection: close\r\n\r\n"
    )


def test_a_request_without_host_gets_one():
    assert parse_head(b"GET http://example.test HTTP/1.0\r\n\r\n").head == (
        b"GET / HTTP/1.0\r\nHost: example.test\r\nConnection: close\r\n\r\n"
    )


@pytest.mark.parametrize(
    ("target", "host", "port"),
    [("pypi.org:443", "pypi.org", 443), ("[::1]:8443", "::1", 8443), ("PyPI.org.:443", "pypi.org", 443)],
)
def test_connect_names_a_host_and_a_port(target, host, port):
    assert parse_head(f"CONNECT {target} HTTP/1.1\r\n\r\n".encode()) == ProxyRequest(host, port, tunnel=True)


@pytest.mark.parametrize(
    "line",
    [
        "GET / HTTP/1.1",  # origin form: not a proxy request
        "GET https://pypi.org/ HTTP/1.1",  # https goes by CONNECT
        "CONNECT pypi.org HTTP/1.1",
        "CONNECT pypi.org:99999 HTTP/1.1",
        "CONNECT :443 HTTP/1.1",
        "GET http:///x HTTP/1.1",
        "GET http://a b/ HTTP/1.1",
        "GET http://exämple.test/ HTTP/1.1",
        "BREW coffee HTCPCP/1.0",
    ],
)
def test_what_a_proxy_does_not_take_is_a_400(line):
    with pytest.raises(BadRequest) as refused:
        parse_head(f"{line}\r\n\r\n".encode())
    assert refused.value.status == 400


def test_a_line_past_the_cap_is_refused_before_its_end_arrives():
    check_size(b"GET http://a/" + b"x" * (MAX_LINE - 20))
    with pytest.raises(BadRequest) as refused:
        check_size(b"GET http://a/" + b"x" * MAX_LINE)
    assert refused.value.status == 414


@given(st.binary(max_size=300))
def test_any_bytes_are_a_request_or_a_bad_request(data):
    try:
        parse_head(data + b"\r\n\r\n")
    except BadRequest as refused:
        status = refused.status
    else:
        status = 200
    assert status in (200, 400, 414, 431)


@given(st.lists(st.integers(min_value=1, max_value=len(GET)), max_size=8), st.binary(max_size=20))
def test_the_end_of_the_head_is_found_however_the_bytes_arrive(cuts, after):
    data = GET + after
    buffer = bytearray()
    found = None
    for start, end in zip([0, *sorted(cuts)], [*sorted(cuts), len(data)], strict=True):
        searched = len(buffer)
        buffer += data[start:end]
        found = found or head_length(buffer, searched)
    assert found == len(GET)


@pytest.mark.parametrize(
    ("host", "patterns", "allowed"),
    [
        ("pypi.org", ("pypi.org",), True),
        ("files.pythonhosted.org", ("*.pythonhosted.org",), True),
        ("pythonhosted.org", ("*.pythonhosted.org",), False),  # as the rules' `host`
        ("x.com", ("pypi.org", "*.pythonhosted.org"), False),
        ("x.com", ("*",), True),
        ("pypi.org", ("PyPI.org",), True),
        ("pypi.org", (), False),
    ],
)
def test_hosts_are_allowed_by_name_or_pattern(host, patterns, allowed):
    assert host_allowed(host, patterns) is allowed
