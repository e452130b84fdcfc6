"""meowgent.llm.client against ScriptedOllama over HTTP: requests as Ollama reads them, replies as it sends them."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from meowgent.llm.client import OllamaClient, profile_of, supports_logprobs
from meowgent.llm.errors import (
    ErrorLine,
    ModelError,
    ModelNotFound,
    ServerUnreachable,
    StreamBroken,
    StreamStalled,
    UnsupportedFeature,
)
from meowgent.llm.types import ChatChunk, ChatRequest, Holding, ModelInfo, NativeToolCall, ToolSpec
from tests.scripted_ollama import (
    DEFAULT_MODELS,
    PARSER_MODELS,
    Drop,
    Generated,
    NativeToolCalls,
    ScriptedOllama,
    Stall,
    Status,
    Text,
    Thinking,
    Turn,
    generated,
    reply,
    tokens_of,
    tool_call_text,
)
from tests.scripted_ollama import ErrorLine as ErrorLineStep

HI = ({"role": "user", "content": "hi"},)
SYSTEM = "You are a cat."


def ask(
    model: str = "qwen3",
    *,
    capabilities: frozenset[str] = frozenset(),
    think: bool = False,
    tools: tuple[ToolSpec, ...] | None = None,
    holding: Holding = Holding.NONE,
    context: int = 4096,
) -> ChatRequest:
    """A request for a reply to HI; `capabilities` are what the request says the model can do."""
    return ChatRequest(model, SYSTEM, HI, tools, think, capabilities, context, holding)


@pytest.fixture
def client(ollama_server: ScriptedOllama) -> Iterator[OllamaClient]:
    llm = OllamaClient(ollama_server.url)
    yield llm
    llm.close()


def chat(llm: OllamaClient, cancel: threading.Event | None = None, **kwargs: object) -> list[ChatChunk]:
    return list(llm.stream_chat(ask(**kwargs), cancel=cancel))  # type: ignore[arg-type]


def chat_until_error(llm: OllamaClient, **kwargs: object) -> tuple[str, ModelError]:
    """The content streamed before the error, and the error."""
    content: list[str] = []
    stream = llm.stream_chat(ask(**kwargs))  # type: ignore[arg-type]
    with pytest.raises(ModelError) as caught:
        content.extend(chunk.content for chunk in stream)
    return "".join(content), caught.value


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_text_streams_across_chunks_and_ends_with_token_counts(ollama_server, client):
    ollama_server.script(reply("Hello world, how are you?", chunk_size=4))

    chunks = chat(client)

    assert "".join(c.content for c in chunks) == "Hello world, how are you?"
    assert [c.content for c in chunks[:2]] == ["Hell", "o wo"]
    *partial, final = chunks
    assert not any(c.done for c in partial)
    assert all(c.prompt_tokens is None and c.output_tokens is None for c in partial)
    # The scripted server counts a quarter of the prompt's characters: the system prompt's 14 and "hi".
    assert final == ChatChunk(done=True, done_reason="stop", prompt_tokens=4, output_tokens=7)


def test_scripted_token_counts_and_done_reason(ollama_server, client):
    ollama_server.script(Turn(Text("cut"), done_reason="length", prompt_tokens=1234, output_tokens=56))

    final = chat(client)[-1]

    assert (final.done_reason, final.prompt_tokens, final.output_tokens) == ("length", 1234, 56)


def test_request_body_has_the_context_window_and_leaves_out_think_for_a_model_that_cannot(ollama_server, client):
    chat(client, think=True, context=8192)

    assert ollama_server.chat_requests == [
        {
            "model": "qwen3",
            "messages": [{"role": "system", "content": SYSTEM}, *HI],
            "tools": [],
            "stream": True,
            "options": {"num_ctx": 8192},
        }
    ]


@pytest.mark.parametrize("think", [True, False])
def test_think_is_sent_when_chosen(ollama_server, client, think):
    chat(client, think=think, capabilities=frozenset({"thinking"}))

    assert ollama_server.chat_requests[0]["think"] is think


def test_tools_are_sent_in_ollamas_shape(ollama_server, client):
    parameters = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}
    function = {"name": "read_file", "description": "Read a file.", "parameters": parameters}

    chat(client, tools=(ToolSpec("read_file", "Read a file.", parameters),))

    assert ollama_server.chat_requests[0]["tools"] == [{"type": "function", "function": function}]


def test_thinking_arrives_apart_from_content(ollama_server, client):
    ollama_server.script(Turn(Thinking("Which file?"), Text("Here it is."), chunk_size=5))

    chunks = chat(client, think=True, capabilities=frozenset({"thinking"}))

    assert "".join(c.thinking for c in chunks) == "Which file?"
    assert "".join(c.content for c in chunks) == "Here it is."
    assert (chunks[0].thinking, chunks[0].content) == ("Which", "")


def test_native_tool_calls_become_named_calls_with_dict_arguments(ollama_server, client):
    calls = [{"name": "read_file", "arguments": {"path": "a.txt"}}, {"name": "list_files", "arguments": {}}]
    ollama_server.script(Turn(Text("Let me look."), NativeToolCalls(calls)))

    chunks = chat(client)

    assert [c.tool_calls for c in chunks if c.tool_calls] == [
        (NativeToolCall("read_file", {"path": "a.txt"}), NativeToolCall("list_files", {}))
    ]


def test_unknown_model_says_how_to_download_it(ollama_server, client):
    ollama_server.script(reply("kept for the next request"))

    _, error = chat_until_error(client, model="mistral")

    assert isinstance(error, ModelNotFound)
    assert (error.kind, error.model) == ("not_found", "mistral")
    assert str(error) == error.message == "The model 'mistral' isn't installed. Download it with `ollama pull mistral`."
    assert ollama_server.pending == 1


def test_no_model_chosen_suggests_one(client):
    _, error = chat_until_error(client, model="")

    assert isinstance(error, ModelNotFound)
    assert "`ollama pull qwen3`" in error.message


@pytest.mark.parametrize(
    ("request_extra", "feature"),
    [
        ({"think": True, "capabilities": frozenset({"thinking"})}, "thinking"),
        ({"tools": (ToolSpec("read_file", "", {}),)}, "tools"),
    ],
)
def test_asking_a_model_for_what_it_cannot_do(client, request_extra, feature):
    """A request that claims what the model cannot do gets Ollama's 400, in a plain sentence."""
    _, error = chat_until_error(client, model="llama-plain", **request_extra)

    assert isinstance(error, UnsupportedFeature)
    assert (error.kind, error.model, error.feature) == ("unsupported", "llama-plain", feature)
    assert error.message.startswith(f"The model 'llama-plain' doesn't support {feature}.")


