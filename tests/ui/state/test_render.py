"""ChatView as a pure function: events in, gr.ChatMessage list out, no browser."""

import functools
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from meowgent.events import (
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolCallWriting,
    ToolResult,
    UserMessage,
)
from meowgent.persist.records import dump, event_from_record
from meowgent.policy.why import Why
from meowgent.shellsplit.words import Problem
from meowgent.ui.html.callhtml import RESULT_VIEW_CHARS, fence, trim_for_view
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.state.approval import link_target
from meowgent.ui.state.livecall import TAIL_CHARS
from meowgent.ui.state.render import LIVE_LINES, ChatView
from tests.ui.conftest import html_text

WRITE = ToolCall("call_w", "write_file", {"path": "notes.md", "content": "meow\n"})
SHELL = ToolCall("call_s", "run_shell", {"command": "ls -la"})


def view_of(*events, language=ENGLISH):
    view = ChatView(language)
    for event in events:
        view.apply(event)
    return view


def panel(view, call_id):
    """The one message whose metadata id is `call_id`."""
    (message,) = [m for m in view.messages() if (m.metadata or {}).get("id") == call_id]
    return message


def raw_of(call):
    return json.dumps({"name": call.name, "arguments": call.arguments})


def streamed(call, *, pieces=7):
    """Started + progress events of `call` written in small pieces, as the agent yields them."""
    raw = raw_of(call)
    step = max(1, len(raw) // pieces)
    return [ToolCallStarted(call.id), *(ToolCallProgress(call.id, raw[i : i + step]) for i in range(0, len(raw), step))]


def ready(call, *, risky=True):
    return [*streamed(call), ToolCallReady(call, risky)]


def fences_in(markdown):
    return [token for token in MarkdownIt("commonmark").parse(markdown) if token.type == "fence"]


def text_of(message):
    """What the browser shows of a message's body."""
    return html_text(message.content).strip()


def title_of(message):
    return html_text(message.metadata["title"])


# ---- text and thinking ----


def test_a_user_message_is_shown_as_the_persons_message():
    (message,) = view_of(UserMessage("What's in notes.md?")).messages()
    assert message.role == "user"
    assert text_of(message) == "What's in notes.md?"


def test_text_deltas_merge_into_one_assistant_message():
    view = view_of(UserMessage("hi"), TextDelta("Hel"), TextDelta("lo, "), TextDelta("human."))
    user, assistant = view.messages()
    assert text_of(user) == "hi"
    assert assistant.role == "assistant"
    assert text_of(assistant) == "Hello, human."
    assert not assistant.metadata


def test_text_after_a_tool_panel_starts_a_new_message():
    view = view_of(TextDelta("Let me look. "), *ready(SHELL), TextDelta("Done looking."))
    contents = [text_of(m) for m in view.messages() if not m.metadata]
    assert contents == ["Let me look.", "Done looking."]


def test_thinking_is_a_pending_panel_until_thinking_done_gives_its_duration():
    view = view_of(UserMessage("hi"), ThinkingDelta("The person "), ThinkingDelta("greets me."))
    thinking = view.messages()[1]
    assert text_of(thinking) == "The person greets me."
    assert title_of(thinking) == "Thinking"
    assert thinking.metadata["status"] == "pending"
    assert "duration" not in thinking.metadata

    view.apply(ThinkingDone(2.34))
    view.apply(TextDelta("Hello!"))
    _, thinking, answer = view.messages()
    assert thinking.metadata["status"] == "done"
    assert thinking.metadata["duration"] == 2.3
    assert text_of(answer) == "Hello!"
    assert not answer.metadata


def test_thinking_after_a_finished_thought_opens_a_second_panel():
    view = view_of(ThinkingDelta("first"), ThinkingDone(1.0), TextDelta("x"), ThinkingDelta("second"))
    panels = [m for m in view.messages() if m.metadata.get("title") == "Thinking"]
    assert [text_of(p) for p in panels] == ["first", "second"]
    assert [p.metadata["status"] for p in panels] == ["done", "pending"]


def test_done_closes_a_thinking_panel_that_never_got_thinking_done():
    view = view_of(ThinkingDelta("hmm"), Done("complete"))
    (thinking,) = view.messages()
    assert thinking.metadata["status"] == "done"
    assert thinking.metadata["duration"] == 0.0


def test_the_models_markdown_keeps_its_structure_but_nothing_that_loads_or_navigates():
    reply = (
        "# Plan\n\n**bold** and *soft* and `code`\n\n- one\n- two\n\n```sh\nrm -rf <dir>\n```\n\n"
        "<img src=http://127.0.0.1:9/a> ![cat](http://127.0.0.1:9/b) [site](http://127.0.0.1:9/c) "
        '<div style="background:url(http://127.0.0.1:9/d)">x</div> <form action=/x><button>go</button></form>'
    )
    (message,) = view_of(TextDelta(reply)).messages()
    html = message.content
    assert re.findall(r"<(\w+)", html) == [
        *("div", "h1", "p", "strong", "em", "code", "ul", "li", "li", "pre", "code", "p")
    ]
    assert "\n" not in html  # one HTML block: Gradio's Markdown pass leaves it alone
    shown = text_of(message)
    assert "rm -rf <dir>" in shown
    assert "<img src=http://127.0.0.1:9/a>" in shown
    assert "[image: cat — http://127.0.0.1:9/b]" in shown
    assert "site (http://127.0.0.1:9/c)" in shown
    assert '<div style="background:url(http://127.0.0.1:9/d)">x</div>' in shown


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('<>&"`*_[]()!:/\\$ \nab=#-'), max_size=80) | st.text(max_size=80))
def test_no_text_the_model_writes_becomes_markup(text):
    view = view_of(TextDelta(text), *ready(ToolCall("c1", "write_file", {"path": text, "content": text})))
    allowed = {"div", "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "hr", "br"}
    allowed |= {"em", "strong", "s", "code", "pre", "table", "thead", "tbody", "tr", "th", "td"}
    allowed |= {"details", "summary", "span"}
    for message in view.messages():
        for markup in (message.content, (message.metadata or {}).get("title", "")):
            assert set(re.findall(r"</?([A-Za-z][\w-]*)", markup)) <= allowed
            assert not re.search(r"<[a-z]+ (?!class=\"mg[\w -]*\"|open|start=\"\d+\")", markup)  # only ours
            assert "\n" not in markup
            assert "$$" not in markup  # no LaTeX for Gradio's KaTeX pass


# ---- tool panels while they stream ----


def test_the_title_is_readable_from_partial_json_before_the_call_is_finished():
    view = view_of(ToolCallStarted("c1"))
    assert title_of(panel(view, "c1")) == "Preparing an action…"
    for piece in ['{"name": "wri', 'te_file", "argu', 'ments": {"path": "notes', '.md", "content": "# Shop']:
        view.apply(ToolCallProgress("c1", piece))
    message = panel(view, "c1")
    assert title_of(message) == "Writing notes.md… 1 line so far"
    assert message.metadata["status"] == "pending"
    assert message.metadata["log"] == "writing…"
    shown, technical = text_of(message).split("Technical details")
    assert "# Shop" in shown  # the text itself, not its JSON
    assert '"content"' not in shown
    assert '"content": "# Shop' in technical  # the JSON so far, one click away


def test_a_file_being_written_shows_its_last_lines_as_lines_and_counts_them():
    content = "".join(f"line {i}\n" for i in range(57))
    raw = raw_of(ToolCall("c1", "write_file", {"path": "report.md", "content": content}))
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw[:-3]))
    message = panel(view, "c1")
    assert title_of(message) == "Writing report.md… 57 lines so far"
    shown = text_of(message).split("Technical details")[0].strip()
    assert shown.endswith("line 55\nline 56")
    assert "line 44\n" not in shown  # only the newest LIVE_LINES lines
    assert len(re.findall(r"line \d+", shown)) == LIVE_LINES
    assert "\\n" not in shown


