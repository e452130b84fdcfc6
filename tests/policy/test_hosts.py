"""Which hosts a command may reach: the grants together, what the rules and scopes already trust, typed hosts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.policy.hosts import ANY_HOST, known_hosts, network_hosts, parse_hosts
from meowgent.policy.rules import Rule
from meowgent.policy.scopes import Scope


def test_grants_together_keep_each_host_once_in_order_and_any_wins():
    assert network_hosts(("pypi.org",), ("*.python.org", "pypi.org")) == ("pypi.org", "*.python.org")
    assert network_hosts(("pypi.org",), (ANY_HOST,)) == (ANY_HOST,)
    assert network_hosts((), ()) == ()


def test_the_hosts_already_trusted_are_the_allow_rules_and_the_chats_host_scopes():
    rules = [
        Rule("web_fetch", "allow", host="*.Python.org"),
        Rule("web_fetch", "ask", host="x.com"),
        Rule("web_fetch", "deny", host="evil.test"),
        Rule("run_shell", "allow", command="ls"),
    ]
    scopes = [Scope("web_fetch", host="pypi.org"), Scope("write_file", path="a.md")]
    assert known_hosts(rules, scopes) == ("*.python.org", "pypi.org")


@pytest.mark.parametrize(
    ("typed", "hosts"),
    [
        ("pypi.org, files.pythonhosted.org", ("pypi.org", "files.pythonhosted.org")),
        ("  PyPI.org.\n*.python.org  ", ("pypi.org", "*.python.org")),
        ("*", (ANY_HOST,)),
        ("pypi.org *", (ANY_HOST,)),
        ("127.0.0.1, ::1", ("127.0.0.1", "::1")),
        ("", ()),
    ],
)
def test_typed_hosts_are_read_by_commas_and_spaces(typed, hosts):
    assert parse_hosts(typed) == hosts


@pytest.mark.parametrize("word", ["https://pypi.org", "pypi.org/simple", "user@pypi.org", "pypi.org;rm"])
def test_what_is_not_a_host_is_named(word):
    with pytest.raises(ValueError, match="^" + word.lower().replace(".", r"\.").replace("/", "/") + "$"):
        parse_hosts(f"pypi.org, {word}")


@given(st.text(max_size=60))
def test_any_typed_text_is_hosts_without_spaces_or_commas_or_a_refusal(text):
    try:
        hosts = parse_hosts(text)
    except ValueError:
        return
    assert all(host and not any(c in host for c in " ,/@\n") for host in hosts)
