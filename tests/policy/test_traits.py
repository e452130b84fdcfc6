"""A new tool declares what it is once, in @tool(...): its rule criteria, chat scope and risk notes follow.

The tools below exist only here, in a registry of their own; no table in meowgent/ names them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import pytest

from meowgent.events import ToolCall
from meowgent.policy.risks import Risk, risk_notes
from meowgent.policy.rules import Policy, RulesError, parse_rules
from meowgent.policy.scopes import Scope, ScopeOffer, scope_offer, typed_scope
from meowgent.tools.registry import ToolRegistry, builtin_tools
from meowgent.tools.spec import ScopedBy, ToolContext, Writes, tool, tool_of


@tool(risky=True, scope=ScopedBy.PATH, path="target", main="text", writes=Writes.REPLACES)
def stamp(
    ctx: ToolContext, target: Annotated[str, "file to stamp"], text: Annotated[str, "what to write in it"]
) -> str:
    """Write a stamp into a file."""
    return "stamped"


@tool(risky=True, scope=ScopedBy.COMMAND, command="line", main="line")
def remote(ctx: ToolContext, line: Annotated[str, "the shell line to run elsewhere"]) -> str:
    """Run a shell line on another computer."""
    return "ran"


@tool(risky=False, url="address", network=True)
def ping(ctx: ToolContext, address: Annotated[str, "the URL to ping"]) -> str:
    """Ask a web server whether it is there."""
    return "pong"


TOOLS = ToolRegistry([*builtin_tools(), *(tool_of(function) for function in (stamp, remote, ping))])


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("call-1", name, arguments)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "secrets").mkdir()
    (tmp_path / "secrets" / "key.pem").write_text("secret")
    (tmp_path / "docs").mkdir()
    (tmp_path / "notes.md").write_text("notes")
    (tmp_path / "link.md").symlink_to("secrets/key.pem")
    return tmp_path


def test_its_path_argument_is_what_path_rules_match_links_followed(workspace: Path) -> None:
    rules = parse_rules('[{"tool": "stamp", "action": "deny", "path": "secrets/**"}]', tools=TOOLS)
    policy = Policy(rules, workspace, tools=TOOLS)
    assert policy.decide(call("stamp", target="secrets/key.pem", text="x")).action == "deny"
    assert policy.decide(call("stamp", target="link.md", text="x")).action == "deny"
    assert policy.decide(call("stamp", target="notes.md", text="x")).action == "ask"  # risky: no rule allows it
    with pytest.raises(RulesError, match="command does not apply to stamp"):
        parse_rules('[{"tool": "stamp", "action": "deny", "command": "rm *"}]', tools=TOOLS)


def test_its_command_argument_is_judged_command_by_command(workspace: Path) -> None:
    rules = [
        {"tool": "remote", "action": "allow", "command": "ls*"},
        {"tool": "*", "action": "deny", "command": "rm *"},
    ]
    policy = Policy(parse_rules(json.dumps(rules), tools=TOOLS), workspace, tools=TOOLS)
    assert policy.decide(call("remote", line="ls -l")).action == "allow"
    assert policy.decide(call("remote", line="ls && rm -rf x")).action == "deny"
    assert policy.decide(call("remote", line="eval 'ls'")).action == "deny"  # hidden: fails closed


def test_its_url_argument_is_what_host_rules_match(workspace: Path) -> None:
    rules = parse_rules('[{"tool": "ping", "action": "deny", "host": "*.evil.test"}]', tools=TOOLS)
    policy = Policy(rules, workspace, tools=TOOLS)
    assert policy.decide(call("ping", address="https://a.evil.test/")).action == "deny"
    assert policy.decide(call("ping", address="https://example.org/")).action == "allow"  # not risky


def test_its_chat_scope_is_about_what_its_traits_say(workspace: Path) -> None:
    offer = scope_offer(call("stamp", target="docs/../notes.md", text="x"), workspace, tools=TOOLS)
    assert offer == ScopeOffer(Scope("stamp", path="notes.md"), "path")
    typed = typed_scope(call("stamp", target="docs/a.md", text="x"), "docs", workspace, tools=TOOLS)
    assert typed == Scope("stamp", path="docs/**")
    policy = Policy([], workspace, tools=TOOLS)
    assert policy.decide(call("stamp", target="notes.md", text="y"), scopes=[offer.scope]).action == "allow"
    assert policy.decide(call("stamp", target="docs/b.md", text="y"), scopes=[offer.scope]).action == "ask"
    assert Scope.from_stored({"tool": "stamp", "path": "notes.md"}, tools=TOOLS) == offer.scope
    assert Scope.from_stored({"tool": "stamp"}, tools=TOOLS) is None  # not "every stamp": it is scoped by path
    shell_offer = scope_offer(call("remote", line="git status"), workspace, tools=TOOLS)
    assert shell_offer == ScopeOffer(Scope("remote", command="git status"), "prefix")
    prefix = typed_scope(call("remote", line="git status"), "git", workspace, tools=TOOLS)
    assert policy.decide(call("remote", line="git log"), scopes=[prefix]).action == "allow"
    assert policy.decide(call("remote", line="git log && rm x"), scopes=[prefix]).action == "ask"


def test_its_risk_notes_come_from_its_traits(workspace: Path) -> None:
    assert risk_notes(call("stamp", target="notes.md", text="x"), workspace, tools=TOOLS) == (Risk.OVERWRITES,)
    assert risk_notes(call("stamp", target="new.md", text="x"), workspace, tools=TOOLS) == ()
    assert risk_notes(call("remote", line="rm -rf build"), workspace, tools=TOOLS) == (Risk.DELETES,)
    assert risk_notes(call("ping", address="https://example.org/"), workspace, tools=TOOLS) == (Risk.NETWORK,)
    assert Policy([], workspace, tools=TOOLS).decide(call("remote", line="curl x")).risks == (Risk.NETWORK,)
