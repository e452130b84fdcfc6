"""What "Allow for this chat" allows, in the person's language: the button, the box that widens it, the list.

Pure functions over `meowgent.policy.rules` scopes; the words come from `meowgent.ui.i18n`, so the button
says exactly what choosing it allows (this command, this file, this host), for the call that waits.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from meowgent.events import ToolCall
from meowgent.policy.hosts import ANY_HOST
from meowgent.policy.scopes import Scope, scope_offer
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ScopedBy
from meowgent.ui.html.tooltext import text_of
from meowgent.ui.i18n import t

_LONGEST = 60  # characters of a path or host on the button; the card above shows it whole


@dataclass(frozen=True, slots=True)
class ScopeControls:
    """The "Allow for this chat" button's words, and the label of the box to widen it (None: no box)."""

    button: str | None
    box: str | None


def scope_controls(
    call: ToolCall | None, workspace: Path, language: str, *, tools: ToolRegistry | None = None
) -> ScopeControls:
    """How to word the chat scope of the waiting call (`tools`: the app's); no button when the call cannot be
    allowed for the chat."""
    offer = scope_offer(call, workspace, tools=tools) if call is not None else None
    if call is None or offer is None:
        return ScopeControls(None, None)
    scope = offer.scope
    # A scope of the tool's own kind is worded for that kind (this file, this host); every call of it, generically.
    key = text_of(call.name, tools).allow if scope.kind is not ScopedBy.TOOL else "approve_chat_tool"
    button = t(language, key, path=_short(scope.path), host=_short(scope.host), tool=scope.tool)
    return ScopeControls(button, t(language, f"scope_typed_{offer.typed}") if offer.typed else None)


def scope_label(scope: Scope, language: str) -> str:
    """One allowed scope in the chat's list, such as "writing notes.md"."""
    key, values = scope.words()
    return t(language, key, **values)


NETWORK_ALLOWED = "network"
"""The value of "Network for commands" in the chat's list of what it allows (a scope's value is a JSON object)."""
NETWORK_CHOICES = ("off", "command", "chat")
"""The card's network control: none, for the command it approves, for every command of the chat."""


def scope_choices(
    scopes: tuple[Scope, ...] | list[Scope], network: tuple[str, ...], language: str
) -> list[tuple[str, str]]:
    """The chat's list of what it allows: each scope (its value the scope as JSON), and the network's hosts."""
    choices = [(scope_label(scope, language), json.dumps(asdict(scope))) for scope in scopes]
    return choices + ([(network_label(network, language), NETWORK_ALLOWED)] if network else [])


def network_options(language: str) -> list[tuple[str, str]]:
    """The card's network control in plain words: "No network for this command", ..."""
    return [(t(language, f"network_{choice}"), choice) for choice in NETWORK_CHOICES]


def network_label(hosts: tuple[str, ...], language: str) -> str:
    """ "Network for commands: pypi.org, *.python.org", as the chat's list of what it allows shows it."""
    return t(language, "allows_network", hosts=hosts_text(hosts, language))


def hosts_text(hosts: tuple[str, ...] | list[str], language: str) -> str:
    """Hosts as a person reads them: "pypi.org, *.python.org", or "any host" for `*`."""
    return t(language, "network_any_host") if list(hosts) == [ANY_HOST] else ", ".join(hosts)


def _short(text: str | None) -> str:
    text = text or ""
    return text if len(text) <= _LONGEST else text[: _LONGEST - 1] + "…"