def test_an_edit_being_written_shows_before_and_after():
    raw = raw_of(ToolCall("c1", "edit_file", {"path": "a.md", "old": "cat = 1", "new": "cat = 2"}))
    message = panel(view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw[:-5])), "c1")
    assert title_of(message) == "Editing a.md…"
    assert "Before\ncat = 1\nAfter\ncat =" in text_of(message)


def test_a_call_ollama_holds_back_counts_the_seconds_until_it_is_ready():
    view = view_of(ToolCallStarted("c1"), ToolCallWriting("c1", 2.4))
    assert view.apply(ToolCallWriting("c1", 3.5))  # an update a second, drawn at once
    message = panel(view, "c1")
    assert text_of(message) == "The model is writing a tool call… 3 s"
    assert message.metadata["status"] == "pending"
    view.apply(ToolCallReady(ToolCall("c1", WRITE.name, WRITE.arguments), True))
    assert "writing a tool call" not in text_of(panel(view, "c1"))
    assert "notes.md" in text_of(panel(view, "c1"))


def test_a_half_written_command_shows_what_is_there_so_far():
    view = view_of(
        ToolCallStarted("c1"), ToolCallProgress("c1", '{"name": "run_shell", "arguments": {"command": "ls -')
    )
    assert title_of(panel(view, "c1")) == "Run ls -"


