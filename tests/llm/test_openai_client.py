"""OpenAIClient against ScriptedOpenAI over HTTP, through the real `openai` SDK: vLLM's and llama.cpp's wire."""

from __future__ import annotations

import logging
import socket
import threading

import pytest

from meowgent.llm.errors import ModelError
from meowgent.llm.openai_client import OpenAIClient, openai_messages, retry_delay, shown_url
from meowgent.llm.types import ChatRequest, Holding, NativeToolCall, ToolSpec
from tests.scripted_openai import (
    Calls,
    Content,
    Cut,
    ErrorEvent,
    ErrorField,
    Reasoning,
    ScriptedOpenAI,
    Stall,
    Status,
    Turn,
    count_prompt,
)

MODEL = "Qwen/Qwen3-8B"
KEY = "sk-secret-0123456789"
TOOLS = (ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}}),)


def ask(messages=({"role": "user", "content": "hi"},), *, tools=TOOLS, model=MODEL) -> ChatRequest:
    return ChatRequest(model, "You are a cat.", tuple(messages), tools, True, frozenset({"tools"}), 4096, Holding.SHOWN)


def read(client, request=None, cancel=None):
    return list(client.stream_chat(request or ask(), cancel=cancel))


@pytest.fixture(params=["vllm", "llamacpp"])
def server(request):
    with ScriptedOpenAI(dialect=request.param) as scripted:
        yield scripted


def test_a_reply_with_thinking_text_and_parallel_calls_on_index_0(server):
    server.script(
        Turn(
            Reasoning("Let me look."),
            Content("Reading both."),
            Calls(("read_file", {"path": "a"}), ("read_file", {"path": "b"}), same_index=True),
        )
    )
    chunks = read(OpenAIClient(server.url), cancel=threading.Event())
    assert "".join(c.thinking for c in chunks) == "Let me look."
    assert "".join(c.content for c in chunks) == "Reading both."
    assert "".join(c.token for c in chunks) == (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
        '<tool_call>{"name": "read_file", "arguments": {"path": "b"}}</tool_call>'
    )
    final = chunks[-1]
    assert final.done
    assert final.done_reason == "tool_calls"
    assert final.tool_calls == (NativeToolCall("read_file", {"path": "a"}), NativeToolCall("read_file", {"path": "b"}))
    assert final.prompt_tokens == count_prompt(server.chat_requests[0])  # the tools' schemas too
    assert final.output_tokens
    assert final.output_tokens > 0
    body = server.chat_requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["tools"][0]["function"]["name"] == "read_file"
    assert body["messages"][0] == {"role": "system", "content": "You are a cat."}
    assert body["chat_template_kwargs"] == {"enable_thinking": True}


def test_whole_arguments_in_one_delta(server):
    server.script(Turn(Calls(("read_file", {"path": "x" * 500}), whole=True)))
    assert read(OpenAIClient(server.url))[-1].tool_calls == (NativeToolCall("read_file", {"path": "x" * 500}),)


def test_models_and_their_context_window_from_the_server(server):
    (info,) = OpenAIClient(server.url).list_models()
    assert (info.name, info.context_length) == (MODEL, 32768)  # vLLM's max_model_len, llama.cpp's /props n_ctx
    profile = OpenAIClient(server.url).profile(MODEL)
    assert profile.native_tools
    assert profile.holding is Holding.SHOWN


def test_llama_cpp_says_the_window_it_runs_with_and_not_the_one_the_model_was_trained_on():
    with ScriptedOpenAI(dialect="llamacpp", models={MODEL: 4096}, n_ctx_train=32768) as server:
        info = OpenAIClient(server.url).show(MODEL)
    assert (info.context_length, info.window_from) == (4096, "server")
    assert info.window(num_ctx=16384) == 4096  # the server's window, whatever --num-ctx says
    assert "tools" in info.capabilities


def test_a_llama_cpp_template_without_tools_gets_them_in_the_prompt():
    with ScriptedOpenAI(dialect="llamacpp", supports_tools=False) as server:
        client = OpenAIClient(server.url)
        info, profile = client.show(MODEL), client.profile(MODEL)
    assert "tools" not in info.capabilities
    assert (profile.native_tools, profile.holding) == (False, Holding.NONE)


