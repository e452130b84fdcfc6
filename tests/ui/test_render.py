"""ChatView as a pure function: events in, gr.ChatMessage list out, no browser."""

import json
import re
import time

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
from meowgent.ui.render import RESULT_VIEW_CHARS, STREAM_TAIL_CHARS, ChatView, fence, trim_for_view

WRITE = ToolCall("call_w", "write_file", {"path": "notes.md", "content": "meow\n"})
SHELL = ToolCall("call_s", "run_shell", {"command": "ls -la"})


def view_of(*events):
    view = ChatView()
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


# ---- text and thinking ----


def test_a_user_message_is_shown_as_the_persons_message():
    (message,) = view_of(UserMessage("What's in notes.md?")).messages()
    assert message.role == "user"
    assert message.content == "What's in notes.md?"


def test_text_deltas_merge_into_one_assistant_message():
    view = view_of(UserMessage("hi"), TextDelta("Hel"), TextDelta("lo, "), TextDelta("human."))
    user, assistant = view.messages()
    assert user.content == "hi"
    assert assistant.role == "assistant"
    assert assistant.content == "Hello, human."
    assert not assistant.metadata


def test_text_after_a_tool_panel_starts_a_new_message():
    view = view_of(TextDelta("Let me look. "), *ready(SHELL), TextDelta("Done looking."))
    contents = [m.content for m in view.messages() if not m.metadata]
    assert contents == ["Let me look. ", "Done looking."]


def test_thinking_is_a_pending_panel_until_thinking_done_gives_its_duration():
    view = view_of(UserMessage("hi"), ThinkingDelta("The person "), ThinkingDelta("greets me."))
    thinking = view.messages()[1]
    assert thinking.content == "The person greets me."
    assert thinking.metadata["title"] == "Thinking"
    assert thinking.metadata["status"] == "pending"
    assert "duration" not in thinking.metadata

    view.apply(ThinkingDone(2.34))
    view.apply(TextDelta("Hello!"))
    _, thinking, answer = view.messages()
    assert thinking.metadata["status"] == "done"
    assert thinking.metadata["duration"] == 2.3
    assert answer.content == "Hello!"
    assert not answer.metadata


def test_thinking_after_a_finished_thought_opens_a_second_panel():
    view = view_of(ThinkingDelta("first"), ThinkingDone(1.0), TextDelta("x"), ThinkingDelta("second"))
    panels = [m for m in view.messages() if m.metadata.get("title") == "Thinking"]
    assert [p.content for p in panels] == ["first", "second"]
    assert [p.metadata["status"] for p in panels] == ["done", "pending"]


def test_done_closes_a_thinking_panel_that_never_got_thinking_done():
    view = view_of(ThinkingDelta("hmm"), Done("complete"))
    (thinking,) = view.messages()
    assert thinking.metadata["status"] == "done"
    assert thinking.metadata["duration"] == 0.0


# ---- tool panels while they stream ----


def test_the_title_is_readable_from_partial_json_before_the_call_is_finished():
    view = view_of(ToolCallStarted("c1"))
    assert panel(view, "c1").metadata["title"] == "🔧 Preparing a tool call"
    for piece in ['{"name": "wri', 'te_file", "argu', 'ments": {"path": "notes', '.md", "content": "# Shop']:
        view.apply(ToolCallProgress("c1", piece))
    message = panel(view, "c1")
    assert message.metadata["title"] == "🔧 write_file → notes.md"
    assert message.metadata["status"] == "pending"
    assert message.metadata["log"] == "writing…"
    # the partial JSON is shown as it is, inside a json block
    assert (
        message.content == '```json\n{"name": "write_file", "arguments": {"path": "notes.md", "content": "# Shop\n```'
    )
    (block,) = fences_in(message.content)
    assert block.info == "json"


def test_a_call_ollama_holds_back_counts_the_seconds_until_it_is_ready():
    view = view_of(ToolCallStarted("c1"), ToolCallWriting("c1", 2.4))
    assert view.apply(ToolCallWriting("c1", 3.5))  # an update a second, drawn at once
    message = panel(view, "c1")
    assert message.content == "The model is writing a tool call… 3 s"
    assert message.metadata["status"] == "pending"
    view.apply(ToolCallReady(ToolCall("c1", WRITE.name, WRITE.arguments), True))
    assert "writing a tool call" not in panel(view, "c1").content
    assert "notes.md" in panel(view, "c1").content


