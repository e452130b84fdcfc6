"""ScriptedOllama speaks Ollama's wire format: checked with plain HTTP, the way Ollama's own API docs show it."""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest

from tests.scripted_ollama import (
    DEFAULT_REPLY,
    Drop,
    NativeToolCalls,
    ScriptedOllama,
    Status,
    Text,
    Thinking,
    Turn,
    reply,
    tool_call_text,
)

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def http(ollama_server: ScriptedOllama) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=ollama_server.url, timeout=5) as client:
        yield client


def lines(http: httpx.Client, path: str, body: dict) -> list[dict]:
    response = http.post(path, json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in response.text.splitlines()]


def test_chat_streams_one_json_line_per_chunk_then_a_final_line(ollama_server, http):
    ollama_server.script(Turn(Thinking("hmm"), Text("Hello"), chunk_size=2))

    chat = lines(http, "/api/chat", {"model": "qwen3", "messages": HI})

    assert [(line["message"].get("thinking"), line["message"]["content"]) for line in chat[:-1]] == [
        ("hm", ""),
        ("m", ""),
        (None, "He"),
        (None, "ll"),
        (None, "o"),
    ]
    assert all(line["model"] == "qwen3" and not line["done"] for line in chat[:-1])
    final = chat[-1]
    assert final["done"] is True
    assert final["done_reason"] == "stop"
    assert final["message"] == {"role": "assistant", "content": ""}
    assert (final["prompt_eval_count"], final["eval_count"]) == (1, 2)
    assert {"created_at", "total_duration", "eval_duration"} <= set(final)


def test_native_tool_calls_have_ollamas_shape(ollama_server, http):
    ollama_server.script(NativeToolCalls([{"name": "read_file", "arguments": {"path": "a"}}]))

    call_line = lines(http, "/api/chat", {"model": "qwen3", "messages": HI})[0]

    assert call_line["message"]["tool_calls"] == [
        {"id": "call_00000000", "function": {"index": 0, "name": "read_file", "arguments": {"path": "a"}}}
    ]


def test_without_streaming_the_reply_is_one_object(ollama_server, http):
    ollama_server.script(Turn(Thinking("hmm"), Text("Hel"), Text("lo")))

    answer = http.post("/api/chat", json={"model": "qwen3", "messages": HI, "stream": False}).json()

    assert answer["message"] == {"role": "assistant", "content": "Hello", "thinking": "hmm"}
    assert answer["done"] is True


def test_turns_are_served_in_order_then_the_default_reply(ollama_server, http):
    ollama_server.script("first", reply("second"))

    answers = [
        "".join(line["message"]["content"] for line in lines(http, "/api/chat", {"model": "qwen3", "messages": HI}))
        for _ in range(3)
    ]

    assert answers == ["first", "second", DEFAULT_REPLY]
    assert len(ollama_server.chat_requests) == 3


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({"model": "mistral", "messages": HI}, 404, "model 'mistral' not found"),
        ({"model": "llama-plain", "messages": HI, "think": True}, 400, '"llama-plain" does not support thinking'),
        (
            {"model": "llama-plain", "messages": HI, "tools": [{"type": "function", "function": {"name": "x"}}]},
            400,
            "registry.ollama.ai/library/llama-plain:latest does not support tools",
        ),
        ({"model": "", "messages": HI}, 400, "model is required"),
        (
            {"model": "qwen3", "messages": HI, "think": "high"},
            400,
            'think value "high" is not supported for this model',
        ),
    ],
)
def test_refusals_use_ollamas_status_and_words_and_take_no_turn(ollama_server, http, body, status, error):
    ollama_server.script("kept")

    response = http.post("/api/chat", json=body)

    assert (response.status_code, response.json()) == (status, {"error": error})
    assert ollama_server.pending == 1


def test_scripted_status_answers_the_whole_request(ollama_server, http):
    ollama_server.script(Status(500, {"error": "boom"}))

    response = http.post("/api/chat", json={"model": "qwen3", "messages": HI})

    assert (response.status_code, response.json()) == (500, {"error": "boom"})


def test_status_must_be_alone_in_its_turn():
    with pytest.raises(ValueError, match="only step"):
        Turn(Text("a"), Status(500))


def test_drop_before_any_output_sends_no_response(ollama_server, http):
    ollama_server.script(Drop())

    with pytest.raises(httpx.RemoteProtocolError):
        http.post("/api/chat", json={"model": "qwen3", "messages": HI})


def test_show_describes_the_model(http):
    shown = http.post("/api/show", json={"model": "qwen3"}).json()

    assert shown["capabilities"] == ["completion", "tools", "thinking"]
    assert shown["model_info"]["general.architecture"] == "qwen3"
    assert shown["model_info"]["qwen3.context_length"] == 40960
    assert shown["details"]["parameter_size"] == "8.2B"
    assert {"modelfile", "template", "parameters"} <= set(shown)
    assert http.post("/api/show", json={"model": "mistral"}).status_code == 404


def test_version_and_tags(ollama_server, http):
    assert http.get("/api/version").json() == {"version": ollama_server.version}
    tags = http.get("/api/tags").json()["models"]
    assert [t["name"] for t in tags] == ["qwen3:latest", "llama3.2:latest", "llama-plain:latest"]
    assert tags[0]["details"]["quantization_level"] == "Q4_K_M"


def test_version_is_configurable():
    with ScriptedOllama(version="0.12.6") as server, httpx.Client(base_url=server.url, timeout=5) as http:
        assert http.get("/api/version").json() == {"version": "0.12.6"}


def test_pull_of_an_unknown_name_fails_after_the_manifest_line(http):
    pulled = lines(http, "/api/pull", {"model": "no-such-model"})

    assert pulled == [{"status": "pulling manifest"}, {"error": "pull model manifest: file does not exist"}]


def test_pull_without_streaming_installs_the_model(http):
    response = http.post("/api/pull", json={"model": "qwen3:0.6b", "stream": False})

    assert response.json() == {"status": "success"}
    assert "qwen3:0.6b" in [t["name"] for t in http.get("/api/tags").json()["models"]]


def test_tool_call_text_is_the_text_protocol():
    assert tool_call_text("read_file", {"path": "a"}) == (
        '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>'
    )


def test_stop_cuts_a_stalled_stream_and_start_comes_back_on_the_same_port():
    server = ScriptedOllama().start()
    server.script(Turn(Text("a"), Text("b"), delay=30))
    url = server.url
    with httpx.Client(base_url=url, timeout=5) as http:
        with http.stream("POST", "/api/chat", json={"model": "qwen3", "messages": HI}) as response:
            stream = response.iter_lines()
            first = next(stream)
            server.stop()
            with pytest.raises(httpx.RemoteProtocolError):
                next(stream)
        assert json.loads(first)["message"]["content"] == "a"
        with pytest.raises(httpx.ConnectError):
            http.get("/api/version")
        server.start()
        try:
            assert server.url == url
            assert http.get("/api/version").status_code == 200
        finally:
            server.stop()
    assert server.disconnects == 0