def test_a_server_that_says_no_window_has_a_default():
    with ScriptedOpenAI(dialect="llamacpp") as server:
        server.models = {MODEL: 0}  # /props without n_ctx, as a server that is not llama.cpp's
        info = OpenAIClient(server.url).show(MODEL)
    assert (info.context_length, info.window_from) == (None, "default")
    assert info.window(num_ctx=16384) == 16384


def test_results_go_back_with_the_ids_of_their_calls():
    transcript = [
        {"role": "user", "content": "read a and b"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"function": {"name": "read_file", "arguments": {"path": "a"}}},
                {"id": "kept", "function": {"name": "read_file", "arguments": {"path": "b"}}},
            ],
        },
        {"role": "tool", "content": "A", "tool_name": "read_file"},
        {"role": "tool", "content": "B", "tool_name": "read_file"},
        {"role": "tool", "content": "orphan", "tool_name": "read_file"},
    ]
    wire = openai_messages(transcript)
    ids = [call["id"] for call in wire[1]["tool_calls"]]
    assert ids[1] == "kept"
    assert ids[0].startswith("call_")
    assert [m.get("tool_call_id") for m in wire[2:4]] == ids
    assert wire[4]["role"] == "user"
    assert "orphan" in wire[4]["content"]
    assert openai_messages(transcript) == wire  # stable: the server's prompt cache sees the same text
    assert wire[1]["tool_calls"][0]["function"]["arguments"] == '{"path": "a"}'


def test_stop_closes_the_stream_so_the_server_sees_the_disconnect(server):
    server.script(Turn(Content("meow " * 400, token_size=2), delay=0.01))
    cancel = threading.Event()
    stream = OpenAIClient(server.url).stream_chat(ask(), cancel=cancel)
    next(stream)
    cancel.set()
    rest = list(stream)  # ends at Stop, long before the reply's 400 tokens
    assert len(rest) < 100
    assert server.wait_for_disconnects(1)


def test_stop_during_a_silence_hangs_up_at_once(server):
    # The reader is blocked on the silent server; the server must still see the connection close now, not at the
    # read timeout, or it goes on generating for no one.
    server.script(Turn(Content("Loading", token_size=len("Loading")), Stall(60), Content(" late")))  # one chunk
    cancel = threading.Event()
    stream = OpenAIClient(server.url).stream_chat(ask(), cancel=cancel)
    assert next(stream).content == "Loading"
    cancel.set()
    assert list(stream) == []
    assert server.wait_for_disconnects(1, timeout=3)


def test_busy_is_tried_again_after_retry_after(server):
    server.script(Turn(Status(429, retry_after="0")), Turn(Status(503)), "Hello.")
    chunks = read(OpenAIClient(server.url, retry_cap=0.01))
    assert "".join(c.content for c in chunks) == "Hello."
    assert len(server.chat_requests) == 3


def test_still_busy_after_every_try_says_so(server):
    server.script(*(Turn(Status(429, retry_after="0")) for _ in range(3)))
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url, retry_cap=0.01))
    assert caught.value.kind == "busy"
    assert caught.value.values["tries"] == 3
    assert "127.0.0.1" in caught.value.message


def test_a_wait_between_tries_ends_at_stop(server):
    server.script(Turn(Status(429, retry_after="60")))
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    assert read(OpenAIClient(server.url, retry_cap=60), cancel=cancel) == []
    assert len(server.chat_requests) == 1


def test_no_such_model(server):
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url), ask(model="nope"))
    assert caught.value.kind == "not_found"
    assert caught.value.values["model"] == "nope"


def test_an_error_event_mid_stream(server):
    server.script(Turn(Content("Hal"), ErrorEvent("CUDA out of memory")))
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url))
    assert caught.value.kind == "broken"
    assert "CUDA out of memory" in caught.value.message


def test_llama_cpps_error_line_ends_the_answer_as_broken_not_as_a_short_answer(server):
    """The `error:` field is skipped by SSE readers and no `[DONE]` follows: the stream just ends, unfinished."""
    server.script(Turn(Content("Hal"), ErrorField("the request exceeds the available context size")))
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url))
    assert caught.value.kind == "broken"


