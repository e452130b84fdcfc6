"""Both languages say everything, with the same placeholders; the core's kinds and values are worded only here."""

import re
import string
import typing

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.chats.errors import ChatError, ChatErrorKind
from meowgent.context import AnswerTooLong, ContextTooSmall, FitResult, trim_notice
from meowgent.events import (
    LEGACY,
    Done,
    ErrorEvent,
    Notice,
    ToolCall,
    ToolCallReady,
    ToolCallStarted,
    ToolResult,
    UserMessage,
)
from meowgent.llm.client import OllamaClient
from meowgent.llm.errors import (
    ModelError,
    ModelNotFound,
    ServerUnreachable,
    StreamBroken,
    StreamStalled,
    UnsupportedFeature,
    failure,
    not_ollama,
    response_error,
)
from meowgent.policy.risks import Risk
from meowgent.policy.why import Why, WhyKind
from meowgent.shellsplit.words import KINDS, Problem
from meowgent.ui.i18n import (
    CHINESE,
    ENGLISH,
    chat_error_text,
    en,
    error_text,
    notice_text,
    pick_language,
    risks,
    t,
    why_text,
    zh_tw,
)
from meowgent.ui.state.approval import describe_queue
from meowgent.ui.state.models import model_facts, server_status
from meowgent.ui.state.render import ChatView
from tests.ui.conftest import html_text
from tests.ui.state.test_models import PLAIN, QWEN


def fields(text):
    return {(name, spec) for _, name, spec, _ in string.Formatter().parse(text) if name}


def test_both_catalogs_have_the_same_keys_and_the_same_placeholders_per_key():
    assert set(en.TEXT) == set(zh_tw.TEXT)
    for key, english in en.TEXT.items():
        assert fields(english) == fields(zh_tw.TEXT[key]), key


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


# Every ModelError the funnel makes, and every error and notice the core yields, as the core makes them.
MODEL_ERRORS = [
    ServerUnreachable("http://127.0.0.1:11434"),
    ModelNotFound("mistral"),
    ModelNotFound(""),
    ModelNotFound("no-such-model", in_library=False),
    UnsupportedFeature("llama-plain", "thinking"),
    UnsupportedFeature("llama-plain", "tools"),
    UnsupportedFeature("llama-plain", "insert"),
    StreamBroken("llama runner process has terminated: signal: killed"),
    StreamBroken("the download ended before Ollama said it was complete.", what="download"),
    StreamStalled(0.5),
    StreamStalled(30, streaming=False),
    response_error(500, "server busy", host="h", model="m", what="answer"),
    response_error(500, "disk full", host="h", model="m", what="download"),
    response_error(500, "no", host="h", model="m", what=None),
    failure(httpx.ReadError("EOF"), host="http://127.0.0.1:11434", read_timeout=1, what=None),
    not_ollama("http://127.0.0.1:8080", "no version"),
    ModelError(
        "'bad' isn't an address Ollama can be reached at. Use one like http://127.0.0.1:11434.",
        kind="bad_host",
        values={"host": "bad"},
    ),
]
ERRORS = [
    *(ErrorEvent(error.kind, error.values) for error in MODEL_ERRORS),
    *(ErrorEvent(error.kind, error.values) for error in (ContextTooSmall(9000, 4000), AnswerTooLong(9000, 4000))),
    ErrorEvent("reply_too_long", {"limit": 200_000}),
    ErrorEvent("call_rejected", {"detail": "XML syntax error on line 1"}),
    ErrorEvent("max_turns", {"turns": 3}),
    ErrorEvent("nothing_to_retry"),
    ErrorEvent("interrupted"),
    ErrorEvent("internal"),
]
NOTICES = [
    Notice("call_retry"),
    Notice("call_too_large", {"limit": 100_000}),
    Notice("too_many_calls", {"limit": 20}),
    Notice("context_trimmed", {"results_shortened": True, "dropped": 3, "context": 8192}),
]
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.mark.parametrize("error", MODEL_ERRORS, ids=lambda e: f"{e.kind}-{e.values.get('case', '')}")
def test_the_english_page_says_each_model_error_as_its_message_and_the_chinese_page_says_it_in_chinese(error):
    """The page words the kind and values; the English catalog says what the funnel's English message says."""
    assert error_text(ENGLISH, error) == error.message
    assert CJK.search(error_text(CHINESE, error))