def test_a_long_object_is_cut_in_the_title_and_newlines_marked():
    command = "echo one\n" + "x" * 100
    view = view_of(*ready(ToolCall("c1", "run_shell", {"command": command})))
    assert title_of(panel(view, "c1")) == "Run echo one ⏎ " + "x" * 49 + "…"


@pytest.mark.parametrize(
    ("call", "title"),
    [
        (ToolCall("c", "read_file", {"path": "notes.md"}), "Read notes.md"),
        (ToolCall("c", "list_files", {"path": "docs"}), "List files in docs"),
        (ToolCall("c", "list_files", {}), "List the files in the workspace"),
        (ToolCall("c", "search_files", {"pattern": "TODO"}), "Search for TODO"),
        (ToolCall("c", "search_files", {"pattern": "TODO", "path": "src"}), "Search for TODO in src"),
        (ToolCall("c", "web_fetch", {"url": "https://example.org/a/very/long/path/to/a/page?q=1"}), None),
        (ToolCall("c", "edit_file", {"path": "report.md", "old": "a", "new": "b"}), "Edit report.md"),
        (ToolCall("c", "write_file", {"path": "report.md", "content": "x"}), "Write report.md"),
        (ToolCall("c", "files__stat", {"path": "x"}), "Use the tool files__stat"),
    ],
)
def test_titles_say_a_verb_and_its_object(call, title):
    shown = title_of(panel(view_of(*ready(call)), call.id))
    assert shown == (title or "Read the page example.org/a/very/long/path/to/…")


