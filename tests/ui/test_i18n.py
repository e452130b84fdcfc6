"""Both languages say everything, with the same placeholders."""

import string

import pytest

from meowgent.events import ErrorEvent, ToolCall, ToolCallReady, ToolCallStarted, UserMessage
from meowgent.ui.i18n import _TEXT, CHINESE, ENGLISH, error_text, pick_language, risks, t
from meowgent.ui.render import ChatView


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
    assert error_text(CHINESE, "model runner crashed", "broken").endswith("（model runner crashed）")


def test_risk_notes_and_the_chat_read_in_chinese():
    assert risks(CHINESE, ("deletes files", "uses the network")) == "刪除檔案、連上網路"
    call = ToolCall("c1", "run_shell", {"command": "ls"})
    view = ChatView(CHINESE)
    for event in (UserMessage("hi"), ToolCallStarted("c1"), ToolCallReady(call, True), ErrorEvent("x", "stalled")):
        view.apply(event)
    text = " ".join(str(m.content) + str(m.metadata) for m in view.messages())
    assert "模型太久沒有回應" in text
    view.language = ENGLISH
    assert "x" in str(view.messages()[-1].content)
    assert t(CHINESE, "approve") == "✅ 核准"
