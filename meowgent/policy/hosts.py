"""Which hosts a command may reach through its proxy: names or patterns as the rules' `host` (`*.python.org`),
`*` for any host (a deliberate choice, never a default). Pure functions over rules, scopes and typed text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from meowgent.policy.actions import Rule
from meowgent.policy.scopes import Scope
from meowgent.tools.proxyrequest import ANY_HOST, host_pattern


def network_hosts(*grants: Iterable[str]) -> tuple[str, ...]:
    """The hosts of several grants (the chat's, the command's) together, each once; just `*` when one is any."""
    hosts = tuple(dict.fromkeys(host for grant in grants for host in grant))
    return (ANY_HOST,) if ANY_HOST in hosts else hosts


def known_hosts(rules: Iterable[Rule], scopes: Iterable[Scope]) -> tuple[str, ...]:
    """The hosts this chat already trusts: those its scopes allow, and those the rules allow by name.

    What the card offers a command that asks for the network, so the person need not type them.
    """
    allowed = [rule.host for rule in rules if rule.action == "allow" and rule.host]
    return network_hosts((host.lower() for host in allowed), (scope.host for scope in scopes if scope.host))


def parse_hosts(text: str) -> tuple[str, ...]:
    """The hosts a person typed, separated by commas or spaces; ValueError names the first that is not a host."""
    words = re.split(r"[\s,]+", text.strip().lower())
    return network_hosts(host_pattern(word) for word in words if word)