def test_think_false_is_fine_for_a_model_without_thinking(ollama_server, client):
    assert chat(client, model="llama-plain", think=False, capabilities=frozenset({"thinking"}))[-1].done
    assert ollama_server.chat_requests[0]["think"] is False


def test_error_line_mid_stream_comes_after_the_text_before_it(ollama_server, client):
    killed = "llama runner process has terminated: signal: killed"
    ollama_server.script(Turn(Text("Half an ans"), ErrorLineStep(killed)))

    content, error = chat_until_error(client)

    assert content == "Half an ans"
    assert isinstance(error, StreamBroken)
    assert error.kind == "broken"
    assert "llama runner process has terminated: signal: killed" in error.message


def test_error_before_any_output_is_ollamas_own_error(ollama_server, client):
    ollama_server.script(ErrorLineStep("model requires more system memory (9.1 GiB) than is available (4.0 GiB)"))

    _, error = chat_until_error(client)

    assert type(error) is ModelError
    assert error.kind == "server"
    assert (
        error.message
        == "Ollama couldn't answer: model requires more system memory (9.1 GiB) than is available (4.0 GiB)."
    )


def test_scripted_status_is_ollamas_own_error(ollama_server, client):
    ollama_server.script(Status(503, {"error": "server busy, please try again.  maximum pending requests exceeded"}))

    _, error = chat_until_error(client)

    assert error.kind == "server"
    assert "server busy" in error.message


