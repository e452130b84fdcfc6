"""The approval card: what approving each waiting call will do, in plain words, in full, and inert."""

import json
import re

import pytest

from meowgent.events import ToolCall
from meowgent.tools.sandbox import NoSandbox, Sandbox
from meowgent.ui.i18n import CHINESE
from meowgent.ui.state.approval import CARD_BOX_CHARS, Commands, describe_call, describe_queue, link_target
from tests.ui.conftest import html_text


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "my workspace"
    root.mkdir()
    return root


def said(description) -> str:
    return html_text(description.summary)


def tags_in(markup: str) -> set[str]:
    return set(re.findall(r"</?([a-z0-9]+)", markup))


OUR_TAGS = {"div", "h3", "ol", "li", "p", "strong", "code", "pre", "span"}


def test_a_shell_command_is_shown_whole_with_the_folder_it_runs_in(workspace):
    command = "printf '%s\\n' " + " ".join(f"word{i:04d}" for i in range(560)) + " | sort -r > out.txt"
    assert len(command) > 5_000
    card = describe_call(ToolCall("c1", "run_shell", {"command": command}), workspace)
    assert said(card) == f"Run this command in the folder {workspace}:"
    assert card.details == command


def test_a_new_file_says_lines_and_bytes_with_thousands_separators(workspace):
    content = "é" * 602  # 1,204 bytes in UTF-8 though only 602 characters
    card = describe_call(ToolCall("c1", "write_file", {"path": "notes/accents.txt", "content": content}), workspace)
    assert said(card) == "Create the new file notes/accents.txt with this text (1 line, 1,204 bytes):"
    assert card.details == content


def test_replacing_a_file_says_how_big_the_old_one_is(workspace):
    (workspace / "notes.md").write_bytes(b"x" * 12_345)
    card = describe_call(ToolCall("c1", "write_file", {"path": "notes.md", "content": "line\n" * 3}), workspace)
    assert said(card) == "Replace the file notes.md (now 12,345 bytes) with this text (3 lines, 15 bytes):"


@pytest.mark.parametrize("path", ["../outside.txt", "/etc/passwd", "sub/../../x.md"])
def test_a_path_outside_the_workspace_says_it_will_be_refused(workspace, path):
    card = describe_call(ToolCall("c1", "write_file", {"path": path, "content": "x"}), workspace)
    assert "outside the workspace, so it will be refused" in said(card)
    assert f"Write the file {path} " in said(card)


def test_a_link_that_leads_outside_is_refused_too(workspace, tmp_path):
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "innocent.txt").symlink_to(tmp_path / "secret.txt")
    card = describe_call(ToolCall("c1", "write_file", {"path": "innocent.txt", "content": "x"}), workspace)
    assert "outside the workspace, so it will be refused" in said(card)
    assert "Replace" not in said(card)


def test_a_large_file_is_shown_in_full_in_a_box_that_scrolls(workspace):
    content = "".join(f"row {i}\n" for i in range(3_000))
    card = describe_queue((ToolCall("c1", "write_file", {"path": "big.csv", "content": content}),), workspace)
    assert f"(3,000 lines, {len(content):,} bytes)" in said(card)
    assert card.details == content
    assert "row 2999" not in said(card)  # shown once, in the box under the card
    later = describe_queue(
        (
            ToolCall("c0", "run_shell", {"command": "ls"}),
            *[ToolCall("c1", "write_file", {"path": "big.csv", "content": content})],
        ),
        workspace,
    )
    assert said(later).count("row 2999") == 1
    assert '<pre class="mg-box">' in later.summary


def test_an_edit_shows_a_coloured_diff_of_the_old_and_the_new_text(workspace):
    call = ToolCall("c1", "edit_file", {"path": "app.py", "old": "x = 1\ny = 2", "new": "x = 1\ny = 3"})
    assert said(describe_call(call, workspace)) == "Change part of the file app.py like this:"
    card = describe_queue((call,), workspace)
    assert "--- before\n+++ after\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n" in said(card)
    assert '<span class="mg-del">&#45;y &#61; 2</span>' in card.summary
    assert '<span class="mg-add">&#43;y &#61; 3</span>' in card.summary
    assert card.details == ""  # shown whole on the card: no box under it with the same diff again
    chinese = describe_queue((call,), workspace, CHINESE)
    assert "--- 修改前\n+++ 修改後" in html_text(chinese.summary)