def test_a_huge_argument_streams_with_only_its_last_lines():
    head = '{"name": "write_file", "arguments": {"path": "big.txt", "content": "'
    partial = head + "".join(f"{i:07d}\\n" for i in range(1_000_000 // 9))
    partial += "x" * (-len(partial) % 4)  # whole 4-character pieces
    view = view_of(ToolCallStarted("c1"))
    for i in range(0, len(partial), 4):
        view.apply(ToolCallProgress("c1", partial[i : i + 4]))
    message = panel(view, "c1")
    assert title_of(message) == "Writing big.txt… 111,112 lines so far"
    assert message.metadata["status"] == "pending"
    assert len(message.content) < TAIL_CHARS * 2
    assert "0111110\n" in text_of(message)  # the newest lines are what is shown


def test_apply_is_false_for_plain_deltas_and_true_for_status_changes():
    view = ChatView()
    assert view.apply(UserMessage("go")) is True
    assert view.apply(ThinkingDelta("a")) is True  # a new panel appears
    assert view.apply(ThinkingDelta("b")) is False
    assert view.apply(ThinkingDone(1.0)) is True
    assert view.apply(TextDelta("Sure. ")) is True  # a new message appears
    assert view.apply(TextDelta("Here.")) is False
    assert view.apply(ToolCallStarted(WRITE.id)) is True
    assert view.apply(ToolCallProgress(WRITE.id, raw_of(WRITE)[:10])) is False
    assert view.apply(ToolCallProgress(WRITE.id, raw_of(WRITE)[10:])) is False
    assert view.apply(ToolCallReady(WRITE, True)) is True
    assert view.apply(ApprovalNeeded((WRITE,))) is True
    assert view.apply(ToolResult(WRITE.id, WRITE.name, "Created notes.md", "done", 0.1)) is True
    assert view.apply(ErrorEvent("internal")) is True
    assert view.apply(Notice("call_retry")) is True
    assert view.apply(Done("complete")) is True


# ---- tool panels: states ----


def test_a_ready_call_shows_its_arguments_readably_with_the_raw_ones_one_click_away():
    call = ToolCall("call_w", "write_file", {"path": "notes.md", "content": "line one\nline two", "append": False})
    message = panel(view_of(*ready(call, risky=False)), call.id)
    assert title_of(message) == "Write notes.md"
    assert message.metadata["status"] == "pending"
    shown = text_of(message)
    assert "File\nnotes.md\n" in shown
    assert "Text\nline one\nline two\n" in shown  # multi-line text as lines, not an escaped JSON string
    assert "append\nfalse\n" in shown
    assert "<details><summary>Technical details</summary>" in message.content
    assert '"path": "notes.md"' in shown


def test_an_edit_is_a_coloured_diff():
    call = ToolCall("c1", "edit_file", {"path": "a.py", "old": "x = 1\ny = 2", "new": "x = 1\ny = 3"})
    message = panel(view_of(*ready(call)), call.id)
    assert '<span class="mg-del">&#45;y &#61; 2</span><span class="mg-add">&#43;y &#61; 3</span>' in message.content


def test_a_huge_edit_shows_the_head_and_tail_of_its_diff_and_says_when_it_is_rough():
    """Ten times the 170 KB edit whose panel took 5.7 s: bounded work, bounded page."""
    call = ToolCall("c1", "edit_file", {"path": "a.txt", "old": "x\n" * 850_000, "new": "x\ny\n" * 990})
    shown = text_of(panel(view_of(*ready(call)), call.id))
    assert shown.startswith("This change is too big to compare line by line")
    assert "more characters not shown here" in shown
    diff = shown[shown.index("--- before") : shown.index("Technical details")]
    assert len(diff) < RESULT_VIEW_CHARS + 200


def test_a_change_through_a_link_names_its_real_file_in_the_panel_title(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("[core]\n")
    (tmp_path / "NOTES.md").symlink_to(".git/config")
    view = ChatView(link_target=functools.partial(link_target, tmp_path))
    write = ToolCall("c1", "write_file", {"path": "NOTES.md", "content": "x"})
    for event in [*ready(write), ApprovalNeeded((write,))]:
        view.apply(event)
    assert title_of(panel(view, "c1")) == "Write NOTES.md → .git/config"
    assert title_of(panel(view_of(*ready(write)), "c1")) == "Write NOTES.md"  # a view that cannot look


def test_a_command_being_written_folds_its_blank_lines():
    call = ToolCall("c1", "run_shell", {"command": "echo safe" + "\n" * 40 + "touch x"})
    view = view_of(*streamed(call))
    assert "echo safe\n⟨↵×40⟩ touch x" in text_of(panel(view, "c1"))
    view.apply(ToolCallReady(call, True))
    assert "echo safe\n⟨↵×40⟩ touch x" in text_of(panel(view, "c1"))


def test_a_waiting_call_says_so_and_stays_pending():
    view = view_of(UserMessage("save it"), *ready(WRITE), ApprovalNeeded((WRITE,)), Done("paused"))
    message = panel(view, WRITE.id)
    assert message.metadata["log"] == "waiting for your approval"
    assert message.metadata["status"] == "pending"
    assert title_of(message) == "Write notes.md"
    assert view.waiting == (WRITE,)


def test_a_done_call_shows_its_result_trimmed_with_status_done_and_duration():
    output = "".join(f"line {i}\n" for i in range(2_000))
    assert len(output) > RESULT_VIEW_CHARS
    read = ToolCall("c1", "read_file", {"path": "big.txt"})
    view = view_of(*ready(read), ToolResult(read.id, read.name, output, "done", 1.234))
    message = panel(view, read.id)
    assert message.metadata["status"] == "done"
    assert message.metadata["duration"] == 1.23
    assert title_of(message) == "Read big.txt"
    assert "log" not in message.metadata
    shown = text_of(message)
    assert trim_for_view(output).strip() in shown
    assert "line 0\n" in shown
    assert shown.endswith("line 1999")
    assert f"{len(output) - RESULT_VIEW_CHARS:,} more characters not shown here" in shown


def test_a_commands_output_is_in_view_outside_its_panel_with_all_of_it_one_click_away():
    output = "$ seq 1 30\nexit status: 0\n" + "".join(f"{i}\n" for i in range(1, 31))
    view = view_of(*ready(SHELL), ApprovalNeeded((SHELL,)), ToolResult(SHELL.id, SHELL.name, output, "done", 0.2))
    messages = view.messages()
    at = messages.index(panel(view, SHELL.id))
    assert "exit status" not in text_of(messages[at])  # not hidden in the closed panel
    shown = messages[at + 1]
    assert not shown.metadata
    assert text_of(shown).startswith("Output\n$ seq 1 30\nexit status: 0\n1\n2\n3\n4\n5\n6\n")
    assert "Show all (33 lines)" in text_of(shown)
    assert "<details><summary>Show all" in shown.content


def test_a_short_output_has_no_show_all():
    view = view_of(*ready(SHELL), ToolResult(SHELL.id, SHELL.name, "exit status 0\nnotes.md", "done", 0.02))
    shown = view.messages()[-1]
    assert text_of(shown) == "Output\nexit status 0\nnotes.md"


def test_a_finished_write_carries_its_undo_on_the_row_seen_without_opening_it():
    write = ToolCall('c"><img src=x>', "write_file", {"path": "notes.md", "content": "meow\n"})
    view = view_of(*ready(write), ToolResult(write.id, write.name, "Wrote notes.md.", "done", 0.1))
    message = panel(view, write.id)
    assert title_of(message) == "Write notes.md↩ Undo this change"
    assert '<button type="button" class="undo" value="c&#34;&#62;&#60;img src&#61;x&#62;">' in message.metadata["title"]
    assert "<img" not in message.metadata["title"]
    assert "button" not in message.content  # once, on the row, not again inside the panel
    chinese = ChatView(CHINESE)
    for event in [*ready(write), ToolResult(write.id, write.name, "Wrote notes.md.", "done", 0.1)]:
        chinese.apply(event)
    assert "↩ 復原這項變更" in title_of(panel(chinese, write.id))


def test_a_write_undone_says_so_on_its_row_instead_of_offering_undo_again():
    view = view_of(*ready(WRITE), ToolResult(WRITE.id, WRITE.name, "Wrote notes.md.", "done", 0.1))
    view.messages()  # drawn once with its button: the row is drawn again when the undo is known
    view.mark_undone({WRITE.id})
    row = panel(view, WRITE.id).metadata["title"]
    assert title_of(panel(view, WRITE.id)).startswith("Write notes.md↩ Undone")
    assert "button" not in row
    view.language = CHINESE
    assert "↩ 已復原" in title_of(panel(view, WRITE.id))
    view.mark_undone(())  # its change written again, say: Undo is offered again
    assert "button" in panel(view, WRITE.id).metadata["title"]


@pytest.mark.parametrize("status", ["error", "rejected"])
def test_a_write_that_did_not_happen_has_no_undo(status):
    view = view_of(*ready(WRITE), ToolResult(WRITE.id, WRITE.name, "No.", status, 0.1))
    assert "button" not in panel(view, WRITE.id).metadata["title"]
    assert "button" not in panel(view_of(*ready(WRITE), ApprovalNeeded((WRITE,))), WRITE.id).metadata["title"]


def test_a_viewers_view_shows_no_button_and_a_command_says_it_cannot_be_undone():
    view = ChatView(viewer=True)
    for event in [*ready(WRITE), ToolResult(WRITE.id, WRITE.name, "Wrote notes.md.", "done", 0.1)]:
        view.apply(event)
    assert "button" not in panel(view, WRITE.id).metadata["title"]
    shell = view_of(*ready(SHELL), ToolResult(SHELL.id, SHELL.name, "exit status 0", "done", 0.1))
    assert "button" not in panel(shell, SHELL.id).metadata["title"]
    assert "Commands can't be undone." in text_of(panel(shell, SHELL.id))


def test_a_finished_edit_shows_its_diff_once_and_the_results_first_line():
    call = ToolCall("c1", "edit_file", {"path": "a.py", "old": "y = 2", "new": "y = 3"})
    result = "Edited a.py at line 2.\n--- a/a.py\n+++ b/a.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3"
    message = panel(view_of(*ready(call), ToolResult(call.id, call.name, result, "done", 0.1)), call.id)
    shown = text_of(message)
    assert shown.count("+y = 3") == 1
    assert shown.count("-y = 2") == 1
    assert "Edited a.py at line 2." in shown
    failed = "Error: old was not found in a.py.\nThe closest lines are:\n y = 1"
    message = panel(view_of(*ready(call), ToolResult(call.id, call.name, failed, "error", 0.1)), call.id)
    assert "The closest lines are:\n y = 1" in text_of(message)  # a failure's explanation is all shown


@pytest.mark.parametrize(
    ("status", "mark", "log", "has_duration"),
    [("error", "❌ ", "failed", True), ("rejected", "🚫 ", "rejected", False)],
)
def test_failed_and_rejected_calls_are_marked(status, mark, log, has_duration):
    view = view_of(*ready(WRITE), ToolResult(WRITE.id, WRITE.name, "The person rejected this call.", status, 0.5))
    message = panel(view, WRITE.id)
    assert title_of(message) == mark + "Write notes.md"
    assert message.metadata["log"] == log
    assert message.metadata["status"] == "done"
    assert ("duration" in message.metadata) is has_duration
    assert "The person rejected this call." in text_of(message)


REFUSED_NOTE = "Not run: the person's rules do not allow this call to run_shell (the rule matches). Do not retry it."
RM_RULE = 'deny run_shell command "rm *"'
HIDDEN = Why("hidden_deny", RM_RULE, problems=(Problem("arithmetic", "$((a[$(rm x)]))"),))


@pytest.mark.parametrize(
    ("why", "reason", "english", "chinese"),
    [
        ("person", {"said": "too risky"}, "This call was rejected, so it did not run. Reason: too risky",
         "這個呼叫被拒絕了，所以沒有執行。理由：too risky"),
        ("person", {}, "This call was rejected, so it did not run.", "這個呼叫被拒絕了，所以沒有執行。"),
        ("rules", Why("rule_matches", RM_RULE, "rm x").values(),
         f"This call is not allowed, so it did not run. Reason: the rule {RM_RULE} matches `rm x`",
         f"這個呼叫不被允許，所以沒有執行。理由：規則 {RM_RULE} 符合 `rm x`"),
        ("rules", Why("outside", "", "'../x' is outside the workspace /w; use a path inside it.", "../x").values(),
         "This call is not allowed, so it did not run. Reason: ../x is outside the workspace",
         "這個呼叫不被允許，所以沒有執行。理由：../x 在工作資料夾之外"),
        ("changed_call", HIDDEN.values(),
         "The call as changed is not allowed, so it did not run. Reason: Meowgent can't tell everything "
         f"it runs (the arithmetic `$((a[$(rm x)]))` can run code hidden in a variable's value), and the rule {RM_RULE}"
         " could match",
         "修改後的呼叫不被允許，所以沒有執行。理由：Meowgent 無法確知它會執行的所有內容（算術運算 "
         f"`$((a[$(rm x)]))` 可能執行藏在變數值裡的程式碼），而規則 {RM_RULE} 可能符合"),
        ("new_message", {}, "Not run: a new message was sent while it waited for a decision.",
         "未執行：在等待決定時送出了新訊息。"),
        ("new_answer", {}, "Not run: a new answer was asked for.", "未執行：已要求重新回答。"),
    ],
)  # fmt: skip
def test_a_call_that_did_not_run_says_why_in_the_pages_language_not_in_the_note_to_the_model(
    why, reason, english, chinese
):
    result = ToolResult(SHELL.id, SHELL.name, REFUSED_NOTE, "rejected", not_run=why, reason=reason)
    for language, sentence in ((ENGLISH, english), (CHINESE, chinese)):
        shown = text_of(panel(view_of(*ready(SHELL), result, language=language), SHELL.id))
        assert shown.endswith(sentence)
        assert REFUSED_NOTE not in shown


def test_a_line_with_many_problems_names_three_and_counts_the_rest_in_chinese():
    problems = tuple(Problem("expansion", f"${{x{i}@P}}") for i in range(5))
    reason = Why("hidden_deny", RM_RULE, problems=problems).values()
    result = ToolResult(SHELL.id, SHELL.name, REFUSED_NOTE, "rejected", not_run="rules", reason=reason)
    shown = text_of(panel(view_of(*ready(SHELL), result, language=CHINESE), SHELL.id))
    assert shown.count("可能執行藏在變數值裡的程式碼") == 3
    assert "；還有 2 項）" in shown


def test_a_reason_a_newer_meowgent_stored_is_said_plainly():
    reason = {"kind": "from_the_future", "problems": [["also_new", "x"]], "more": 0}
    result = ToolResult(SHELL.id, SHELL.name, REFUSED_NOTE, "rejected", not_run="rules", reason=reason)
    shown = text_of(panel(view_of(*ready(SHELL), result), SHELL.id))
    assert shown.endswith("Reason: a reason this version of Meowgent does not know")


def test_a_rejection_reads_in_chinese_with_the_persons_reason_as_plain_text():
    said = {"said": "<img src=x onerror=alert(1)> 太危險"}
    result = ToolResult(SHELL.id, SHELL.name, "The person rejected it.", "rejected", not_run="person", reason=said)
    message = panel(view_of(*ready(SHELL), result, language=CHINESE), SHELL.id)
    assert text_of(message).endswith("這個呼叫被拒絕了，所以沒有執行。理由：<img src=x onerror=alert(1)> 太危險")
    assert "<img" not in message.content
    assert message.metadata["log"] == "已拒絕"


def test_a_refusal_quoting_a_huge_command_shows_its_head_and_tail():
    reason = Why("rule_matches", RM_RULE, "rm " + "x" * 200_000 + " end").values()
    result = ToolResult(SHELL.id, SHELL.name, "Not run.", "rejected", not_run="rules", reason=reason)
    shown = text_of(panel(view_of(*ready(SHELL), result), SHELL.id))
    assert len(shown) < RESULT_VIEW_CHARS + 500
    assert f"the rule {RM_RULE} matches `rm xxx" in shown
    assert shown.endswith(" end`")


def test_an_invalid_call_shows_the_error_the_model_was_told():
    raw = '{"name": "read_file", "arguments": {"path": 42}}'
    error = "Error: 'path': Input should be a valid string"
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw), ToolCallInvalid("c1", raw, error))
    message = panel(view, "c1")
    assert title_of(message) == "❌ Use the tool read_file"
    assert message.metadata["log"] == "not run: the call was malformed"
    assert message.metadata["status"] == "done"
    assert "42" in text_of(message)
    assert error in text_of(message)


def test_a_call_ollama_could_not_read_and_the_model_writes_again_is_a_step_not_an_error():
    raw = '{"name": "write_file", "arguments": {"path": "notes.md", "content": "hi"}}'
    error = "Ollama could not read this tool call (EOF), so it did not run. The model was asked to write it again."
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw), ToolCallInvalid("c1", raw, error, True))
    message = panel(view, "c1")
    assert title_of(message).startswith("🔁 ")
    assert "❌" not in title_of(message)
    assert message.metadata["log"] == "not run: the model server could not read it, so the model writes it again"
    assert error in text_of(message)