def test_dropped_connection_breaks_the_stream(ollama_server, client):
    ollama_server.script(Turn(Text("Half"), Drop()))

    content, error = chat_until_error(client)

    assert content == "Half"
    assert isinstance(error, StreamBroken)
    assert "httpx" not in error.message.lower()


def test_stream_that_ends_without_the_final_line_is_broken(ollama_server, client):
    ollama_server.script(Turn(Text("Half"), finish=False))

    content, error = chat_until_error(client)

    assert content == "Half"
    assert isinstance(error, StreamBroken)


def test_silence_longer_than_the_read_timeout_is_a_stall(ollama_server):
    ollama_server.script(Turn(Text("Thinking about"), Stall(5), Text(" it")))
    llm = OllamaClient(ollama_server.url, read_timeout=0.5)
    started = time.monotonic()

    content, error = chat_until_error(llm)

    assert time.monotonic() - started < 2.5
    assert content == "Thinking about"
    assert isinstance(error, StreamStalled)
    assert error.kind == "stalled"
    assert "stopped answering for 0.5 s" in error.message
    assert ollama_server.wait_for_disconnects(1, timeout=3)


def test_closing_the_stream_early_makes_ollama_stop(ollama_server, client):
    ollama_server.script(Turn(*[Text("word ")] * 200, delay=0.02))
    stream = client.stream_chat(ask())
    next(stream)
    next(stream)

    stream.close()

    assert ollama_server.wait_for_disconnects(1, timeout=3)


@pytest.mark.parametrize("silence", ["before the first line", "after the first line"])
def test_stop_during_a_silence_hangs_up_at_once(ollama_server, client, silence):
    # Ollama sends nothing while it processes the prompt (not even the headers) or holds a call back. Unless the
    # client hangs up, it goes on computing a reply no one reads, ahead of the next message, until the stream's
    # read timeout (here 120 s, five times over).
    late = Turn(Stall(60), Text("late")) if silence == "before the first line" else Turn(Text("Loading"), Stall(60))
    ollama_server.script(reply("Warm."), late)
    assert "".join(c.content for c in chat(client, cancel=threading.Event())) == "Warm."  # a connection used before
    cancel = threading.Event()
    stream = client.stream_chat(ask(), cancel=cancel)
    if silence == "after the first line":
        assert next(stream).content == "Loading"
    threading.Timer(0.3, cancel.set).start()

    assert list(stream) == []
    assert ollama_server.wait_for_disconnects(1, timeout=3)


@pytest.mark.parametrize(
    "call",
    [
        lambda llm: list(llm.stream_chat(ask())),
        lambda llm: llm.list_models(),
        lambda llm: llm.show("qwen3"),
        lambda llm: llm.version(),
        lambda llm: list(llm.pull("qwen3")),
    ],
    ids=["stream_chat", "list_models", "show", "version", "pull"],
)
def test_nothing_listening_is_unreachable(call):
    llm = OllamaClient(f"http://127.0.0.1:{free_port()}", connect_timeout=1)

    with pytest.raises(ServerUnreachable) as caught:
        call(llm)

    assert caught.value.kind == "unreachable"
    assert caught.value.message == (
        f"Can't reach Ollama at {llm.host}. Start it with `ollama serve` (or open the Ollama app), then try again."
    )


def test_health_when_down_names_the_fix():
    health = OllamaClient(f"http://127.0.0.1:{free_port()}").health()

    assert not health.ok
    assert health.version is None
    assert "`ollama serve`" in health.message


def test_health_when_up_and_when_the_model_is_missing(ollama_server, client):
    assert client.health().ok
    assert client.health().version == ollama_server.version
    assert client.health(model="qwen3").ok

    missing = client.health(model="mistral")

    assert not missing.ok
    assert missing.version == ollama_server.version
    assert "`ollama pull mistral`" in missing.message


def test_health_recovers_when_ollama_comes_back_on_the_same_port(ollama_server, client):
    url = ollama_server.url
    ollama_server.stop()
    assert not client.health().ok

    ollama_server.start()

    assert ollama_server.url == url
    assert client.health().ok