def test_errors_are_translated_by_kind_and_keep_the_commands_and_names_given_as_values():
    missing = ModelNotFound("mistral")
    chinese = error_text(CHINESE, missing)
    assert "還沒有安裝" in chinese
    assert "`ollama pull mistral`" in chinese
    broken = error_text(CHINESE, StreamBroken("model runner crashed"))
    assert broken.startswith("模型伺服器的回覆中斷了")
    assert "model runner crashed" in broken  # the server's own words, a value, quoted whole (no sentence of ours)


@pytest.mark.parametrize("said", ERRORS + NOTICES, ids=lambda e: e.kind)
def test_every_error_and_notice_the_core_yields_has_both_languages(said):
    text = error_text if isinstance(said, ErrorEvent) else notice_text
    english, chinese = text(ENGLISH, said), text(CHINESE, said)
    assert "{" not in english
    assert english != said.kind
    assert CJK.search(chinese)
    assert not CJK.search(english)


def test_a_note_stored_the_old_way_is_shown_as_stored_and_an_unknown_kind_is_named():
    legacy = ErrorEvent(LEGACY, {"text": "The model 'x' isn't installed."})
    assert error_text(CHINESE, legacy) == error_text(ENGLISH, legacy) == "The model 'x' isn't installed."
    assert notice_text(CHINESE, Notice(LEGACY, {"text": "Old note."})) == "Old note."
    assert error_text(ENGLISH, ErrorEvent("newer_kind")) == "Something failed (newer_kind)."


def test_risk_notes_and_the_chat_read_in_chinese():
    assert risks(CHINESE, (Risk.DELETES, Risk.NETWORK)) == "這個動作會刪除檔案、連上網路"
    assert risks(ENGLISH, (Risk.DELETES, Risk.HIDDEN)) == "this deletes files. Meowgent can't tell everything this runs"
    call = ToolCall("c1", "run_shell", {"command": "ls"})
    view = ChatView(CHINESE)
    stalled = ErrorEvent("stalled", {"seconds": 0.5})
    for event in (UserMessage("hi"), ToolCallStarted("c1"), ToolCallReady(call, True), stalled):
        view.apply(event)
    text = " ".join(html_text(str(m.content)) + str(m.metadata) for m in view.messages())
    assert "模型 0.5 秒沒有回應" in text
    view.language = ENGLISH
    assert "The model stopped answering for 0.5 s." in html_text(str(view.messages()[-1].content))
    assert t(CHINESE, "approve") == "✅ 核准"


@pytest.mark.parametrize("risk", list(Risk))
def test_every_risk_is_worded_in_both_languages(risk):
    assert CJK.search(risks(CHINESE, (risk,)))
    assert not CJK.search(risks(ENGLISH, (risk,)))


# Names, commands, addresses, examples of what to type, placeholders and units: the same in both languages.
NAMES = re.compile(
    r"例如 [^：]*|\{\w+(?::[^}]*)?\}|`[^`]*`|https?://\S+|Ollama|Meowgent|JSON|OLLAMA_HOST|--num-ctx|tokens?|GB|MB|Enter"
    r"|MCP|README|\.gitignore|bash|shell|here-document"
)


@pytest.mark.parametrize("key", sorted(en.TEXT))
def test_every_chinese_sentence_is_chinese(key):
    chinese = NAMES.sub("", zh_tw.TEXT[key])
    words = re.findall(r"[A-Za-z]{2,}", chinese)
    assert not words, f"{key}: English left in {zh_tw.TEXT[key]!r}"


def test_chinese_markdown_closes_its_bold():
    # CommonMark doesn't close ** between CJK punctuation and a letter: "**…。**試" showed the stars.
    for key, text in zh_tw.TEXT.items():
        for bold in re.findall(r"\*\*(.+?)\*\*(.?)", text):
            inner, after = bold
            assert not (inner[-1] in "。，！？：；、」）" and after and after.isalnum()), key


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


def test_a_denied_edit_says_the_rules_reason_in_the_pages_language():
    rule = 'deny run_shell command "rm *"'
    error = ChatError(ChatErrorKind.EDIT_DENIED, why=Why("rule_matches", rule, "rm -rf docs").values())
    assert chat_error_text(CHINESE, error) == f"你的規則不允許修改後的請求：規則 {rule} 符合 `rm -rf docs`"
    assert chat_error_text(ENGLISH, error).endswith(f"by your rules: the rule {rule} matches `rm -rf docs`")