def test_a_call_that_is_not_json_shows_its_raw_text():
    raw = "call read_file on <notes.md>"
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw))
    assert raw in text_of(panel(view, "c1"))
    view.apply(ToolCallInvalid("c1", raw, "Error: the tool call is not valid JSON"))
    assert title_of(panel(view, "c1")) == "❌ A request the assistant wrote wrong"


def test_stop_marks_a_half_written_call_interrupted_and_says_stopped():
    view = view_of(
        UserMessage("write it"),
        TextDelta("Writing. "),
        ToolCallStarted("c1"),
        ToolCallProgress("c1", '{"name": "write_file", "arguments": {"path": "a.md", "content": "hal'),
        Done("stopped"),
    )
    messages = view.messages()
    call = panel(view, "c1")
    assert title_of(call) == "⏹ Write a.md"
    assert call.metadata["log"] == "interrupted"
    assert call.metadata["status"] == "done"
    assert text_of(messages[-1]) == "⏹ Stopped. The answer above is incomplete."
    assert messages[-1].role == "assistant"


def test_stop_leaves_finished_and_waiting_calls_alone():
    view = view_of(*ready(WRITE), ToolResult(WRITE.id, WRITE.name, "ok", "done", 0.1), Done("stopped"))
    assert title_of(panel(view, WRITE.id)) == "Write notes.md↩ Undo this change"  # no ⏹ mark: it finished
    view = view_of(*ready(WRITE), ApprovalNeeded((WRITE,)), Done("stopped"))
    assert panel(view, WRITE.id).metadata["log"] == "waiting for your approval"