def test_a_connection_cut_mid_stream(server):
    server.script(Turn(Content("Hal"), Cut()))
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url), cancel=threading.Event())
    assert caught.value.kind == "broken"


def test_a_stall_is_the_read_timeout(server):
    server.script(Turn(Content("Hal"), Stall(5)))
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url, read_timeout=0.5), cancel=threading.Event())
    assert caught.value.kind == "stalled"
    assert caught.value.values == {"host": server.url, "seconds": 0.5, "case": "openai"}


def test_connection_refused_names_the_host():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ModelError) as caught:
        read(OpenAIClient(f"http://127.0.0.1:{port}/v1"))
    assert caught.value.kind == "unreachable"
    assert caught.value.values["host"] == f"http://127.0.0.1:{port}/v1"
    health = OpenAIClient(f"http://127.0.0.1:{port}/v1").health()
    assert not health.ok
    assert health.kind == "unreachable"


def test_a_server_without_a_tool_parser_gets_the_text_protocol_from_then_on():
    with ScriptedOpenAI() as server:
        client = OpenAIClient(server.url)
        server.script(Turn(Status(400, '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser')))
        with pytest.raises(ModelError) as caught:
            read(client)
        assert caught.value.kind == "no_tool_parser"
        assert client.profile(MODEL).native_tools is False


def kinds_of_failure(server, client):
    """Every kind of failure this client reports, each raised once."""
    server.script(
        Turn(Status(429, retry_after="0")),
        Turn(Content("a"), ErrorEvent(f"bad request from key {KEY}")),
        Turn(Content("a"), Cut()),
        Turn(Content("a"), Stall(5)),
    )
    yield lambda: read(client, ask(model="nope"))
    yield lambda: read(client)
    yield lambda: read(client, cancel=threading.Event())
    yield lambda: read(client, cancel=threading.Event())
    yield lambda: read(client, cancel=threading.Event())
    yield lambda: read(OpenAIClient(server.url, api_key="sk-wrong-" + KEY))
    yield lambda: list(client.pull(MODEL))


def test_the_key_never_shows_in_any_error_value_repr_or_log(caplog):
    caplog.set_level(logging.DEBUG)
    with ScriptedOpenAI(api_key=KEY) as server:
        client = OpenAIClient(server.url, api_key=KEY, read_timeout=0.5, tries=1)
        errors = []
        for attempt in kinds_of_failure(server, client):
            with pytest.raises(ModelError) as caught:
                attempt()
            errors.append(caught.value)
        assert server.headers[0]["authorization"] == f"Bearer {KEY}"  # it is sent, only never shown
    assert {e.kind for e in errors} >= {"not_found", "busy", "broken", "stalled", "wrong_key", "no_download"}
    for error in errors:
        for text in (error.message, str(error), repr(error), repr(error.values), repr(client)):
            assert KEY not in text
    assert KEY not in caplog.text


def test_a_wrong_key_is_a_sentence_without_the_key():
    with ScriptedOpenAI(api_key=KEY) as server, pytest.raises(ModelError) as caught:
        read(OpenAIClient(server.url, api_key="sk-mine-999"))
    assert caught.value.kind == "wrong_key"
    assert caught.value.values["status"] == 401
    assert "sk-mine-999" not in caught.value.message + repr(caught.value.values)


def test_retry_delay_honours_retry_after_up_to_a_cap():
    assert retry_delay("2", attempt=1, cap=10) == 2
    assert retry_delay("120", attempt=1, cap=10) == 10
    assert retry_delay(None, attempt=1, cap=10) == 0.5
    assert retry_delay(None, attempt=3, cap=10) == 2
    assert retry_delay("Wed, 21 Oct 2015 07:28:00 GMT", attempt=1, cap=10) == 0  # a date in the past
    assert retry_delay("soon", attempt=2, cap=10) == 1


def test_the_shown_address_has_no_login():
    assert shown_url("http://user:pw@gpu-box:8000/v1/?key=x") == "http://gpu-box:8000/v1"


def test_native_tools_on_an_openai_server_come_with_the_call_format_in_the_prompt(server):
    profile = OpenAIClient(server.url).profile(MODEL)
    assert (profile.native_tools, profile.told_format) == (True, True)