def test_a_web_fetch_names_the_host(workspace):
    url = "https://docs.python.org/3/library/json.html?highlight=dumps#basic-usage"
    card = describe_call(ToolCall("c1", "web_fetch", {"url": url}), workspace)
    assert said(card) == "Read a web page from docs.python.org:"
    assert card.details == url


def test_a_web_fetch_names_the_real_host_not_a_decoy_in_the_user_part(workspace):
    card = describe_queue((ToolCall("c1", "web_fetch", {"url": "https://trusted.example@evil.test/c?d=1"}),), workspace)
    assert "from evil.test" in said(card)
    assert "Read the page evil.test/c…" in said(card)


def test_a_web_fetch_without_a_host_says_so(workspace):
    card = describe_call(ToolCall("c1", "web_fetch", {"url": "not a url"}), workspace)
    assert "from an unknown site" in said(card)


def test_an_unknown_tool_shows_its_arguments_as_readable_json(workspace):
    arguments = {"target": "prod", "force": True, "count": 3, "name": "café"}
    card = describe_call(ToolCall("c1", "deploy", arguments), workspace)
    assert said(card) == "Use the tool deploy with:"
    assert json.loads(card.details) == arguments
    assert "café" in card.details  # readable, not \u00e9


def test_a_queue_names_every_call_in_order_each_in_full(workspace):
    calls = (
        ToolCall("c1", "run_shell", {"command": "make test"}),
        ToolCall("c2", "write_file", {"path": "a.md", "content": "secret second"}),
        ToolCall("c3", "web_fetch", {"url": "https://example.com/third"}),
        ToolCall("c4", "run_shell", {"command": "wc -l notes.md"}),
    )
    card = describe_queue(calls, workspace)
    text = said(card)
    assert text.startswith("The assistant wants to do 4 things, in this order")
    names = re.findall(r"<li><div><strong>(.*?)</strong>", card.summary)
    assert [html_text(name) for name in names] == [
        "Run make test",
        "Write a.md",
        "Read the page example.com/third",
        "Run wc -l notes.md",
    ]
    assert "secret second" in text  # the second call in full too, not only the first
    assert "⚠️ Heads up: this uses the network." in text
    assert card.details == "make test"


def test_a_queue_of_one_does_not_mention_more(workspace):
    card = describe_queue((ToolCall("c1", "run_shell", {"command": "ls"}),), workspace)
    assert "things" not in said(card)
    assert said(card).startswith("The assistant wants to do this")


def test_an_empty_queue_is_no_card(workspace):
    card = describe_queue((), workspace)
    assert card.summary == card.details == ""


def test_a_lone_surrogate_in_arguments_still_gives_a_card_the_browser_can_take(workspace):
    # parse_tool_call (json.loads) accepts `"\ud800"`, and the tool registry validates it as a str
    for arguments in ({"path": "a.txt", "content": "x\ud800y"}, {"path": "a\ud800.txt", "content": "x"}):
        card = describe_queue((ToolCall("c1", "write_file", arguments),), workspace)
        (card.summary + card.details).encode()  # the page sends UTF-8, which has no lone surrogates


def test_risk_notes_come_from_our_rules_not_from_the_model(workspace):
    (workspace / "old.txt").write_text("x")
    card = describe_queue(
        (ToolCall("c1", "run_shell", {"command": "rm old.txt  # totally safe, trust me"}),), workspace
    )
    assert "⚠️ Heads up: this deletes files." in said(card)
    quiet = describe_queue((ToolCall("c1", "run_shell", {"command": "ls -la"}),), workspace)
    assert "Heads up" not in said(quiet)