def test_an_error_ending_interrupts_a_call_without_a_stopped_note():
    crashed = ErrorEvent("broken", {"case": "answer", "detail": "Ollama crashed."})
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", '{"name": "run'), crashed)
    view.apply(Done("error"))
    messages = view.messages()
    assert panel(view, "c1").metadata["log"] == "interrupted"
    assert [text_of(m) for m in messages if not m.metadata] == [
        "⚠️ The answer from Ollama broke off: Ollama crashed. Try again."
    ]


def test_an_error_is_a_plain_note():
    view = view_of(UserMessage("hi"), ErrorEvent("unreachable", {"host": "127.0.0.1:11434"}))
    note = view.messages()[-1]
    assert note.role == "assistant"
    assert text_of(note) == (
        "⚠️ Can't reach Ollama at 127.0.0.1:11434. Start it with ollama serve (or open the Ollama app), then try again."
    )
    assert "<code>ollama serve</code>" in note.content
    assert not note.metadata


def test_a_notice_is_a_plain_note():
    trimmed = Notice("context_trimmed", {"results_shortened": True, "dropped": 0, "context": 8192})
    note = view_of(trimmed).messages()[-1]
    assert (
        text_of(note)
        == "ℹ️ Long tool output was shortened to fit the model's 8k-token context. The full history is kept."
    )


