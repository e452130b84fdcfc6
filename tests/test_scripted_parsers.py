"""ScriptedOllama's parser families, driven through the real `ollama` client with cases from Ollama's own Go tests.

Each case names the Go test it comes from (model/parsers/qwen3_test.go, qwen35_test.go, qwen3coder_test.go,
harmony/harmonyparser_test.go, tools/tools_test.go). A Go test feeds `Add` chunks; here the same chunks are the
tokens a scripted model generates, and what the test asserts is the chunk sequence Ollama's ChatHandler sends for
them: one tuple per streamed chunk, holding its ("thinking", text), ("content", text), ("call", name, arguments),
("token", text) for each logprob, and ("done",) on the final line.

Where newer Ollama source falls back to content for a call it cannot read, these cases keep the released behaviour
that issue 11 measured (an error line that ends the stream); those cases say so.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import httpx
import ollama
import pytest

from tests.scripted_ollama import (
    DEFAULT_MODELS,
    LOGPROBS_SINCE,
    PARSER_MODELS,
    Generated,
    ScriptedOllama,
    Text,
    Turn,
    generated,
    harmony_call_text,
    tokens_of,
    tool_call_text,
    xml_call_text,
)

HI = [{"role": "user", "content": "What's the weather in San Francisco?"}]


def tool(name: str, **types: str) -> dict[str, Any]:
    properties = {key: {"type": kind} for key, kind in types.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object", "properties": properties}}}


WEATHER = [tool("get_weather", location="string", days="integer")]
WRITE = [tool("write_file", path="string", content="string")]
WEATHER_CALL = '{"name":"get_weather","arguments":{"location":"SF"}}'
SF = ("call", "get_weather", {"location": "SF"})
DONE = (("done",),)


@pytest.fixture
def server() -> Iterator[ScriptedOllama]:
    with ScriptedOllama(models={**DEFAULT_MODELS, **PARSER_MODELS}) as started:
        yield started


def chat(server: ScriptedOllama, model: str, tokens: Sequence[str], **request: Any) -> list[tuple]:
    """The chunks streamed for a model that generates `tokens`, as tuples (see the module docstring); an error line
    ends the list with ("error", message)."""
    server.script(Turn(Generated(tokens)))
    request.setdefault("tools", WEATHER)
    chunks: list[tuple] = []
    try:
        for chunk in ollama.Client(host=server.url).chat(model=model, messages=HI, stream=True, **request):
            chunks.append(_parts(chunk))
    except ollama.ResponseError as exc:
        chunks.append((("error", exc.error),))
    return chunks


def _parts(chunk: ollama.ChatResponse) -> tuple:
    message = chunk.message
    parts: list[tuple] = []
    if message.thinking:
        parts.append(("thinking", message.thinking))
    if message.content:
        parts.append(("content", message.content))
    parts.extend(("call", c.function.name, dict(c.function.arguments)) for c in message.tool_calls or [])
    parts.extend(("token", logprob.token) for logprob in chunk.logprobs or [])
    if chunk.done:
        parts.append(("done",))
    return tuple(parts)


# qwen3-thinking and qwen3 (model/parsers/qwen3_test.go).


def test_qwen3_thinking_then_answer(server):
    # TestQwen3ParserThinkingEnabled, fed token by token: </think> alone sends nothing.
    assert chat(server, "qwen3:4b", ["Let me think...", "</think>", "Answer."]) == [
        (("thinking", "Let me think..."),),
        (("content", "Answer."),),
        DONE,
    ]


def test_qwen3_split_opening_think_tag_is_dropped(server):
    # TestQwen3ParserThinkingEnabledWithSplitOpeningTag
    assert chat(server, "qwen3:4b", ["<thi", "nk>Let me think...</think>Answer."], think=True) == [
        (("thinking", "Let me think..."), ("content", "Answer.")),
        DONE,
    ]


def test_qwen3_thinking_off_is_all_content(server):
    # TestQwen3ParserThinkingDisabled, on the thinking parser with think=false.
    assert chat(server, "qwen3:4b", ["Direct answer"], think=False) == [(("content", "Direct answer"),), DONE]


def test_qwen3_call_started_inside_thinking(server):
    # TestQwen3ParserThinkingWithSplitToolOpenTag
    assert chat(server, "qwen3:4b", ["Let me think<tool_ca", f"ll>{WEATHER_CALL}</tool_call>"]) == [
        (("thinking", "Let me think"),),
        (SF,),
        DONE,
    ]


CALLS = (("first", "a", "1"), ("second", "b", "2"), ("third", "c", "3"))


def test_qwen3_calls_get_their_index_and_an_id(server):
    # TestQwen3ParserToolCallIndexingStreaming, read off the wire: the ollama client drops `index` and `id`.
    first, second, third = (tool_call_text(name, {key: value}) for name, key, value in CALLS)
    cut = len(second) - len("}</tool_call>")
    server.script(Turn(Generated([first + second[:cut], second[cut:] + third])))

    lines = _wire(server, {"model": "qwen3:4b-instruct", "messages": HI})

    calls = [call for line in lines for call in line["message"].get("tool_calls", [])]
    assert [(c["function"]["index"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        (0, "first", {"a": "1"}),
        (1, "second", {"b": "2"}),
        (2, "third", {"c": "3"}),
    ]
    assert len({c["id"] for c in calls}) == 3
    assert all(c["id"].startswith("call_") for c in calls)


def _wire(server: ScriptedOllama, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = httpx.post(f"{server.url}/api/chat", json=body, timeout=5)
    assert response.status_code == 200, response.text
    return [json.loads(line) for line in response.text.splitlines()]


WRITE_ARGUMENTS = {"path": "notes.md", "content": "# Notes\n\nCats sleep 16 hours a day.\n"}


def test_a_held_call_sends_nothing_until_it_is_whole(server):
    # What issue 11 measured: while the parser holds a call, Ollama sends no chunk at all.
    tokens = tokens_of("I'll write the notes." + tool_call_text("write_file", WRITE_ARGUMENTS))

    assert chat(server, "qwen3:4b-instruct", tokens, tools=WRITE) == [
        (("content", "I'll"),),
        (("content", " wri"),),
        (("content", "te t"),),
        (("content", "he n"),),
        (("content", "otes"),),
        (("content", "."),),
        (("call", "write_file", WRITE_ARGUMENTS),),
        DONE,
    ]


def test_with_logprobs_every_held_token_still_gets_a_chunk(server):
    tokens = tokens_of("Sure." + tool_call_text("write_file", WRITE_ARGUMENTS))

    chunks = chat(server, "qwen3:4b-instruct", tokens, tools=WRITE, logprobs=True)

    assert chunks[:2] == [(("content", "Sure"), ("token", "Sure")), (("content", "."), ("token", "."))]
    held = chunks[2:-2]
    assert held == [(("token", token),) for token in tokens[2:-1]]  # empty content, the token in `logprobs`
    assert "".join(part[1] for (part,) in held) == tool_call_text("write_file", WRITE_ARGUMENTS)[: -len("</tool_call>")]
    assert chunks[-2:] == [(("call", "write_file", WRITE_ARGUMENTS), ("token", "</tool_call>")), DONE]


def test_logprobs_have_ollamas_fields(server):
    server.script(Turn(Generated(["<tool_call>", "é"])))

    lines = _wire(server, {"model": "qwen3:4b-instruct", "messages": HI, "logprobs": True, "top_logprobs": 3})

    first, second = lines[0]["logprobs"][0], lines[1]["logprobs"][0]
    assert lines[0]["message"]["content"] == ""
    assert (first["token"], first["bytes"]) == ("<tool_call>", list(b"<tool_call>"))
    assert second["bytes"] == [0xC3, 0xA9]
    assert second["top_logprobs"][0]["token"] == "é"
    assert len(second["top_logprobs"]) == 3
    assert second["logprob"] == second["top_logprobs"][0]["logprob"] >= second["top_logprobs"][1]["logprob"]
    assert "logprobs" not in lines[-1]


def test_an_ollama_older_than_logprobs_ignores_them():
    major, minor, patch = (int(part) for part in LOGPROBS_SINCE.split("."))
    with ScriptedOllama(models=PARSER_MODELS, version=f"{major}.{minor}.{patch - 1}") as old:
        old.script(generated("Hi." + tool_call_text("write_file", WRITE_ARGUMENTS)))

        chunks = [
            _parts(chunk)
            for chunk in ollama.Client(host=old.url).chat(
                model="qwen3:4b-instruct", messages=HI, tools=WRITE, stream=True, logprobs=True
            )
        ]

    assert chunks == [(("content", "Hi."),), (("call", "write_file", WRITE_ARGUMENTS),), DONE]


def test_qwen3_call_that_is_not_json_ends_the_stream_with_an_error(server):
    # TestQwen3ParserValidToolCallAfterInvalid's first call. Newer Ollama source sends it as content instead.
    assert chat(server, "qwen3:4b-instruct", ["Let me check.", "<tool_call>", "invalid json", "</tool_call>"]) == [
        (("content", "Let me check."),),
        (("error", "failed to parse JSON: invalid character 'i' looking for beginning of value"),),
    ]


def test_an_error_before_any_chunk_is_an_http_500(server):
    server.script(generated("<tool_call>{}</tool_call>"))

    response = httpx.post(f"{server.url}/api/chat", json={"model": "qwen3:4b-instruct", "messages": HI}, timeout=5)

    assert (response.status_code, response.json()) == (500, {"error": "empty function name"})


def test_a_stop_token_ends_the_generation(server):
    server.script(Turn(Generated(["Done.", "<|im_end|>", "never sent"]), Text("nor this")))

    lines = _wire(server, {"model": "qwen3:4b-instruct", "messages": HI, "logprobs": True})

    assert [line["message"]["content"] for line in lines] == ["Done.", ""]
    assert lines[-1]["done"] is True


# qwen3.5 (model/parsers/qwen35_test.go): thinking, then qwen3-coder's XML calls.


def test_qwen35_xml_call_with_typed_parameters(server):
    # TestQwen35ParserXMLToolCall
    call = "<tool_call><function=get_weather><parameter=location>\nSan Francisco\n</parameter><parameter=days>\n3\n"
    assert chat(server, "qwen3.5", [call, "</parameter></function></tool_call>"], think=False) == [
        (("call", "get_weather", {"location": "San Francisco", "days": 3}),),
        DONE,
    ]


def test_qwen35_call_split_across_tokens_inside_thinking(server):
    # TestQwen35ParserToolCallEmittedInThinkingIsParsedWhenToolCallTagIsSplitAcrossChunks
    rest = "all><function=get_weather><parameter=location>\nSF\n</parameter></function></tool_call>"
    assert chat(server, "qwen3.5", ["Need weather lookup<tool_c", rest], think=True) == [
        (("thinking", "Need weather lookup"),),
        (SF,),
        DONE,
    ]


def test_qwen35_fake_call_tag_then_think_close(server):
    # TestQwen35ParserFakeoutPartialToolCallThenThinkCloseAcrossChunks
    assert chat(server, "qwen3.5", ["Need weather lookup<tool_c", "</thi", "nk>"], think=True) == [
        (("thinking", "Need weather lookup"),),
        (("thinking", "<tool_c"),),
        DONE,
    ]


def test_qwen35_whitespace_after_think_close_is_eaten(server):
    # TestQwen35ParserStreamingEatsWhitespaceAfterThinkClose
    assert chat(server, "qwen3.5", ["Reasoning</think>", "\n \t", "The final answer."]) == [
        (("thinking", "Reasoning"),),
        (("content", "The final answer."),),
        DONE,
    ]


def test_qwen35_assistant_prefill_starts_in_content(server):
    # TestQwen35ParserAssistantPrefillStartsInContent
    server.script(Turn(Generated([" and continued"])))
    messages = [*HI, {"role": "assistant", "content": "Prefilled response start"}]

    chunks = [_parts(c) for c in ollama.Client(host=server.url).chat(model="qwen3.5", messages=messages, stream=True)]

    assert chunks == [(("content", " and continued"),), DONE]


def test_qwen35_json_call_is_eof(server):
    # Issue 11: qwen3.5 writing JSON in <tool_call>, as a text protocol asks, gets {"error":"EOF"} from the XML
    # reader. (TestQwen35ParserInvalidToolCallFallsBackToContent: newer source sends the text as content instead.)
    tokens = tokens_of("Writing it.</think>" + tool_call_text("write_file", WRITE_ARGUMENTS))

    chunks = chat(server, "qwen3.5", tokens, tools=WRITE, logprobs=True)

    assert chunks[-1] == (("error", "EOF"),)
    assert all(parts[0][0] == "token" for parts in chunks[4:-1])  # silent but for logprobs until the error
    assert all(part[0] != "call" for parts in chunks for part in parts)


def test_qwen35_mismatched_xml_is_an_xml_syntax_error(server):
    # The failure reported from the field: "XML syntax error on line 3: element <function> closed by </parameter>".
    call = "<tool_call>\n<function=write_file>\n<parameter=path>\na.md\n</function>\n</parameter>\n</tool_call>"

    assert chat(server, "qwen3.5", [call], tools=WRITE, think=False) == [
        (("error", "XML syntax error on line 5: element <parameter> closed by </function>"),)
    ]


# qwen3-coder (model/parsers/qwen3coder_test.go TestQwenParserStreaming, TestQwenToolParser).

ABC_CALL = "<function=get_weather><parameter=location>SF</parameter></function>"


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [
        pytest.param(["hi", " there"], [(("content", "hi"),), (("content", " there"),)], id="streamed word by word"),
        pytest.param(
            ["before<tool", f"_call>{ABC_CALL}</tool", "_call>af", "ter"],
            [(("content", "before"),), (("content", "af"), SF), (("content", "ter"),)],
            id="tool calls with split tags",
        ),
        pytest.param(
            ["abc\n<tool_call", " fakeout"],
            [(("content", "abc"),), (("content", "\n<tool_call fakeout"),)],
            id="partial tool open tag fakeout",
        ),
        pytest.param(["a", "\n", "b"], [(("content", "a"),), (("content", "\nb"),)], id="token-by-token whitespace"),
        pytest.param(
            [*"<tool_call>", ABC_CALL, *"</tool_call>"], [(SF,)], id="tool call tags split character by character"
        ),
        pytest.param(
            ["Hello\u3000<tool", f"_call>{ABC_CALL}", "</tool_call>def"],
            [(("content", "Hello"),), (("content", "def"), SF)],
            id="ideographic space before partial tool",
        ),
        pytest.param(
            [f"你好 🌍<tool_call>{ABC_CALL}</tool_call>مرحبا"],
            [(("content", "你好 🌍مرحبا"), SF)],
            id="unicode content",
        ),
    ],
)
def test_qwen3_coder_streaming(server, tokens, expected):
    assert chat(server, "qwen3-coder", tokens) == [*expected, DONE]


@pytest.mark.parametrize(
    ("raw", "tools", "arguments"),
    [
        pytest.param(
            "<function=get_weather>\n<parameter=location>\nSan Francisco\n</parameter>\n</function>",
            WEATHER,
            {"location": "San Francisco"},
            id="simple tool call",
        ),
        pytest.param(
            "<function=calculate>\n<parameter=x>\n3.14\n</parameter>\n<parameter=y>\n42\n</parameter>\n"
            '<parameter=enabled>\ntrue\n</parameter>\n<parameter=items>\n["a", "b", "c"]\n</parameter>\n</function>',
            [tool("calculate", x="number", y="integer", enabled="boolean", items="array")],
            {"x": 3.14, "y": 42, "enabled": True, "items": ["a", "b", "c"]},
            id="tool call with typed parameters",
        ),
        pytest.param(
            '<function=exec>\n<parameter=command>\nls && echo "a > b and a < b"\n</parameter>\n</function>',
            [],
            {"command": 'ls && echo "a > b and a < b"'},
            id="ampersands and angle brackets in parameter values",
        ),
        pytest.param(
            "<function=exec>\n<parameter=command>\n\nsome-string\n\n</parameter>\n</function>",
            [],
            {"command": "\nsome-string\n"},
            id="trim at most one leading and trailing newline",
        ),
    ],
)
def test_qwen3_coder_reads_calls(server, raw, tools, arguments):
    name = raw.split(">", 1)[0].removeprefix("<function=")
    chunks = chat(server, "qwen3-coder", ["<tool_call>", raw, "</tool_call>"], tools=tools)
    assert chunks == [(("call", name, arguments),), DONE]


@pytest.mark.parametrize(
    ("types", "raw", "value"),
    [
        # TestQwenToolCallValueParsing
        ((), "\nsome-string\n", "some-string"),
        ((), " \nsome-string\n ", " \nsome-string\n "),
        (("number",), "100.0", 100),
        (("number",), "1.23e5", 123000),
        (("number",), "1.5e-3", 0.0015),
        (("integer",), "007", 7),
        (("integer",), "2147483648", 2147483648),
        (("integer",), "not-a-number", "not-a-number"),
        (("string",), "12345", "12345"),
        (("boolean",), "FALSE", False),
        (("boolean",), "yes", False),
        (("integer",), "NULL", None),
        (("array",), '["string", 123, true, null]', ["string", 123, True, None]),
        (("object",), '{"key": unclosed', '{"key": unclosed'),
        (("string", "number"), "42.5", 42.5),
        (("string", "boolean"), "false", False),
        (("number", "integer"), "42", 42),
        (("object", "array"), "[1, 2, 3]", [1, 2, 3]),
    ],
)
def test_qwen3_coder_types_parameter_values_by_the_tool_schema(server, types, raw, value):
    typed = {"type": "function", "function": {"name": "f", "parameters": {"properties": {"v": {"type": list(types)}}}}}
    chunks = chat(
        server,
        "qwen3-coder",
        [f"<tool_call><function=f><parameter=v>{raw}</parameter></function>", "</tool_call>"],
        tools=[typed],
    )
    assert chunks == [(("call", "f", {"v": value}),), DONE]


def test_xml_call_text_is_what_qwen3_coder_reads(server):
    arguments = {"path": "a.md", "content": "line 1\n<b>&</b>\n"}
    assert chat(server, "qwen3-coder", tokens_of(xml_call_text("write_file", arguments)), tools=WRITE) == [
        (("call", "write_file", arguments),),
        DONE,
    ]


# harmony, gpt-oss (harmony/harmonyparser_test.go).


def test_harmony_analysis_then_call_on_the_final_line(server):
    # TestHarmonyParserHeaderEvent, the implicit-start case: the call arrives when generation stops on <|call|>.
    tokens = [
        "<|channel|>",
        "analysis",
        "<|message|>",
        "User asks weather in SF.",
        "<|end|>",
        *tokens_of(harmony_call_text("get_weather", {"location": "San Francisco, CA"})),
    ]
    assert chat(server, "gpt-oss", tokens) == [
        (("thinking", "User asks weather in SF."),),
        (("call", "get_weather", {"location": "San Francisco, CA"}), ("done",)),
    ]


def test_harmony_final_channel_with_a_tag_that_only_looks_like_end(server):
    # TestHarmonyParserStreaming "partial tag that looks like end but isn't", in the final channel.
    tokens = ["<|channel|>final<|message|>test<|e", "xample|>more", "<|end|>"]
    assert chat(server, "gpt-oss", tokens) == [(("content", "test"),), (("content", "<|example|>more"),), DONE]


def test_harmony_message_with_channel_streamed(server):
    # TestHarmonyParserStreaming "message with channel streamed", after the implicit start.
    tokens = ["<|chan", "nel|>analysis", "<|message|>", "Thinking", "...", "<|end|>"]
    assert chat(server, "gpt-oss", tokens) == [(("thinking", "Thinking"),), (("thinking", "..."),), DONE]


def test_harmony_preamble_then_answer_ended_by_return(server):
    # A commentary message without a recipient is content; <|return|> is a stop token and is not sent.
    tokens = [
        "<|channel|>commentary<|message|>",
        "Checking.",
        "<|end|>",
        "<|start|>assistant<|channel|>final<|message|>",
        "Sunny.",
        "<|return|>",
        "never sent",
    ]
    assert chat(server, "gpt-oss", tokens) == [(("content", "Checking."),), (("content", "Sunny."),), DONE]


def test_harmony_takes_a_thinking_level(server):
    tokens = [
        "<|channel|>analysis<|message|>",
        "Easy.",
        "<|end|>",
        "<|start|>assistant<|channel|>final<|message|>",
        "4",
    ]
    assert chat(server, "gpt-oss", tokens, think="high") == [(("thinking", "Easy."),), (("content", "4"),), DONE]


@pytest.mark.parametrize(
    "header",
    [
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>",
        "<|start|>assistant to=functions.get_weather<|channel|>commentary <|constrain|>json<|message|>",
        "<|start|>assistant<|channel|>commentary to=functions.get_weather<|constrain|>json<|message|>",
        "<|start|>assistant<|channel|>analysis to=functions.get_weather<|message|>",
    ],
)
def test_harmony_headers_name_the_recipient_anywhere(server, header):
    # TestHeaderParsing
    tokens = ["<|channel|>analysis<|message|>", "Look it up.", "<|end|>", header, '{"location":"SF"}', "<|call|>"]
    assert chat(server, "gpt-oss", tokens)[-1] == (SF, ("done",))


def test_harmony_call_with_bad_json_fails_when_generation_ends(server):
    tokens = ["<|start|>assistant<|channel|>commentary to=functions.get_weather<|message|>", '{"location":', "<|call|>"]
    with_logprobs = chat(server, "gpt-oss", tokens, logprobs=True)

    assert with_logprobs == [
        (("token", tokens[0]),),
        (("token", '{"location":'),),
        (("error", "error parsing tool call: raw='{\"location\":', err=unexpected end of JSON input"),),
    ]


# No builtin parser: tokens pass through, `think` reads <think> tags (thinking/parser_test.go), and with `tools` the
# template's tag holds calls (tools/tools.go).


def test_generic_thinking_with_a_closing_tag_fakeout(server):
    # TestThinkingStreaming "partial closing tag fakeout"
    tokens = ["<think>abc</th", "ing>def", "ghi</thi", "nk>jkl"]
    assert chat(server, "qwen3", tokens, tools=None, think=True) == [
        (("thinking", "abc"),),
        (("thinking", "</thing>def"),),
        (("thinking", "ghi"),),
        (("content", "jkl"),),
        DONE,
    ]


def test_generic_thinking_token_by_token_holds_even_logprobs(server):
    # TestThinkingStreaming "token by token": while the thinking parser decides, Ollama sends nothing at all.
    tokens = ["<think>", "\n", "</think>", "\n\n", "Hi", " there"]
    assert chat(server, "qwen3", tokens, tools=None, think=True, logprobs=True) == [
        (("content", "Hi"), ("token", "Hi")),
        (("content", " there"), ("token", " there")),
        DONE,
    ]


def test_generic_thinking_then_a_held_call(server):
    tokens = [
        "<think>",
        "Need the weather.",
        "</think>",
        "\n",
        *tokens_of(tool_call_text("get_weather", {"location": "SF"})),
    ]
    assert chat(server, "qwen3", tokens, think=True) == [(("thinking", "Need the weather."),), (SF,), DONE]


def test_without_think_the_tags_are_content(server):
    assert chat(server, "qwen3", ["<think>", "hm", "</think>"], tools=None, think=False) == [
        (("content", "<think>"),),
        (("content", "hm"),),
        (("content", "</think>"),),
        DONE,
    ]


def test_without_a_parser_or_tools_tokens_are_content(server):
    tokens = ["Sure", tool_call_text("list_files", {"path": "."})]
    assert chat(server, "qwen3", tokens, tools=None) == [(("content", tokens[0]),), (("content", tokens[1]),), DONE]


def test_template_parser_holds_a_call_after_its_tag(server):
    tokens = tokens_of("Sure. " + tool_call_text("get_weather", {"location": "SF"}))

    assert chat(server, "qwen3", tokens) == [(("content", "Sure"),), (("content", ". "),), (SF,), DONE]
    assert chat(server, "qwen3", tokens, logprobs=True)[2:4] == [(("token", "<tool_call>"),), (("token", '{"na'),)]


def test_template_parser_for_bare_json_calls(server):
    tokens = tokens_of('{"name": "get_weather", "parameters": {"location": "SF"}}')
    assert chat(server, "llama3.2", tokens) == [(SF,), DONE]


def test_template_parser_lets_braces_that_are_not_a_call_through(server):
    # tools.go stays in its parsing state after flushing them, so the text after them waits for the end.
    assert chat(server, "llama3.2", ["Use {curly", " braces}", " freely."]) == [
        (("content", "Use "),),
        (("content", "{curly braces}"),),
        (("content", " freely."), ("done",)),
    ]


def test_template_parser_sends_an_unfinished_call_as_content_at_the_end(server):
    assert chat(server, "qwen3", ["<tool_call>", '{"name": "get_we']) == [
        (("content", '<tool_call>{"name": "get_we'), ("done",)),
    ]


# Issue 11's measurement: a 12,000-character write_file in every family's own format.

BIG_FILE = "".join(f'Line {i}: cats & <dogs> {{braces}} "quoted"\n' for i in range(400))[:12000]
BIG = {"path": "big.md", "content": BIG_FILE}


@pytest.mark.parametrize(
    ("model", "text"),
    [
        ("qwen3:4b", "Plan.</think>I'll write it." + tool_call_text("write_file", BIG)),
        ("qwen3.5", "Plan.</think>I'll write it." + xml_call_text("write_file", BIG)),
        ("qwen3-coder", "I'll write it." + xml_call_text("write_file", BIG)),
        ("gpt-oss", "<|channel|>analysis<|message|>Plan.<|end|>" + harmony_call_text("write_file", BIG)),
        ("qwen3", "I'll write it." + tool_call_text("write_file", BIG)),
    ],
)
def test_a_long_call_is_silent_then_exact_and_its_tokens_carry_it_with_logprobs(server, model, text):
    tokens = tokens_of(text)
    silent = chat(server, model, tokens, tools=WRITE)
    with_logprobs = chat(server, model, tokens, tools=WRITE, logprobs=True)

    calls = [part for chunk in silent for part in chunk if part[0] == "call"]
    assert calls == [("call", "write_file", BIG)]
    assert len(silent) < 10  # nothing while the 3,000 tokens of the call are written
    assert len(with_logprobs) == len(tokens) + 1 - text.endswith("<|call|>")  # a chunk per token, then done
    assert "".join(part[1] for chunk in with_logprobs for part in chunk if part[0] == "token") == text.removesuffix(
        "<|call|>"
    )


# The interface.


def test_token_delays_pass_in_silence_and_a_client_that_leaves_is_noticed(server):
    server.script(Turn(Text("Writing."), Generated(["<tool_call>", '{"name"'], delay=30)))

    with httpx.stream("POST", f"{server.url}/api/chat", json={"model": "qwen3:4b-instruct", "messages": HI}) as reply:
        first = json.loads(next(reply.iter_lines()))

    assert first["message"]["content"] == "Writing."
    assert server.wait_for_disconnects(1)  # it was waiting out a token's delay, with nothing to send


def test_tokens_of_keeps_special_tokens_whole():
    assert tokens_of("Hi there<|end|><think>ok</think>x", token_size=3) == [
        "Hi ",
        "the",
        "re",
        "<|end|>",
        "<think>",
        "ok",
        "</think>",
        "x",
    ]


def test_without_streaming_the_parsed_reply_is_one_object(server):
    server.script(generated("Hmm.</think>Calling." + tool_call_text("get_weather", {"location": "SF"})))

    answer = ollama.Client(host=server.url).chat(model="qwen3:4b", messages=HI, tools=WEATHER, logprobs=True)

    assert (answer.message.thinking, answer.message.content) == ("Hmm.", "Calling.")
    assert [(c.function.name, c.function.arguments) for c in answer.message.tool_calls or []] == [
        ("get_weather", {"location": "SF"})
    ]
    assert "".join(logprob.token for logprob in answer.logprobs or []).startswith("Hmm.</think>")


@pytest.mark.parametrize(("model", "parser"), [("qwen3.5", "qwen3.5"), ("gpt-oss", "harmony"), ("qwen3", None)])
def test_show_names_parser_and_renderer_only_in_the_modelfile(server, model, parser):
    shown = httpx.post(f"{server.url}/api/show", json={"model": model}, timeout=5).json()

    lines = shown["modelfile"].splitlines()
    assert [line for line in lines if line.startswith(("PARSER", "RENDERER"))] == (
        [f"RENDERER {parser}", f"PARSER {parser}"] if parser else []
    )
    assert any(line.startswith("FROM ") for line in lines)
    assert f'TEMPLATE """{shown["template"]}"""' in shown["modelfile"]
    assert "parser" not in shown
    assert "renderer" not in shown
    assert shown["capabilities"] == list((PARSER_MODELS | DEFAULT_MODELS)[model].capabilities)
