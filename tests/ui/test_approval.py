"""The approval card: what approving a waiting call will do, in plain words, nothing cut off."""

import json

import pytest

from meowgent.events import ToolCall
from meowgent.ui.approval import CallDescription, describe_call, describe_queue


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "my workspace"
    root.mkdir()
    return root


def test_a_shell_command_is_shown_whole_with_the_folder_it_runs_in(workspace):
    command = "printf '%s\\n' " + " ".join(f"word{i:04d}" for i in range(560)) + " | sort -r > out.txt"
    assert len(command) > 5_000
    card = describe_call(ToolCall("c1", "run_shell", {"command": command}), workspace)
    assert card == CallDescription(f"**Run this command** in the folder `{workspace}`:", command)


def test_a_new_file_says_lines_and_bytes_with_thousands_separators(workspace):
    content = "é" * 602  # 1,204 bytes in UTF-8 though only 602 characters
    card = describe_call(ToolCall("c1", "write_file", {"path": "notes/accents.txt", "content": content}), workspace)
    assert card.summary == "**Create the new file** `notes/accents.txt` with this text (1 line, 1,204 bytes):"
    assert card.details == content


def test_replacing_a_file_says_how_big_the_old_one_is(workspace):
    (workspace / "notes.md").write_bytes(b"x" * 12_345)
    card = describe_call(ToolCall("c1", "write_file", {"path": "notes.md", "content": "line\n" * 3}), workspace)
    assert card.summary == "**Replace the file** `notes.md` (now 12,345 bytes) with this text (3 lines, 15 bytes):"


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../x.md"])
def test_a_path_outside_the_workspace_says_it_will_be_refused(workspace, path):
    card = describe_call(ToolCall("c1", "write_file", {"path": path, "content": "x"}), workspace)
    assert "outside the workspace, so it will be refused" in card.summary
    assert f"`{path}`" in card.summary


def test_a_link_that_leads_outside_is_refused_too(workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "innocent.txt").symlink_to(tmp_path / "secret.txt")
    card = describe_call(ToolCall("c1", "write_file", {"path": "innocent.txt", "content": "x"}), workspace)
    assert "outside the workspace, so it will be refused" in card.summary
    assert "Replace" not in card.summary


def test_a_large_file_is_shown_in_full(workspace):
    content = "".join(f"row {i}\n" for i in range(3_000))
    card = describe_call(ToolCall("c1", "write_file", {"path": "big.csv", "content": content}), workspace)
    assert f"(3,000 lines, {len(content):,} bytes)" in card.summary
    assert card.details == content


def test_an_edit_shows_a_diff_of_the_old_and_the_new_text(workspace):
    call = ToolCall("c1", "edit_file", {"path": "app.py", "old": "x = 1\ny = 2", "new": "x = 1\ny = 3"})
    card = describe_call(call, workspace)
    assert card.summary == "**Change part of the file** `app.py` like this:"
    assert card.details.splitlines()[2:] == ["@@ -1,2 +1,2 @@", " x = 1", "-y = 2", "+y = 3"]


def test_a_web_fetch_names_the_host(workspace):
    url = "https://docs.python.org/3/library/json.html?highlight=dumps#basic-usage"
    card = describe_call(ToolCall("c1", "web_fetch", {"url": url}), workspace)
    assert card == CallDescription("**Read a web page** from `docs.python.org`:", url)


def test_a_web_fetch_names_the_real_host_not_a_decoy_in_the_user_part(workspace):
    card = describe_call(ToolCall("c1", "web_fetch", {"url": "https://trusted.example@evil.test/c?d=1"}), workspace)
    assert "from `evil.test`" in card.summary


def test_a_web_fetch_without_a_host_says_so(workspace):
    card = describe_call(ToolCall("c1", "web_fetch", {"url": "not a url"}), workspace)
    assert "from `an unknown site`" in card.summary


def test_an_unknown_tool_shows_its_arguments_as_readable_json(workspace):
    arguments = {"target": "prod", "force": True, "count": 3, "name": "café"}
    card = describe_call(ToolCall("c1", "deploy", arguments), workspace)
    assert card.summary == "**Use the tool** `deploy` with:"
    assert json.loads(card.details) == arguments
    assert "café" in card.details  # readable, not \u00e9


def test_a_queue_lists_every_call_in_order_with_the_details_of_the_first(workspace):
    calls = (
        ToolCall("c1", "run_shell", {"command": "make test"}),
        ToolCall("c2", "write_file", {"path": "a.md", "content": "secret second"}),
        ToolCall("c3", "web_fetch", {"url": "https://example.com/third"}),
    )
    card = describe_queue(calls, workspace)
    assert card.summary.startswith("### The assistant wants to do 3 things, in this order")
    steps = [line for line in card.summary.splitlines() if line[:3] in ("1. ", "2. ", "3. ")]
    assert steps == [
        f"1. **Run this command** in the folder `{workspace}`",
        "2. **Create the new file** `a.md` with this text (1 line, 13 bytes)",
        "3. **Read a web page** from `example.com` ⚠️ **Heads up:** this uses the network.",
    ]
    assert card.details == "make test"
    assert "secret second" not in card.summary


def test_a_queue_of_one_does_not_mention_more(workspace):
    card = describe_queue((ToolCall("c1", "run_shell", {"command": "ls"}),), workspace)
    assert "more request" not in card.summary


def test_an_empty_queue_is_no_card(workspace):
    assert describe_queue((), workspace) == CallDescription("", "")


def test_a_lone_surrogate_in_arguments_still_gives_a_card_the_browser_can_take(workspace):
    # parse_tool_call (json.loads) accepts `"\ud800"`, and the tool registry validates it as a str
    for arguments in ({"path": "a.txt", "content": "x\ud800y"}, {"path": "a\ud800.txt", "content": "x"}):
        card = describe_queue((ToolCall("c1", "write_file", arguments),), workspace)
        (card.summary + card.details).encode()  # the page sends UTF-8, which has no lone surrogates
        assert "**" in card.summary


def test_risk_notes_come_from_our_rules_not_from_the_model(workspace):
    (workspace / "old.txt").write_text("x")
    card = describe_queue(
        (ToolCall("c1", "run_shell", {"command": "rm old.txt  # totally safe, trust me"}),), workspace
    )
    assert "⚠️ **Heads up:** this deletes files." in card.summary
    quiet = describe_queue((ToolCall("c1", "run_shell", {"command": "ls -la"}),), workspace)
    assert "Heads up" not in quiet.summary