@pytest.mark.parametrize("language", [ENGLISH, CHINESE])
def test_a_note_stored_the_old_way_shows_as_stored(language):
    """Events an older Meowgent stored carry an English sentence and no values: shown as they were, never parsed."""
    stored = [
        {
            "type": "ErrorEvent",
            "message": "Can't reach Ollama at h. Start it with `ollama serve`.",
            "kind": "unreachable",
        },
        {
            "type": "Notice",
            "message": "3 earlier messages were left out to fit the model's 8k-token context.",
            "kind": "",
        },
    ]
    view = ChatView(language)
    for record in stored:
        view.apply(event_from_record(json.loads(dump(record))))
    assert [text_of(m) for m in view.messages()] == [
        "⚠️ Can't reach Ollama at h. Start it with ollama serve.",
        "ℹ️ 3 earlier messages were left out to fit the model's 8k-token context.",
    ]


def test_a_complete_answer_adds_no_note():
    view = view_of(UserMessage("hi"), TextDelta("Hello."), Done("complete"))
    assert [text_of(m) for m in view.messages()] == ["hi", "Hello."]


# ---- what waits for the person ----


def test_waiting_follows_approval_results_and_new_messages():
    view = view_of(*ready(WRITE), *ready(SHELL), ApprovalNeeded((WRITE, SHELL)), Done("paused"))
    assert view.waiting == (WRITE, SHELL)
    assert [panel(view, c.id).metadata["log"] for c in (WRITE, SHELL)] == ["waiting for your approval"] * 2
    view.apply(ToolResult(WRITE.id, WRITE.name, "Created notes.md", "done", 0.01))
    assert view.waiting == (SHELL,)
    view.apply(UserMessage("never mind"))
    assert view.waiting == ()