def test_list_models_gives_names_sizes_and_details(client):
    models = {m.name: m for m in client.list_models()}

    assert set(models) == {"qwen3:latest", "llama3.2:latest", "llama-plain:latest"}
    qwen = models["qwen3:latest"]
    assert (qwen.parameter_size, qwen.quantization, qwen.family) == ("8.2B", "Q4_K_M", "qwen3")
    assert qwen.size_bytes == 5_225_387_923
    assert qwen.capabilities == frozenset()


def test_show_gives_capabilities_and_context_length(client):
    qwen = client.show("qwen3")
    plain = client.show("llama-plain")

    assert qwen.capabilities == {"completion", "tools", "thinking"}
    assert qwen.context_length == 40960
    assert (qwen.parameter_size, qwen.quantization, qwen.family) == ("8.2B", "Q4_K_M", "qwen3")
    assert plain.capabilities == {"completion"}
    assert plain.context_length == 8192


def test_show_knows_the_size_once_models_were_listed(client):
    assert client.show("qwen3").size_bytes is None
    client.list_models()

    assert client.show("llama3.2").size_bytes == 2_019_393_189


def test_show_is_cached_but_a_missing_model_is_not(ollama_server, client):
    assert client.show("qwen3") is client.show("qwen3")
    for _ in range(2):
        with pytest.raises(ModelNotFound):
            client.show("mistral")

    shown = [body["model"] for path, body in ollama_server.requests if path == "/api/show"]
    assert shown == ["qwen3", "mistral", "mistral"]


def test_show_cache_is_safe_across_threads(client):
    results = []
    threads = [threading.Thread(target=lambda: results.append(client.show("qwen3"))) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert len(results) == 8
    assert {r.context_length for r in results} == {40960}


def test_pull_reports_progress_then_the_model_is_installed(ollama_server, client):
    progress = list(client.pull("qwen3:0.6b"))

    statuses = [p.status for p in progress]
    assert statuses[0] == "pulling manifest"
    assert statuses[-3:] == ["verifying sha256 digest", "writing manifest", "success"]
    layer = [p for p in progress if p.digest][:4]
    assert {p.total for p in layer} == {522_653_767}
    assert [p.completed for p in layer] == [None, 174_217_922, 348_435_844, 522_653_767]
    assert layer[0].status == f"pulling {layer[0].digest[7:19]}"
    assert "qwen3:0.6b" in {m.name for m in client.list_models()}
    assert ollama_server.requests[0] == ("/api/pull", {"model": "qwen3:0.6b", "insecure": False, "stream": True})


def test_pull_of_a_name_not_in_the_library(client):
    with pytest.raises(ModelNotFound) as caught:
        list(client.pull("no-such-model"))

    assert "no model called 'no-such-model'" in caught.value.message
    assert "no-such-model:latest" not in {m.name for m in client.list_models()}


def test_host_defaults_like_the_ollama_cli(monkeypatch):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    assert OllamaClient(None).host == "http://127.0.0.1:11434"

    monkeypatch.setenv("OLLAMA_HOST", "0.0.0.0:4000")
    assert OllamaClient("").host == "http://0.0.0.0:4000"


def test_an_address_that_is_not_one_is_refused():
    with pytest.raises(ModelError) as caught:
        OllamaClient("http://[::1")

    assert caught.value.kind == "bad_host"


def test_something_else_on_the_port_is_not_ollama(tmp_path: Path):
    class Quiet(SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        health = OllamaClient(f"http://127.0.0.1:{server.server_address[1]}").health()
    finally:
        server.shutdown()
        server.server_close()

    assert not health.ok
    assert "doesn't look like Ollama" in health.message


# ---- model families: profile, logprobs, silences ----


@pytest.fixture
def family_server() -> Iterator[ScriptedOllama]:
    with ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}) as server:
        yield server


@pytest.mark.parametrize(
    ("model", "parser", "renderer", "native"),
    [
        ("qwen3", None, None, False),
        ("llama-plain", None, None, False),
        ("qwen3:4b", "qwen3-thinking", None, True),
        ("qwen3.5", "qwen3.5", "qwen3.5", True),
        ("qwen3-coder", "qwen3-coder", "qwen3-coder", True),
        ("gpt-oss", "harmony", "harmony", True),
    ],
)
def test_the_profile_reads_parser_and_renderer_from_the_modelfile(family_server, model, parser, renderer, native):
    profile = OllamaClient(family_server.url).profile(model)
    assert (profile.info.parser, profile.info.renderer) == (parser, renderer)
    assert profile.info.template
    assert profile.native_tools is native
    assert profile.holding is (Holding.SHOWN if native else Holding.NONE)  # this Ollama is new enough for logprobs


