"""The agent loop end to end: real ollama client, scripted server, real tools."""

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote

import pytest

from meowgent.agent.loop import Agent
from meowgent.config import Settings
from meowgent.context import TokenEstimator, budget_for
from meowgent.conversation import Conversation, Decision
from meowgent.events import (
    ApprovalNeeded,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolResult,
)
from meowgent.llm.client import OllamaClient
from meowgent.policy.rules import Policy, Rule
from meowgent.policy.scopes import Scope
from tests.scripted_ollama import (
    Drop,
    ErrorLine,
    NativeToolCalls,
    Stall,
    Text,
    Thinking,
    Turn,
    reply,
    tool_call_text,
)
from tests.words import said


@pytest.fixture
def workspace(tmp_path):
    (tmp_path / "notes.md").write_text("first line\nsecond line\n")
    return tmp_path


def make_agent(server, workspace, **overrides):
    settings = Settings(workspace=workspace, **overrides)
    return Agent(OllamaClient(server.url, read_timeout=overrides.get("read_timeout", 10)), settings)


def answer(agent, conversation, text, cancel=None):
    return list(agent.run(conversation, text, cancel or threading.Event()))


def prose(events):
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_a_plain_answer_streams_and_lands_in_the_transcript(ollama_server, workspace):
    ollama_server.script(reply("Hello there, human.", chunk_size=3))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "hi")
    assert prose(events) == "Hello there, human."
    assert events[-1].reason == "complete"
    assert conversation.messages == [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "Hello there, human."},
    ]
    request = ollama_server.chat_requests[0]
    system = request["messages"][0]
    assert system["role"] == "system"
    assert str(workspace) in system["content"]
    assert all(name in system["content"] for name in ("read_file", "write_file", "run_shell", "web_fetch"))
    assert request["options"]["num_ctx"] == 16384  # the cap, below qwen3's 40960


def test_safe_calls_run_at_once_and_results_go_back_to_the_model(ollama_server, workspace):
    ollama_server.script(
        Turn(Text("Looking. " + tool_call_text("list_files", {"path": "."})), chunk_size=5),
        Turn(Text(tool_call_text("read_file", {"path": "notes.md"}))),
        reply("The file has two lines."),
    )
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "what is in notes.md?")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.name for r in results] == ["list_files", "read_file"]
    assert all(r.status == "done" for r in results)
    assert "notes.md" in results[0].output
    assert "second line" in results[1].output
    assert prose(events) == "Looking. The file has two lines."
    assert any(isinstance(e, ToolCallProgress) for e in events)
    last_request = ollama_server.chat_requests[-1]["messages"]
    tool_messages = [m for m in last_request if m["role"] == "tool"]
    assert [m["tool_name"] for m in tool_messages] == ["list_files", "read_file"]
    assert "second line" in tool_messages[1]["content"]


def test_models_without_tool_support_get_results_as_user_messages(ollama_server, workspace):
    ollama_server.script(Text(tool_call_text("read_file", {"path": "notes.md"})), reply("ok"))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "llama-plain")
    answer(agent, conversation, "read it")
    sent = ollama_server.chat_requests[-1]["messages"]
    assert not any(m["role"] == "tool" for m in sent)
    assert sent[-1]["role"] == "user"
    assert sent[-1]["content"].startswith('<tool_response name="read_file">')
    assert "think" not in ollama_server.chat_requests[-1]  # llama-plain cannot think


def test_native_tool_calls_work_like_text_ones(ollama_server, workspace):
    ollama_server.script(
        Turn(
            Thinking("I should read it."), NativeToolCalls([{"name": "read_file", "arguments": {"path": "notes.md"}}])
        ),
        reply("Read it."),
    )
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "read notes")
    assert [e.status for e in events if isinstance(e, ToolResult)] == ["done"]
    assert any(isinstance(e, ThinkingDelta) for e in events)
    assert any(isinstance(e, ThinkingDone) for e in events)
    assistant = conversation.messages[1]
    assert assistant["tool_calls"] == [{"function": {"name": "read_file", "arguments": {"path": "notes.md"}}}]
    assert ollama_server.chat_requests[0]["think"] is True