def test_a_half_written_key_argument_shows_what_is_there_so_far():
    view = view_of(
        ToolCallStarted("c1"), ToolCallProgress("c1", '{"name": "run_shell", "arguments": {"command": "ls -')
    )
    assert panel(view, "c1").metadata["title"] == "🔧 run_shell → ls -"


def test_a_long_key_argument_is_cut_in_the_title_and_newlines_flattened():
    command = "echo one\n" + "x" * 100
    view = view_of(*ready(ToolCall("c1", "run_shell", {"command": command})))
    title = panel(view, "c1").metadata["title"]
    assert title == "🔧 run_shell → echo one " + "x" * 51 + "…"


def test_a_huge_argument_streams_with_only_its_tail_and_a_size_counter():
    head = '{"name": "write_file", "arguments": {"path": "big.txt", "content": "'
    partial = head + "".join(f"{i:07d}\\n" for i in range(1_000_000 // 9))
    partial += "x" * (-len(partial) % 4)  # whole 4-character pieces
    view = view_of(ToolCallStarted("c1"))
    for i in range(0, len(partial), 4):
        view.apply(ToolCallProgress("c1", partial[i : i + 4]))
    message = panel(view, "c1")
    assert message.metadata["title"] == "🔧 write_file → big.txt"
    assert message.metadata["status"] == "pending"
    assert len(message.content) <= STREAM_TAIL_CHARS + 100
    assert f"{len(partial):,} characters so far" in message.content
    (block,) = fences_in(message.content)
    assert block.info == "json"
    assert block.content.endswith(partial[-STREAM_TAIL_CHARS + 10 :] + "\n")  # the newest text is what is shown
    assert head not in message.content


def _time_progress(count):
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", '{"name": "write_file", "arguments": {"content": "'))
    events = [ToolCallProgress("c1", "abcd")] * count
    start = time.perf_counter()
    for event in events:
        view.apply(event)
    return time.perf_counter() - start


def test_applying_progress_events_is_linear_not_quadratic():
    _time_progress(20_000)  # warm up
    small = min(_time_progress(50_000) for _ in range(3))
    large = min(_time_progress(200_000) for _ in range(3))
    assert large / small < 8, f"50k events took {small:.3f}s, 200k took {large:.3f}s"


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
    assert view.apply(ErrorEvent("The model server failed.")) is True
    assert view.apply(Notice("Old output was shortened.")) is True
    assert view.apply(Done("complete")) is True


# ---- tool panels: states ----


def test_a_ready_call_shows_its_arguments_readably():
    call = ToolCall("call_w", "write_file", {"path": "notes.md", "content": "line one\nline two", "append": False})
    message = panel(view_of(*ready(call, risky=False)), call.id)
    assert message.metadata["title"] == "🔧 write_file → notes.md"
    assert message.metadata["status"] == "pending"
    assert "**path**: `notes.md`" in message.content
    assert "**append**: `false`" in message.content
    (block,) = fences_in(message.content)
    assert block.content == "line one\nline two\n"  # multi-line text is a block, not an escaped JSON string


def test_a_waiting_call_says_so_and_stays_pending():
    view = view_of(UserMessage("save it"), *ready(WRITE), ApprovalNeeded((WRITE,)), Done("paused"))
    message = panel(view, WRITE.id)
    assert message.metadata["log"] == "waiting for your approval"
    assert message.metadata["status"] == "pending"
    assert message.metadata["title"] == "🔧 write_file → notes.md"
    assert view.waiting == (WRITE,)


def test_a_done_call_shows_its_result_trimmed_with_status_done_and_duration():
    output = "".join(f"line {i}\n" for i in range(2_000))
    assert len(output) > RESULT_VIEW_CHARS
    view = view_of(*ready(SHELL), ApprovalNeeded((SHELL,)), ToolResult(SHELL.id, SHELL.name, output, "done", 1.234))
    message = panel(view, SHELL.id)
    assert message.metadata["status"] == "done"
    assert message.metadata["duration"] == 1.23
    assert message.metadata["title"] == "🔧 run_shell → ls -la"
    assert "log" not in message.metadata
    assert trim_for_view(output) in message.content
    assert output not in message.content
    assert "line 0\n" in message.content
    assert "line 1999\n" in message.content
    assert f"{len(output) - RESULT_VIEW_CHARS:,} more characters not shown here" in message.content
    assert view.waiting == ()


def test_a_short_result_is_shown_whole():
    view = view_of(*ready(SHELL), ToolResult(SHELL.id, SHELL.name, "exit status 0\nnotes.md", "done", 0.02))
    blocks = fences_in(panel(view, SHELL.id).content)
    assert [b.content for b in blocks][-1] == "exit status 0\nnotes.md\n"


@pytest.mark.parametrize(
    ("status", "mark", "log", "has_duration"),
    [("error", "❌ ", "failed", True), ("rejected", "🚫 ", "rejected", False)],
)
def test_failed_and_rejected_calls_are_marked(status, mark, log, has_duration):
    view = view_of(*ready(SHELL), ToolResult(SHELL.id, SHELL.name, "The person rejected this call.", status, 0.5))
    message = panel(view, SHELL.id)
    assert message.metadata["title"] == mark + "🔧 run_shell → ls -la"
    assert message.metadata["log"] == log
    assert message.metadata["status"] == "done"
    assert ("duration" in message.metadata) is has_duration
    assert "The person rejected this call." in message.content


def test_an_invalid_call_shows_the_error_the_model_was_told():
    raw = '{"name": "read_file", "arguments": {"path": 42}}'
    error = "Error: 'path': Input should be a valid string"
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", raw), ToolCallInvalid("c1", raw, error))
    message = panel(view, "c1")
    assert message.metadata["title"] == "❌ 🔧 read_file"
    assert message.metadata["log"] == "not run: the call was malformed"
    assert message.metadata["status"] == "done"
    assert raw in message.content
    assert error in message.content


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
    assert call.metadata["title"] == "⏹ 🔧 write_file → a.md"
    assert call.metadata["log"] == "interrupted"
    assert call.metadata["status"] == "done"
    assert messages[-1].content == "⏹ Stopped. The answer above is incomplete."
    assert messages[-1].role == "assistant"


def test_stop_leaves_finished_and_waiting_calls_alone():
    view = view_of(*ready(SHELL), ToolResult(SHELL.id, SHELL.name, "ok", "done", 0.1), Done("stopped"))
    assert panel(view, SHELL.id).metadata["title"] == "🔧 run_shell → ls -la"
    view = view_of(*ready(WRITE), ApprovalNeeded((WRITE,)), Done("stopped"))
    assert panel(view, WRITE.id).metadata["log"] == "waiting for your approval"


def test_an_error_ending_interrupts_a_call_without_a_stopped_note():
    view = view_of(ToolCallStarted("c1"), ToolCallProgress("c1", '{"name": "run'), ErrorEvent("Ollama crashed."))
    view.apply(Done("error"))
    messages = view.messages()
    assert panel(view, "c1").metadata["log"] == "interrupted"
    assert [m.content for m in messages if not m.metadata] == ["⚠️ Ollama crashed."]


def test_an_error_is_a_plain_note():
    view = view_of(UserMessage("hi"), ErrorEvent("The model server is not running. Start it with `ollama serve`."))
    note = view.messages()[-1]
    assert note.role == "assistant"
    assert note.content == "⚠️ The model server is not running. Start it with `ollama serve`."
    assert not note.metadata


def test_a_notice_is_a_plain_note():
    note = view_of(Notice("Old tool output was shortened.")).messages()[-1]
    assert note.content == "ℹ️ Old tool output was shortened."


def test_a_complete_answer_adds_no_note():
    view = view_of(UserMessage("hi"), TextDelta("Hello."), Done("complete"))
    assert [m.content for m in view.messages()] == ["hi", "Hello."]


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