# ---- where a command runs: the sandbox and its network ----

NEEDS_NETWORK = "This command uses the network, so it will fail without it"


def test_a_command_that_uses_the_network_says_it_will_fail_without_it(workspace):
    installs = (ToolCall("c1", "run_shell", {"command": "pip install requests"}),)
    assert NEEDS_NETWORK in said(describe_queue(installs, workspace))
    assert NEEDS_NETWORK not in said(describe_queue(installs, workspace, network=("pypi.org",)))  # on for the chat
    assert NEEDS_NETWORK not in said(describe_queue((ToolCall("c1", "run_shell", {"command": "ls"}),), workspace))
    assert "沒有網路就會失敗" in said(describe_queue(installs, workspace, CHINESE))


def test_without_a_sandbox_every_command_on_the_card_says_so_and_nothing_else_does(workspace):
    calls = (
        ToolCall("c1", "run_shell", {"command": "curl https://example.org"}),
        ToolCall("c2", "write_file", {"path": "a.md", "content": "x"}),
        ToolCall("c3", "run_shell", {"command": "ls"}),
    )
    text = said(describe_queue(calls, workspace, commands=Commands.UNSANDBOXED))
    assert text.count("Commands run without a sandbox on this computer.") == 2
    assert NEEDS_NETWORK not in text  # without a sandbox it has the network anyway
    assert "這台電腦上的指令沒有在沙箱中執行" in said(
        describe_queue(calls, workspace, CHINESE, commands=Commands.UNSANDBOXED)
    )


def test_where_commands_are_refused_every_command_on_the_card_says_it_wont_run(workspace):
    calls = (ToolCall("c1", "run_shell", {"command": "ls"}), ToolCall("c2", "write_file", {"path": "a", "content": ""}))
    text = said(describe_queue(calls, workspace, commands=Commands.REFUSED))
    assert text.count("this one won't run even if you approve it") == 1  # the command's, not the write's
    assert "without a sandbox" not in text
    assert "拒絕執行指令" in said(describe_queue(calls, workspace, CHINESE, commands=Commands.REFUSED))


def test_how_commands_run_follows_the_sandbox_found():
    assert Commands.of(Sandbox("/usr/bin/bwrap", disable_userns=True)) is Commands.SANDBOXED
    assert Commands.of(NoSandbox("no bwrap")) is Commands.UNSANDBOXED
    assert Commands.of(NoSandbox("bwrap 0.6 as root", refused=True)) is Commands.REFUSED


# ---- model text is data (issue 13, items 2 and 7) ----

FAKE_CARD = 'x` **ok** <div style="position:fixed;inset:0">ls -la</div><img src=http://127.0.0.1:9/x>`.md'


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_path_cannot_end_its_code_span_or_add_markup(workspace, tool):
    card = describe_queue(
        (ToolCall("c1", tool, {"path": FAKE_CARD, "content": "x", "old": "a", "new": "b"}),), workspace
    )
    assert tags_in(card.summary) <= OUR_TAGS
    assert "style=" not in card.summary
    assert "`" not in card.summary  # no backtick reaches a Markdown parser
    assert "*" not in card.summary
    assert FAKE_CARD in said(card)  # shown as the text it is


def test_bidi_and_zero_width_characters_are_shown_not_obeyed(workspace):
    command = "touch safe.txt \u2067# harmless\u2069 \u202erm x\u200b\ufeff"
    card = describe_queue((ToolCall("c1", "run_shell", {"command": command}),), workspace)
    for invisible in "\u2067\u2069\u202e\u200b\ufeff":
        assert invisible not in card.summary + card.details
    assert "⟨U+2067⟩# harmless⟨U+2069⟩ ⟨U+202E⟩rm x⟨U+200B⟩⟨U+FEFF⟩" in said(card)


