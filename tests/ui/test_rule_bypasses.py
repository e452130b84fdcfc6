"""Issue 13's rule bypasses, replayed against the running app: with allow `git status*` and deny `rm *`, no line
that hides an `rm` runs without a card, and no edit that hides one runs at all."""

import json

import pytest
from gradio_client import Client

from meowgent.rules import RULES_FILE
from tests.scripted_ollama import Text, reply, tool_call_text
from tests.ui.test_app_api import open_page, screen

RULES = [
    {"tool": "run_shell", "action": "allow", "command": "git status*"},
    {"tool": "run_shell", "action": "deny", "command": "rm *"},
]
HIDING = ["git status ${x:=\\$(rm x)} ${x@P}", "git status ${y:=a[\\$(rm x)]} $((y))", "git status ${a[x]}"]
HIDING += ["git status ${!x}"]
EDITS = ["bash -c 'rm x'", "eval 'rm x'", "$'\\x72m' x", "X=rm; $X x"]


@pytest.fixture
def client(running_app):
    (running_app.settings.data_dir / RULES_FILE).write_text(json.dumps(RULES))
    running_app.restart()  # the rules are read when the app starts
    (running_app.workspace / "x").write_text("keep me")
    return Client(running_app.url, verbose=False)


def test_an_allowed_command_with_code_in_its_values_shows_a_card_and_runs_nothing(running_app, client):
    for line in HIDING:
        running_app.ollama.script(Text(tool_call_text("run_shell", {"command": line})), reply("Fine."))
    key, _, _ = open_page(client)
    for line in HIDING:
        _chat, _card, details = screen(client.predict(key, "status please", api_name="/on_send"))
        assert details == line  # it waits for the person instead of running
        assert (running_app.workspace / "x").exists(), line
        client.predict(key, "no", api_name="/on_reject")


def test_an_edit_that_hides_a_denied_command_is_refused_and_the_card_stays(running_app, client):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "ls"})), reply("Ok."))
    key, _, _ = open_page(client)
    client.predict(key, "list", api_name="/on_send")
    for edit in EDITS:
        _chat, _card, details = screen(client.predict(key, json.dumps({"command": edit}), api_name="/on_approve"))
        assert (running_app.workspace / "x").read_text() == "keep me", edit
        assert details == "ls", edit  # nothing ran: the proposed call still waits