@pytest.mark.parametrize(
    ("version", "supported"),
    [("0.12.11", True), ("0.13.0-rc1", True), ("v1.0.0", True), ("0.12.10", False), ("0.9.6", False), ("dev", False)],
)
def test_logprobs_need_ollama_0_12_11(version, supported):
    assert supports_logprobs(version) is supported
    info = ModelInfo("m", frozenset({"tools"}), None, None, None, None, None, parser="qwen3")
    assert profile_of(info, version).holding is (Holding.SHOWN if supported else Holding.SILENT)


def test_held_back_call_tokens_arrive_as_token_text_with_logprobs(family_server):
    family_server.script(generated("Sure.\n" + tool_call_text("read_file", {"path": "a"}), token_size=3))
    client = OllamaClient(family_server.url)
    chunks = chat(client, model="qwen3:4b-instruct", holding=Holding.SHOWN)
    assert family_server.chat_requests[0]["logprobs"] is True
    assert "".join(c.content for c in chunks) == "Sure."
    held = "".join(c.token for c in chunks)
    assert "<tool_call>" in held
    assert '"path": "a"' in held
    assert all(not (c.token and (c.content or c.thinking)) for c in chunks)
    assert [call for c in chunks for call in c.tool_calls] == [NativeToolCall("read_file", {"path": "a"})]


def test_a_silent_call_is_reported_every_second_and_not_cut_off_by_the_read_timeout():
    with ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}, version="0.12.10") as server:
        text = "Sure.\n" + tool_call_text("read_file", {"path": "a"})
        server.script(Turn(Generated(tokens_of("Sure.\n")), Generated(tokens_of(text[6:]), delay=0.3)))
        client = OllamaClient(server.url, read_timeout=2.0)  # about 4 s of silence: twice this, and under five
        chunks = chat(client, model="qwen3:4b-instruct", holding=Holding.SILENT)
        silences = [c.silent_for for c in chunks if c.silent_for]
        assert len(silences) >= 2
        assert silences == sorted(silences)
        assert [call for c in chunks for call in c.tool_calls] == [NativeToolCall("read_file", {"path": "a"})]


def test_without_silent_calls_the_same_silence_is_a_stall():
    with ScriptedOllama({**DEFAULT_MODELS, **PARSER_MODELS}, version="0.12.10") as server:
        server.script(Turn(Generated(tokens_of("Sure.\n")), Generated(tokens_of(tool_call_text("x", {})), delay=0.3)))
        client = OllamaClient(server.url, read_timeout=1.0)
        with pytest.raises(StreamStalled):
            chat(client, threading.Event(), model="qwen3:4b-instruct")


def test_a_call_the_parser_cannot_read_is_an_error_line(family_server):
    family_server.script(generated("Ok.\n</think>\n\n" + tool_call_text("read_file", {"path": "a"})))
    _, error = chat_until_error(OllamaClient(family_server.url), model="qwen3.5", tools=())
    assert isinstance(error, ErrorLine)
    assert "EOF" in error.message


# ---- a ChatRequest as Ollama reads it ----

TRANSCRIPT = (
    {"role": "user", "content": "Read a.md."},
    {
        "role": "assistant",
        "content": "",
        "thinking": "Which file?",
        "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.md"}}}],
    },
    {"role": "tool", "content": "1│ hello", "tool_name": "read_file"},
    {"role": "assistant", "content": "It says hello."},
    {"role": "user", "content": "Read it again."},
)
READ_FILE = ToolSpec(
    "read_file",
    "Read a file.",
    {"type": "object", "properties": {"path": {"type": "string", "description": "the file"}}, "required": ["path"]},
)
ON_THE_WIRE = [
    {"role": "system", "content": SYSTEM},
    {"role": "user", "content": "Read a.md."},
    {  # the ollama client leaves out empty fields, as before
        "role": "assistant",
        "thinking": "Which file?",
        "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.md"}}}],
    },
    {"role": "tool", "content": "1│ hello", "tool_name": "read_file"},
    {"role": "assistant", "content": "It says hello."},
    {"role": "user", "content": "Read it again."},
]
WRAPPED = {"role": "user", "content": '<tool_response name="read_file">\n1│ hello\n</tool_response>'}