def test_a_rebuilt_view_matches_the_live_one():
    """A reloaded page replays the same log (with deltas merged) and must show the same thing."""
    events = [UserMessage("go"), TextDelta("a"), TextDelta("b"), *ready(WRITE), ApprovalNeeded((WRITE,))]
    merged = [UserMessage("go"), TextDelta("ab"), ToolCallStarted(WRITE.id), ToolCallProgress(WRITE.id, raw_of(WRITE))]
    merged += [ToolCallReady(WRITE, True), ApprovalNeeded((WRITE,))]
    live, replayed = view_of(*events), view_of(*merged)
    assert [(m.role, m.content, m.metadata) for m in live.messages()] == [
        (m.role, m.content, m.metadata) for m in replayed.messages()
    ]
    assert live.waiting == replayed.waiting == (WRITE,)


def test_a_call_with_a_lone_surrogate_still_renders_as_utf8():
    # json.loads turns the model's `\ud800` escape into a lone surrogate; the browser gets UTF-8 (orjson refuses it)
    call = ToolCall("c1", "write_file", {"path": "a\ud800.md", "content": "x\ud800y"})
    for message in view_of(*ready(call)).messages():
        message.content.encode()
        message.metadata["title"].encode()


# ---- fence ----


def test_fence_wraps_text_with_a_language():
    assert fence('{"a": 1}', "json") == '```json\n{"a": 1}\n```'


def test_fence_outgrows_backtick_runs_inside():
    text = "code:\n```\nrm -rf /\n```\nand ```` four"
    fenced = fence(text)
    assert fenced.startswith("`````\n")
    assert fenced.endswith("\n`````")
    (block,) = fences_in(fenced)
    assert block.content == text + "\n"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from('`a \n~\\{}"é'), max_size=80) | st.text(max_size=80))
def test_fence_opening_is_longer_than_any_backtick_run(text):
    fenced = fence(text, "json")
    opening = re.match(r"`+", fenced).group()
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    assert len(opening) >= 3
    assert len(opening) > longest
    assert fenced == f"{opening}json\n{text}\n{opening}"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("`ab \n~*#>-"), max_size=60))
def test_a_markdown_parser_sees_exactly_one_block_holding_the_text(text):
    blocks = fences_in(fence(text, "sh"))
    assert len(blocks) == 1
    assert blocks[0].info == "sh"
    assert blocks[0].content == text + "\n"
