"""The words of "Allow for this chat": each button says what it allows; the box shows only where typing applies."""

from __future__ import annotations

from pathlib import Path

import pytest

from meowgent.events import ToolCall
from meowgent.policy.scopes import Scope
from meowgent.ui.html.scopes import ScopeControls, network_label, network_options, scope_controls, scope_label
from meowgent.ui.i18n import CHINESE, ENGLISH


def call(name: str, **arguments: object) -> ToolCall:
    return ToolCall("c1", name, arguments)


@pytest.mark.parametrize(
    ("waiting", "language", "controls"),
    [
        (
            call("run_shell", command="git status"),
            ENGLISH,
            ScopeControls(
                "✅ Allow this exact command for this chat",
                "To allow every command that starts with some words instead, type them here (optional), "
                "such as git status:",
            ),
        ),
        (
            call("write_file", path="./notes/a.md", content="x"),
            ENGLISH,
            ScopeControls(
                "✅ Allow writing notes/a.md for this chat",
                "To allow a whole folder or a pattern instead, type it here (optional), such as docs or *.md:",
            ),
        ),
        (
            call("edit_file", path="a.md", old="x", new="y"),
            CHINESE,
            ScopeControls(
                "✅ 此對話中允許修改 a.md",
                "若要改為允許整個資料夾或一個樣式，請在這裡輸入（選填），例如 docs 或 *.md：",
            ),
        ),
        (
            call("web_fetch", url="https://Example.org/x"),
            ENGLISH,
            ScopeControls("✅ Allow reading pages from example.org for this chat", None),
        ),
        (
            call("web_fetch", url="https://example.org/x"),
            CHINESE,
            ScopeControls("✅ 此對話中允許讀取 example.org 的網頁", None),
        ),
        (call("mcp__search", q="x"), ENGLISH, ScopeControls("✅ Allow every mcp__search call for this chat", None)),
        (call("write_file", path="../outside.md", content="x"), ENGLISH, ScopeControls(None, None)),
        (None, ENGLISH, ScopeControls(None, None)),
    ],
)
def test_each_tool_gets_the_words_of_its_own_scope(
    tmp_path: Path, waiting: ToolCall | None, language: str, controls: ScopeControls
) -> None:
    assert scope_controls(waiting, tmp_path, language) == controls


def test_a_long_path_is_shortened_on_the_button(tmp_path: Path) -> None:
    button = scope_controls(call("write_file", path="d" * 100, content=""), tmp_path, ENGLISH).button
    assert button == f"✅ Allow writing {'d' * 59}… for this chat"


@pytest.mark.parametrize(
    ("scope", "english", "chinese"),
    [
        (Scope("run_shell", command="ls -la"), "this exact command: ls -la", "完全相同的指令：ls -la"),
        (Scope("run_shell", prefix="git"), "commands starting with “git”", "以「git」開頭的指令"),
        (Scope("write_file", path="docs/**"), "writing docs/**", "寫入 docs/**"),
        (Scope("web_fetch", host="x.org"), "reading pages from x.org", "讀取 x.org 的網頁"),
    ],
)
def test_the_list_of_allowed_scopes_reads_as_plain_words(scope: Scope, english: str, chinese: str) -> None:
    assert (scope_label(scope, ENGLISH), scope_label(scope, CHINESE)) == (english, chinese)


def test_the_network_control_and_its_line_in_the_list_say_what_they_allow():
    assert network_options(ENGLISH) == [
        ("No network for this command", "off"),
        ("Network on for this command, to the hosts below", "command"),
        ("Network on for this chat, to the hosts below", "chat"),
    ]
    assert [value for _, value in network_options(CHINESE)] == ["off", "command", "chat"]
    assert network_options(CHINESE)[2][0] == "此對話中的指令都可以連網路，連到下列主機"
    assert network_label(("pypi.org", "*.python.org"), ENGLISH) == "Network for commands: pypi.org, *.python.org"
    assert network_label(("*",), ENGLISH) == "Network for commands: any host"
    assert network_label(("*",), CHINESE) == "指令連網路：任何主機"