def test_risky_call_pauses_and_runs_only_after_approval(ollama_server, workspace):
    ollama_server.script(
        Text(tool_call_text("write_file", {"path": "poem.md", "content": "meow\n"})),
        reply("Written."),
    )
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "write a poem")
    assert isinstance(events[-2], ApprovalNeeded)
    assert events[-1].reason == "paused"
    assert not (workspace / "poem.md").exists()
    (call,) = events[-2].calls
    assert agent.waiting(conversation) == (call,)
    resumed = list(agent.resume(conversation, {call.id: Decision(True)}, threading.Event()))
    assert (workspace / "poem.md").read_text() == "meow\n"
    assert [e.status for e in resumed if isinstance(e, ToolResult)] == ["done"]
    assert prose(resumed) == "Written."
    assert agent.waiting(conversation) == ()


def test_rejection_reason_reaches_the_model(ollama_server, workspace):
    ollama_server.script(Text(tool_call_text("run_shell", {"command": "rm -rf *"})), reply("Understood."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    (call,) = next(e for e in answer(agent, conversation, "clean up") if isinstance(e, ApprovalNeeded)).calls
    events = list(agent.resume(conversation, {call.id: Decision(False, "too dangerous")}, threading.Event()))
    assert (workspace / "notes.md").exists()
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert (result.not_run, result.reason) == ("person", {"said": "too dangerous"})  # for the page, in its language
    tool_message = [m for m in ollama_server.chat_requests[-1]["messages"] if m["role"] == "tool"][-1]
    assert "rejected" in tool_message["content"]
    assert "too dangerous" in tool_message["content"]


def test_a_decision_for_another_call_does_not_run_the_waiting_one(ollama_server, workspace):
    ollama_server.script(Text(tool_call_text("write_file", {"path": "x.md", "content": "x"})))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    answer(agent, conversation, "write")
    events = list(agent.resume(conversation, {"call_forged": Decision(True)}, threading.Event()))
    assert isinstance(events[0], ApprovalNeeded)
    assert events[-1].reason == "paused"
    assert not (workspace / "x.md").exists()


def test_a_new_message_rejects_waiting_calls_and_tells_the_model(ollama_server, workspace):
    ollama_server.script(Text(tool_call_text("run_shell", {"command": "ls"})), reply("Sure, something else."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    answer(agent, conversation, "list")
    events = answer(agent, conversation, "never mind, tell a joke")
    assert [(e.status, e.not_run) for e in events if isinstance(e, ToolResult)] == [("rejected", "new_message")]
    roles = [m["role"] for m in conversation.messages]
    assert roles == ["user", "assistant", "tool", "user", "assistant"]
    assert "new message" in conversation.messages[2]["content"]


@pytest.mark.parametrize(
    ("call_text", "phrase"),
    [
        ('<tool_call>{"name": "read_file", "arguments": {"path": </tool_call>', "not valid JSON"),
        (tool_call_text("delete_everything", {}), "no tool named 'delete_everything'"),
        (tool_call_text("read_file", {"path": 42}), "'path': Input should be a valid string"),
        (tool_call_text("write_file", {"path": "a"}), "missing required argument 'content'"),
        ("<tool_call>" + json.dumps({"name": "read_file", "arguments": {"path": "notes.md"}}), "not finished"),
    ],
)
def test_bad_calls_become_errors_the_model_can_act_on(ollama_server, workspace, call_text, phrase):
    ollama_server.script(Text(call_text), reply("Let me fix that."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "go")
    invalid = [e for e in events if isinstance(e, ToolCallInvalid)]
    assert len(invalid) == 1
    assert phrase in invalid[0].error
    assert not any(isinstance(e, ToolCallReady) for e in events)
    assert events[-1].reason == "complete"
    fed_back = [m for m in ollama_server.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert phrase in fed_back[0]["content"]


@pytest.mark.parametrize(
    ("failure", "phrase", "kind"),
    [
        (ErrorLine("model runner crashed"), "model runner crashed", "broken"),
        (Drop(), "", "broken"),
    ],
)
def test_a_broken_stream_keeps_the_partial_answer_and_the_next_message_works(
    ollama_server, workspace, failure, phrase, kind
):
    ollama_server.script(Turn(Text("The first half"), failure), reply("Fine now."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    events = answer(agent, conversation, "go")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert error.kind == kind
    assert phrase in said(error)
    assert events[-1].reason == "error"
    assert conversation.messages[-1]["content"].startswith("The first half")
    assert "cut off" in conversation.messages[-1]["content"]
    assert prose(answer(agent, conversation, "again")) == "Fine now."


def test_a_stall_past_the_read_timeout_is_an_error(ollama_server, workspace):
    ollama_server.script(Turn(Text("Thinking about"), Stall(3), Text(" it")))
    agent = make_agent(ollama_server, workspace, read_timeout=0.5)
    events = answer(agent, Conversation("c", "qwen3"), "go")
    assert next(e for e in events if isinstance(e, ErrorEvent)).kind == "stalled"


def test_unknown_model_says_how_to_get_it(ollama_server, workspace):
    events = answer(make_agent(ollama_server, workspace), Conversation("c", "mistral"), "hi")
    error = next(e for e in events if isinstance(e, ErrorEvent))
    assert "ollama pull mistral" in said(error)
    assert events[-1].reason == "error"


def test_cancel_closes_the_stream_and_keeps_the_partial_answer(ollama_server, workspace):
    ollama_server.script(reply("word " * 400, chunk_size=5, delay=0.01))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    cancel = threading.Event()
    events = []
    for event in agent.run(conversation, "talk", cancel):
        events.append(event)
        if len(events) == 20:
            cancel.set()
    assert events[-1].reason == "stopped"
    assert ollama_server.wait_for_disconnects(1)
    assert "pressed Stop" in conversation.messages[-1]["content"]
    assert len(prose(events)) < len("word " * 400)


def test_max_turns_is_enforced(ollama_server, workspace):
    # Another call each time: the same call again would end the answer sooner (agent/repeats.py).
    ollama_server.script(*[Text(tool_call_text("list_files", {"pattern": f"*{n}"})) for n in range(3)])
    agent = make_agent(ollama_server, workspace, max_turns=3)
    events = answer(agent, Conversation("c", "qwen3"), "loop forever")
    assert events[-1].reason == "max_turns"
    assert "3 model replies" in said(next(e for e in events if isinstance(e, ErrorEvent)))
    assert len(ollama_server.chat_requests) == 3


def test_retry_answers_the_last_message_again(ollama_server, workspace):
    ollama_server.script(reply("First try."), reply("Second try."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    answer(agent, conversation, "hello")
    events = list(agent.retry(conversation, threading.Event()))
    assert prose(events) == "Second try."
    assert [m["content"] for m in conversation.messages] == ["hello", "Second try."]


def test_stop_ends_the_answer_at_once_even_while_the_model_is_silent(ollama_server, workspace):
    ollama_server.script(Turn(Text("Loading"), Stall(8), Text(" never shown")))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    cancel, events = threading.Event(), []
    for event in agent.run(conversation, "go", cancel):
        events.append(event)
        if isinstance(event, TextDelta) and prose(events) == "Loading":  # Stop once the model has gone silent
            threading.Timer(0.3, cancel.set).start()
            stopped = time.monotonic() + 0.3
    assert time.monotonic() - stopped < 2  # the stall lasts 8 s
    assert events[-1].reason == "stopped"
    assert prose(events) == "Loading"
    assert conversation.messages[-1]["content"].startswith("Loading")


def test_rules_decide_before_the_person_is_asked(ollama_server, workspace):
    rules = [
        Rule("run_shell", "deny", command="rm *"),
        Rule("run_shell", "allow", command="echo *"),
    ]
    ollama_server.script(
        Text(
            tool_call_text("run_shell", {"command": "rm notes.md"})
            + tool_call_text("run_shell", {"command": "echo allowed-by-rule"})
        ),
        reply("Done."),
    )
    agent = Agent(OllamaClient(ollama_server.url), Settings(workspace=workspace), policy=Policy(rules, workspace))
    events = answer(agent, Conversation("c", "qwen3"), "clean and echo")
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.status for r in results] == ["rejected", "done"]
    assert "rules do not allow" in results[0].output
    assert results[0].not_run == "rules"
    assert results[0].reason == {  # the verdict's values, which the page words in the person's language
        "kind": "rule_matches",
        "rule": 'deny run_shell command "rm *"',
        "text": "rm notes.md",
        "path": "",
        "problems": [],
        "more": 0,
    }
    assert (workspace / "notes.md").exists()
    assert "allowed-by-rule" in results[1].output
    assert not any(isinstance(e, ApprovalNeeded) for e in events)


# Issue 13: edits that hide the `rm` from a plain reading of the line.
@pytest.mark.parametrize(
    "command",
    ["rm notes.md", "bash -c 'rm notes.md'", "eval 'rm notes.md'", "$'\\x72m' notes.md", "X=rm; $X notes.md"],
)
def test_an_edit_that_the_rules_deny_does_not_run(ollama_server, workspace, command):
    ollama_server.script(Text(tool_call_text("run_shell", {"command": "ls"})), reply("Ok."))
    policy = Policy([Rule("run_shell", "deny", command="rm *")], workspace)
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    agent.policy = policy
    (call,) = next(e for e in answer(agent, conversation, "list") if isinstance(e, ApprovalNeeded)).calls
    edited = Decision(True, arguments={"command": command})
    results = [e for e in agent.resume(conversation, {call.id: edited}, threading.Event()) if isinstance(e, ToolResult)]
    assert (results[0].status, results[0].not_run) == ("rejected", "changed_call")
    assert (workspace / "notes.md").exists()


def test_a_chat_scope_allows_the_same_command_again_without_asking(ollama_server, workspace):
    command = {"command": "echo again >> log.txt"}
    ollama_server.script(Text(tool_call_text("run_shell", command)), reply("Once."))
    ollama_server.script(Text(tool_call_text("run_shell", command)), reply("Twice."))
    agent, conversation = make_agent(ollama_server, workspace), Conversation("c", "qwen3")
    (call,) = next(e for e in answer(agent, conversation, "log it") if isinstance(e, ApprovalNeeded)).calls
    conversation.scopes.append(Scope("run_shell", command=command["command"]))
    list(agent.resume(conversation, {call.id: Decision(True)}, threading.Event()))
    events = answer(agent, conversation, "log it again")
    assert not any(isinstance(e, ApprovalNeeded) for e in events)
    assert (workspace / "log.txt").read_text() == "again\nagain\n"


class RedirectingSite(ThreadingHTTPServer):
    """A web server on 127.0.0.1, also reached as `localhost`: `/go?URL` redirects there, `/page` is a page."""

    def __init__(self) -> None:
        self.paths: list[str] = []
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                site.paths.append(self.path)
                path, _, query = self.path.partition("?")
                if path == "/go":
                    self.send_response(302)
                    self.send_header("Location", unquote(query))
                    body = b""
                else:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/plain")
                    body = b"Purr from the page."
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        super().__init__(("127.0.0.1", 0), Handler)

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.server_address[1]}{path}"


@pytest.fixture
def site() -> Iterator[RedirectingSite]:
    server = RedirectingSite()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


ALLOW_THE_FIRST_HOST = Rule("web_fetch", "allow", host="127.0.0.1")


@pytest.mark.parametrize(
    ("hop_host", "rules", "scopes", "follows"),
    [
        ("127.0.0.1", [], [Scope("web_fetch", host="127.0.0.1")], True),  # the same host: approved with the call
        ("localhost", [ALLOW_THE_FIRST_HOST], [], False),  # another host nothing allows: it would ask
        ("localhost", [ALLOW_THE_FIRST_HOST, Rule("web_fetch", "allow", host="localhost")], [], True),
        ("localhost", [ALLOW_THE_FIRST_HOST], [Scope("web_fetch", host="localhost")], True),
        ("localhost", [ALLOW_THE_FIRST_HOST, Rule("web_fetch", "deny", host="local*")], [], False),
        ("localhost", [Rule("web_fetch", "deny", host="local*")], [Scope("web_fetch", host="*")], False),
    ],
)
def test_a_redirect_to_another_host_is_judged_as_a_new_fetch_of_it(
    ollama_server, workspace, site, hop_host, rules, scopes, follows
):
    hop = site.url(hop_host, "/page")
    ollama_server.script(Text(tool_call_text("web_fetch", {"url": site.url("127.0.0.1", f"/go?{hop}")})), reply("Ok."))
    agent = make_agent(ollama_server, workspace, allow_private_fetch=True)
    agent.policy = Policy(rules, workspace)
    conversation = Conversation("c", "qwen3", scopes=list(scopes))
    events = answer(agent, conversation, "read it")
    (result,) = [e for e in events if isinstance(e, ToolResult)]
    assert not any(isinstance(e, ApprovalNeeded) for e in events)  # the call itself was allowed
    if follows:
        assert "Purr from the page." in result.output
        assert site.paths[-1] == "/page"
        return
    assert site.paths == [f"/go?{hop}"]  # the page on the other host was never asked for
    denied = any(rule.action == "deny" for rule in rules)
    assert result.output == (
        f"Error: the page redirected to {hop}, which the person's rules do not allow "
        '(the rule deny web_fetch host "local*" matches this call); do not fetch it.'
        if denied
        else f"Error: the page redirected to {hop}, which needs the person's approval; "
        "call web_fetch with that URL if you still need it."
    )


def test_num_ctx_is_the_smaller_of_the_models_window_and_the_cap(ollama_server, workspace):
    ollama_server.script(reply("small"), reply("big"))
    answer(make_agent(ollama_server, workspace), Conversation("c", "llama-plain"), "hi")  # 8,192-token model
    answer(make_agent(ollama_server, workspace, num_ctx=65536), Conversation("d", "qwen3"), "hi")  # 40,960
    assert [r["options"]["num_ctx"] for r in ollama_server.chat_requests] == [8192, 40960]


def long_history(turns):
    messages = []
    for i in range(turns):
        messages += [
            {"role": "user", "content": f"question {i}"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": f"f{i}.py"}}}],
            },
            {"role": "tool", "content": f"line {i}: some text of the file\n" * 400, "tool_name": "read_file"},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    return messages


def test_a_long_history_is_cut_to_fit_and_the_person_is_told_once(ollama_server, workspace):
    ollama_server.script(reply("ok"))
    agent = make_agent(ollama_server, workspace, num_ctx=8192)
    conversation = Conversation("c", "qwen3", messages=long_history(12))
    full = list(conversation.messages)
    events = answer(agent, conversation, "the latest question")
    notices = [e for e in events if isinstance(e, Notice)]
    assert len(notices) == 1
    assert "8k-token context" in said(notices[0])
    sent = ollama_server.chat_requests[-1]["messages"]
    assert sent[0]["role"] == "system"
    assert "read_file" in sent[0]["content"]
    assert sent[-1] == {"role": "user", "content": "the latest question"}
    assert TokenEstimator().estimate(sent) <= budget_for(8192)
    assert len(sent) < len(full)
    assert conversation.messages[: len(full)] == full  # the transcript keeps everything
    assert events[-1].reason == "complete"


def test_a_message_too_long_for_the_context_is_an_error_not_a_truncation(ollama_server, workspace):
    agent = make_agent(ollama_server, workspace, num_ctx=2048)
    events = answer(agent, Conversation("c", "qwen3"), "please summarise: " + "word " * 6000)
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert [e.kind for e in errors] == ["context_too_small"]
    assert "raise --num-ctx" in said(errors[0])
    assert events[-1].reason == "error"
    assert ollama_server.chat_requests == []
