"""Both languages say everything, with the same placeholders."""

import re
import string

import pytest

from meowgent.chats.service import ChatError, ChatErrorKind
from meowgent.context import FitResult, describe_fit
from meowgent.events import ErrorEvent, ToolCall, ToolCallReady, ToolCallStarted, ToolResult, UserMessage
from meowgent.policy.risks import Risk
from meowgent.ui.i18n import (
    _ERRORS,
    _TEXT,
    CHINESE,
    ENGLISH,
    chat_error_text,
    error_text,
    notice_text,
    pick_language,
    risks,
    t,
)
from meowgent.ui.render import ChatView
from tests.ui.conftest import html_text


def fields(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_sentence_exists_in_both_languages_with_the_same_placeholders():
    assert set(_TEXT[ENGLISH]) == set(_TEXT[CHINESE])
    for key, english in _TEXT[ENGLISH].items():
        assert fields(english) == fields(_TEXT[CHINESE][key]), key


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("zh-TW,zh;q=0.9,en;q=0.8", CHINESE),
        ("zh-Hant-HK", CHINESE),
        ("en-US,en;q=0.9,zh-TW;q=0.8", ENGLISH),
        ("fr-FR,fr;q=0.9", ENGLISH),
        ("", ENGLISH),
        (None, ENGLISH),
    ],
)
def test_the_language_comes_from_the_browser(header, language):
    assert pick_language(header) == language


def test_errors_are_translated_by_kind_and_keep_the_commands_to_run():
    english = "The model 'mistral' isn't installed. Download it with `ollama pull mistral`."
    assert error_text(ENGLISH, english, "not_found") == english
    chinese = error_text(CHINESE, english, "not_found")
    assert "還沒有安裝" in chinese
    assert "`ollama pull mistral`" in chinese
    broken = error_text(CHINESE, "model runner crashed", "broken")
    assert "model runner crashed" not in broken  # no English original repeated
    assert broken.startswith("模型伺服器的回覆中斷了")


def test_risk_notes_and_the_chat_read_in_chinese():
    assert risks(CHINESE, (Risk.DELETES, Risk.NETWORK)) == "這個動作會刪除檔案、連上網路"
    call = ToolCall("c1", "run_shell", {"command": "ls"})
    view = ChatView(CHINESE)
    for event in (UserMessage("hi"), ToolCallStarted("c1"), ToolCallReady(call, True), ErrorEvent("x", "stalled")):
        view.apply(event)
    text = " ".join(str(m.content) + str(m.metadata) for m in view.messages())
    assert "模型太久沒有回應" in text
    view.language = ENGLISH
    assert "x" in str(view.messages()[-1].content)
    assert t(CHINESE, "approve") == "✅ 核准"


# Names, commands, examples of what to type, placeholders and units: the same in both languages.
NAMES = re.compile(
    r"例如 [^：]*|\{\w+\}|`[^`]*`|Ollama|Meowgent|JSON|OLLAMA_HOST|--num-ctx|tokens?|GB|MB|Enter|MCP|README"
)


@pytest.mark.parametrize("key", sorted(_TEXT[ENGLISH]))
def test_every_chinese_sentence_is_chinese(key):
    chinese = NAMES.sub("", _TEXT[CHINESE][key])
    words = re.findall(r"[A-Za-z]{2,}", chinese)
    assert not words, f"{key}: English left in {_TEXT[CHINESE][key]!r}"


def test_chinese_markdown_closes_its_bold():
    # CommonMark doesn't close ** between CJK punctuation and a letter: "**…。**試" showed the stars.
    for key, text in _TEXT[CHINESE].items():
        for bold in re.findall(r"\*\*(.+?)\*\*(.?)", text):
            inner, after = bold
            assert not (inner[-1] in "。，！？：；、」）" and after and after.isalnum()), key


def test_every_error_kind_has_chinese():
    for kind, text in _ERRORS.items():
        assert re.search(r"[\u4e00-\u9fff]", text), kind


CHAT_ERRORS = {
    ChatErrorKind.UNAVAILABLE: "This conversation is not available. Start a new chat.",
    ChatErrorKind.OWNER_UNKNOWN: "Open Meowgent's page first: this request comes from no browser or account it knows.",
    ChatErrorKind.TYPE_FIRST: "Type a message first.",
    ChatErrorKind.NOT_WAITING: "That request is no longer waiting for you, so nothing was run.",
    ChatErrorKind.EDIT_INVALID: "The changed request can't run: {detail}",
    ChatErrorKind.EDIT_DENIED: "The changed request is not allowed by your rules: {detail}",
    ChatErrorKind.BUSY: "An answer is still running. Wait for it, or press Stop.",
    ChatErrorKind.NAME_FIRST: "Give the chat a name first.",
}


@pytest.mark.parametrize("kind", list(ChatErrorKind))
def test_the_page_says_every_chat_error_in_both_languages(kind):
    """ChatError carries its kind and values; the page says it (the sentences tests/chats/test_service.py checked)."""
    error = ChatError(kind, detail="a rule's reason")
    assert chat_error_text(ENGLISH, error) == CHAT_ERRORS[kind].format(detail="a rule's reason")
    chinese = chat_error_text(CHINESE, error)
    assert re.search(r"[\u4e00-\u9fff]", chinese)
    assert ("a rule's reason" in chinese) == ("{detail}" in CHAT_ERRORS[kind])


def test_the_chat_and_the_card_read_in_chinese_with_no_english_left():
    calls = [
        ToolCall("c1", "write_file", {"path": "a.md", "content": "x"}),
        ToolCall("c2", "edit_file", {"path": "a.md", "old": "x", "new": "y"}),
        ToolCall("c3", "run_shell", {"command": "ls"}),
    ]
    view = ChatView(CHINESE)
    for call in calls:
        view.apply(ToolCallStarted(call.id))
        view.apply(ToolCallReady(call, True))
    view.apply(ToolResult("c3", "run_shell", "ok", "done", 0.1))
    technical = re.compile(r"<details><summary>技術細節</summary>.*?</details>")  # the raw arguments, on purpose
    shown = " ".join(html_text(technical.sub("", m.content + m.metadata.get("title", ""))) for m in view.messages())
    shown = shown.replace("a.md", "").replace("ls", "").replace("ok", "")
    assert not re.findall(r"[A-Za-z]{2,}", shown), shown


@pytest.mark.parametrize(
    ("trimmed", "dropped", "chinese"),
    [
        (True, 0, "為了放進模型 16k token 的上下文，較長的工具輸出已縮短。完整的紀錄都還保留著。"),
        (False, 1, "為了放進模型 16k token 的上下文，省略了 1 則較早的訊息。完整的紀錄都還保留著。"),
        (
            True,
            3,
            "為了放進模型 16k token 的上下文，較長的工具輸出已縮短，並省略了 3 則較早的訊息。完整的紀錄都還保留著。",
        ),
    ],
)
def test_the_context_trimming_notice_reads_in_chinese(trimmed, dropped, chinese):
    fit = FitResult(
        messages=[], trimmed_results=int(trimmed), dropped_messages=dropped, estimated_tokens=0, raw_tokens=0
    )
    english = describe_fit(fit, 16_384)
    assert notice_text(ENGLISH, english) == english
    assert notice_text(CHINESE, english) == chinese


def test_the_banner_keeps_the_address_apart_from_the_chinese_after_it():
    # A bare URL followed by CJK text (no space) is linkified with the text swallowed into it.
    banner = t(CHINESE, "banner_down", host="http://127.0.0.1:11434", model="qwen3")
    assert "`http://127.0.0.1:11434`）" in banner
