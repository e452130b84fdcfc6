"""Rule bypasses of issues 13, 17 and 27, replayed against the running app.

With allow `git status*` and deny `rm *`, a line whose meaning its text does not pin down is refused
without a card and runs nothing, and an edit that hides an `rm` runs nothing either. With no deny rule,
such a line waits for the person, with a card that says Meowgent can't tell everything it runs and no
"Allow for this chat" for it.
"""

import json

import pytest

from meowgent.policy.rules import RULES_FILE
from tests.scripted_ollama import Text, reply, tool_call_text
from tests.ui.conftest import owners_client
from tests.ui.test_app_api import card_details, open_page, screen

RULES = [
    {"tool": "run_shell", "action": "allow", "command": "git status*"},
    {"tool": "run_shell", "action": "deny", "command": "rm *"},
]
# Issue 13: code hidden in values. Issue 17: wrapper options, strings bash runs later, rebinding, shell strings,
# and a program that runs code through its own options.
HIDING = ["git status ${x:=\\$(rm x)} ${x@P}", "git status ${y:=a[\\$(rm x)]} $((y))", "git status ${a[x]}"]
HIDING += ["git status ${!x}", "PS4='$(rm -rf docs)'; set -x; true", "hash -p /bin/rm ls; ls -rf docs"]
HIDING += ["flock f -c 'rm -rf docs'", "git -c alias.x='!rm -rf docs' x", "env -iu HOME rm -rf docs"]
# Issue 27: arithmetic evaluates an array subscript, which runs a substitution in a string.
HIDING += ["git status $((git status 'a[$(rm -rf docs)]'))", "echo $(( 'a[$(rm -rf docs)]' ))"]
EDITS = ["bash -c 'rm x'", "eval 'rm x'", "$'\\x72m' x", "X=rm; $X x"]


def with_rules(running_app, rules):
    (running_app.settings.data_dir / RULES_FILE).write_text(json.dumps(rules))
    running_app.restart()  # the rules are read when the app starts
    (running_app.workspace / "x").write_text("keep me")
    (running_app.workspace / "docs").mkdir()
    (running_app.workspace / "docs" / "keep.md").write_text("keep me too")
    return owners_client(running_app.url)


def nothing_was_removed(running_app):
    return (running_app.workspace / "x").exists() and (running_app.workspace / "docs" / "keep.md").exists()


@pytest.fixture
def client(running_app):
    return with_rules(running_app, RULES)


def test_a_line_that_hides_what_it_runs_is_refused_under_a_deny_rule_and_runs_nothing(running_app, client):
    for line in HIDING:
        running_app.ollama.script(Text(tool_call_text("run_shell", {"command": line})), reply("Fine."))
    key, _, _ = open_page(client)
    for line in HIDING:
        _chat, card = screen(client.predict(key, "status please", api_name="/on_send"))
        assert card == "", line  # refused by the rules: nothing waits for the person
        assert nothing_was_removed(running_app), line
        told = running_app.ollama.chat_requests[-1]["messages"][-1]["content"]
        assert told.startswith("Not run:"), (line, told)


def test_an_edit_that_hides_a_denied_command_is_refused_and_the_card_stays(running_app, client):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "ls"})), reply("Ok."))
    key, _, _ = open_page(client)
    client.predict(key, "list", api_name="/on_send")
    client.predict(key, api_name="/on_edit")  # open "Change it before approving": its command field
    for edit in EDITS:
        client.predict(key, "", "", edit, api_name="/on_approve")
        assert nothing_was_removed(running_app), edit
        assert card_details(client, key) == "ls", edit  # nothing ran: the proposed call still waits


def test_without_a_deny_rule_a_hidden_line_asks_and_the_card_says_so(running_app):
    client = with_rules(running_app, RULES[:1])
    line = "git -c alias.x='!rm -rf docs' x"
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": line})), reply("Fine."))
    key, _, _ = open_page(client)
    _chat, card = screen(client.predict(key, "status please", api_name="/on_send"))
    assert "Meowgent can't tell everything this runs" in card
    assert card_details(client, key) == line
    client.predict(key, "", api_name="/on_approve_chat")  # no scope can cover it, so this allows nothing
    assert card_details(client, key) == line
    assert nothing_was_removed(running_app)