@pytest.mark.parametrize(
    ("model", "body"),
    [
        ("qwen3", {"messages": ON_THE_WIRE, "tools": [], "think": True}),  # thinks; no parser: the text protocol
        ("llama3.2", {"messages": ON_THE_WIRE, "tools": []}),  # cannot think: not asked to, either way
        (
            "qwen3:4b-instruct",  # Ollama's parser reads its calls: tools natively, and logprobs to see them
            {
                "messages": ON_THE_WIRE,
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "read_file",
                            "description": "Read a file.",
                            "parameters": {
                                "type": "object",
                                "required": ["path"],
                                "properties": {"path": {"type": "string", "description": "the file"}},
                            },
                        },
                    }
                ],
                "logprobs": True,
            },
        ),
        ("llama-plain", {"messages": [*ON_THE_WIRE[:3], WRAPPED, *ON_THE_WIRE[4:]], "tools": []}),  # no role tool
    ],
)
def test_a_request_reaches_ollama_as_its_chat_api_reads_it(family_server, model, body):
    client = OllamaClient(family_server.url)
    profile = client.profile(model)
    tools = (READ_FILE,) if profile.native_tools else None
    request = ChatRequest(model, SYSTEM, TRANSCRIPT, tools, True, profile.info.capabilities, 8192, profile.holding)

    assert list(client.stream_chat(request))[-1].done

    assert family_server.chat_requests == [{"model": model, "stream": True, "options": {"num_ctx": 8192}, **body}]


class _Lines(BaseHTTPRequestHandler):
    """Answers /api/chat with the lines of `server.lines`, as a server that looks like Ollama but says odd things."""

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        body = "".join(line + "\n" for line in self.server.lines).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


HALF = '{"message": {"role": "assistant", "content": "Half"}, "done": false}'


@pytest.mark.parametrize(
    "line",
    [
        pytest.param("not JSON", id="not-json"),
        pytest.param("[1, 2]", id="not-an-object"),
        pytest.param('{"message": "text", "done": false}', id="message-not-an-object"),
        pytest.param('{"done": false}', id="no-message"),
        pytest.param('{"message": {"role": "assistant", "content": 5}, "done": false}', id="content-not-text"),
        pytest.param(
            '{"message": {"role": "assistant", "content": ""}, "logprobs": [{"logprob": -1}], "done": false}',
            id="token-without-text",
        ),
        pytest.param(
            '{"message": {"role": "assistant", "tool_calls": [{"function": {"name": "x", "arguments": "{}"}}]}}',
            id="arguments-not-an-object",
        ),
        pytest.param(
            '{"message": {"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}}',
            id="call-without-name",
        ),
        pytest.param(
            '{"message": {"role": "assistant", "tool_calls": {"function": {"name": "x", "arguments": {}}}}}',
            id="calls-not-a-list",
        ),
        pytest.param('{"message": {"role": "assistant", "content": ""}, "done": "yes"}', id="done-not-a-boolean"),
        pytest.param(
            '{"message": {"role": "assistant", "content": ""}, "done": true, "eval_count": "many"}',
            id="count-not-a-number",
        ),
    ],
)
def test_a_line_not_shaped_like_ollamas_breaks_the_answer_in_plain_words(line):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Lines)
    server.lines = [HALF, line]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        content, error = chat_until_error(OllamaClient(f"http://127.0.0.1:{server.server_address[1]}"))
    finally:
        server.shutdown()
        server.server_close()

    assert content == "Half"
    assert isinstance(error, StreamBroken)
    assert error.message == "The answer from Ollama broke off: Ollama sent a line Meowgent can't read. Try again."