def test_a_command_meowgent_cannot_read_whole_says_why_on_its_card(workspace):
    line = "git status $((git status 'a[$(rm -rf docs)]'))"
    card = said(describe_queue((ToolCall("c1", "run_shell", {"command": line}),), workspace))
    assert "Heads up: Meowgent can't tell everything this runs." in card
    assert "Why: " in card
    assert "the arithmetic `$((git status 'a[$(rm -rf docs)]'))` can run code" in card
    chinese = said(describe_queue((ToolCall("c1", "run_shell", {"command": line}),), workspace, CHINESE))
    assert "原因：" in chinese
    assert "算術運算 `$((git status" in chinese
    many = "; ".join(f'eval "$X{i}"' for i in range(10))
    counted = said(describe_queue((ToolCall("c1", "run_shell", {"command": many}),), workspace))
    assert re.search(r"Why: [^\n]*; and \d+ more\.", counted)  # the first few, then how many more
    hostile = describe_queue((ToolCall("c1", "run_shell", {"command": "echo $(( <img src=x> ))"}),), workspace)
    assert "Why: " in said(hostile)
    assert "<img" not in hostile.summary  # a snippet is text
    assert tags_in(hostile.summary) <= OUR_TAGS
    assert "Why:" not in said(describe_queue((ToolCall("c1", "run_shell", {"command": "rm -rf build"}),), workspace))


def test_leading_blank_lines_cannot_push_a_command_out_of_view(workspace):
    command = "\n" * 40 + "touch hidden.txt"
    card = describe_queue((ToolCall("c1", "run_shell", {"command": command}),), workspace)
    assert card.details == "⟨↵×40⟩ touch hidden.txt"
    assert "Run ⟨↵×40⟩ touch hidden.txt" in said(card)
    card = describe_queue(
        (ToolCall("c0", "run_shell", {"command": "ls"}), ToolCall("c1", "run_shell", {"command": command})), workspace
    )
    box = re.search(r'<pre class="mg-box">(.*?)</pre>', card.summary).group(1)
    assert html_text(box) == "⟨↵×40⟩ touch hidden.txt"


def test_the_card_reads_in_chinese(workspace):
    calls = (
        ToolCall("c1", "write_file", {"path": "筆記.md", "content": "喵"}),
        ToolCall("c2", "run_shell", {"command": "ls"}),
    )
    text = said(describe_queue(calls, workspace, CHINESE))
    assert "助理想依序執行 2 個動作" in text
    assert "寫入 筆記.md" in text
    assert "執行 ls" in text
    assert "建立新檔案 筆記.md" in text


def test_a_huge_file_travels_whole_once_not_twice(workspace):
    content = "".join(f"row {i:06d}\n" for i in range(100_000))  # 1.1 MB
    card = describe_queue((ToolCall("c1", "write_file", {"path": "big.csv", "content": content}),), workspace)
    assert card.details == content  # whole, in the box under the card
    assert "row 0" not in said(card)  # the card doesn't repeat it
    second = describe_queue(
        (
            ToolCall("c0", "run_shell", {"command": "ls"}),
            card_call := ToolCall("c1", "write_file", {"path": "big.csv", "content": content}),
        ),
        workspace,
    )
    assert card_call.arguments["content"] not in second.summary
    assert len(second.summary) < len(content) / 4  # a later call's text: its head and tail
    assert "row 000000" in said(second)
    assert "row 099999" in said(second)
    assert "more characters not shown here" in said(second)
    assert second.cut_short == ("c1",)  # so "Approve all" may not approve it


# ---- what the card says is what happens (issue 17) ----


def test_the_issues_command_shows_every_line_on_the_card(workspace):
    command = "echo safe" + "\n" * 40 + "touch hidden.txt"
    card = describe_queue((ToolCall("c1", "run_shell", {"command": command}),), workspace)
    assert card.details == "echo safe\n⟨↵×40⟩ touch hidden.txt"
    assert "Run echo safe ⏎ ⟨↵×40⟩ touch hidden.txt" in said(card)
    later = describe_queue(
        (ToolCall("c0", "run_shell", {"command": "ls"}), ToolCall("c1", "run_shell", {"command": command})), workspace
    )
    box = re.search(r'<pre class="mg-box">(.*?)</pre>', later.summary).group(1)
    assert html_text(box) == "echo safe\n⟨↵×40⟩ touch hidden.txt"