@settings(max_examples=300, deadline=None)
@given(
    kind=st.sampled_from(typing.get_args(WhyKind)),
    quoted=st.tuples(st.text(), st.text(), st.text()),
    problems=st.lists(st.tuples(st.sampled_from(sorted(KINDS)), st.text(min_size=1)), max_size=6),
)
def test_every_reason_is_worded_in_both_languages_and_quotes_what_it_names_as_it_is(kind, quoted, problems):
    rule, text, path = quoted  # a model's command, a rule, a path: braces and all, never read as a template
    why = Why(kind, rule, text, path, tuple(Problem(*problem) for problem in problems))
    for language in (ENGLISH, CHINESE):
        worded = why_text(language, why.values())
        template = t(language, f"why_{kind}")
        for name, value in (("rule", rule), ("text", text), ("path", path)):
            assert (value in worded) or f"{{{name}}}" not in template
        if "{problems}" in template:
            assert worded.count("`") >= 2 * min(len(problems), 3)  # each problem named quotes its snippet
    assert kind == "refused" or CJK.search(why_text(CHINESE, why.values()))  # a tool's own message is all it says


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
    ("trimmed", "dropped", "english", "chinese"),
    [
        (
            True,
            0,
            "Long tool output was shortened to fit the model's 16k-token context. The full history is kept.",
            "為了放進模型 16k token 的上下文，較長的工具輸出已縮短。完整的紀錄都還保留著。",
        ),
        (
            False,
            1,
            "1 earlier message was left out to fit the model's 16k-token context. The full history is kept.",
            "為了放進模型 16k token 的上下文，省略了 1 則較早的訊息。完整的紀錄都還保留著。",
        ),
        (
            True,
            3,
            "Long tool output was shortened and 3 earlier messages were left out to fit the model's 16k-token "
            "context. The full history is kept.",
            "為了放進模型 16k token 的上下文，較長的工具輸出已縮短，並省略了 3 則較早的訊息。完整的紀錄都還保留著。",
        ),
    ],
)
def test_the_context_trimming_notice_reads_in_both_languages(trimmed, dropped, english, chinese):
    fit = FitResult(
        messages=[], trimmed_results=int(trimmed), dropped_messages=dropped, estimated_tokens=0, raw_tokens=0
    )
    notice = trim_notice(fit, 16_384)
    assert notice_text(ENGLISH, notice) == english
    assert notice_text(CHINESE, notice) == chinese


def _chinese_page(workspace, ollama):
    """The Chinese page's words: every notice and error in the chat, a card of calls, the banner and model facts."""
    view = ChatView(CHINESE)
    calls = (
        ToolCall("c1", "run_shell", {"command": "rm -rf build && curl https://example.com"}),
        ToolCall("c2", "write_file", {"path": "a.md", "content": "x"}),
    )
    for event in (UserMessage("hi"), *NOTICES, *ERRORS, Done("stopped")):
        view.apply(event)
    card = describe_queue(calls, workspace, CHINESE)
    facts = [model_facts(info, num_ctx_cap=16384, language=CHINESE) for info in (QWEN, PLAIN)]
    banner = server_status(ollama, suggested="qwen3", language=CHINESE).banner
    return [str(m.content) + str(m.metadata) for m in view.messages()], card, facts, banner


def test_rewording_the_english_catalog_does_not_change_the_chinese_page(monkeypatch, tmp_path):
    down = OllamaClient("http://127.0.0.1:9")  # nothing listens there: the banner says how to start Ollama
    before = _chinese_page(tmp_path, down)
    english_before = error_text(ENGLISH, ErrorEvent("internal"))
    for key, text in list(en.TEXT.items()):
        monkeypatch.setitem(en.TEXT, key, "Reworded: " + text)
    assert error_text(ENGLISH, ErrorEvent("internal")) == "Reworded: " + english_before  # the English page did change
    assert _chinese_page(tmp_path, down) == before


def test_the_banner_keeps_the_address_apart_from_the_chinese_after_it():
    # A bare URL followed by CJK text (no space) is linkified with the text swallowed into it.
    banner = t(CHINESE, "banner_down", host="http://127.0.0.1:11434", model="qwen3")
    assert "`http://127.0.0.1:11434`）" in banner