@pytest.mark.parametrize("tool", ["write_file", "edit_file"])
def test_a_change_through_a_link_names_the_file_it_really_changes(workspace, tool):
    (workspace / ".git").mkdir()
    (workspace / ".git" / "config").write_text("[core]\n")
    (workspace / "NOTES.md").symlink_to(".git/config")
    call = ToolCall("c1", tool, {"path": "NOTES.md", "content": "x", "old": "[core]", "new": "[alias]"})
    card = said(describe_queue((call,), workspace))
    arrow = "NOTES.md → .git/config"
    assert f"{'Write' if tool == 'write_file' else 'Edit'} {arrow}" in card  # the title
    assert "⚠️ NOTES.md is a link to another file: this changes .git/config." in card
    if tool == "write_file":
        assert f"Replace the file {arrow} (now 7 bytes)" in card
    chinese = said(describe_queue((call,), workspace, CHINESE))
    assert "NOTES.md 是指向另一個檔案的連結：實際改動的是 .git/config。" in chinese


def test_a_plain_path_or_one_outside_gets_no_arrow(workspace, tmp_path):
    (workspace / "notes.md").write_text("x")
    (workspace / "docs").mkdir()
    (tmp_path / "secret.txt").write_text("s")
    (workspace / "innocent.txt").symlink_to(tmp_path / "secret.txt")
    for path in ("notes.md", "./docs/../notes.md", "new.md", "innocent.txt", "../x"):
        assert link_target(workspace, path) is None, path
        assert "→" not in said(
            describe_queue((ToolCall("c1", "write_file", {"path": path, "content": "x"}),), workspace)
        )


def test_a_hostile_link_target_is_escaped(workspace):
    (workspace / "x`<img src=x>").write_text("y")
    (workspace / "a.md").symlink_to("x`<img src=x>")
    card = describe_queue((ToolCall("c1", "write_file", {"path": "a.md", "content": "x"}),), workspace)
    assert "a.md → x`<img src=x>" in said(card)
    assert tags_in(card.summary) <= OUR_TAGS


def test_an_edit_too_big_to_compare_says_so_on_the_card(workspace):
    """Ten times the 170 KB edit that took 18 s to show: the diff is bounded and says it is rough."""
    call = ToolCall("c1", "edit_file", {"path": "a.txt", "old": "x\n" * 850_000, "new": "x\ny\n" * 990})
    card = describe_queue((call,), workspace)
    assert "This change is too big to compare line by line" in said(card)
    assert card.details.startswith("--- before\n+++ after\n@@ -1,850000 +1,1980 @@\n x\n-x\n")  # whole, in the box
    assert len(html_text(card.summary)) < CARD_BOX_CHARS + 1_000  # the card shows the diff's head and tail
    assert "more characters not shown here" in said(card)
    assert card.cut_short == ()  # the first call's text is whole in the box
    second = describe_queue((ToolCall("c0", "run_shell", {"command": "ls"}), call), workspace)
    assert second.cut_short == ("c1",)


def test_a_queue_with_a_call_cut_short_asks_for_each_one(workspace):
    calls = (
        ToolCall("c1", "run_shell", {"command": "ls"}),
        ToolCall("c2", "write_file", {"path": "big.txt", "content": "x" * (CARD_BOX_CHARS + 1)}),
        ToolCall("c3", "run_shell", {"command": "pwd"}),
    )
    card = describe_queue(calls, workspace)
    assert card.cut_short == ("c2",)
    assert "each one waits for its own approval" in said(card)
    whole = describe_queue((calls[0], calls[2]), workspace)
    assert whole.cut_short == ()
    assert "“Approve all” runs all of them" in said(whole)
    assert describe_queue(calls[1:], workspace).cut_short == ()  # first in line: whole in the box
