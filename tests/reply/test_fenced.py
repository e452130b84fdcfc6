"""Fenced JSON calls in prose (what Qwen2.5-Coder writes on llama-server), read at every split."""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.events import TextDelta, ToolCallDelta, ToolCallDone
from meowgent.reply.fenced import HEADER_CAP, FencedCalls

TOOLS = frozenset({"write_file", "read_file", "files__search"})


def read(chunks, tools=TOOLS):
    """(joined prose, [(raw, complete)], joined deltas of each call) of the chunks fed in order."""
    reader = FencedCalls(tools)
    events = [event for chunk in chunks for event in reader.feed(chunk)] + reader.close()
    prose = "".join(e.text for e in events if isinstance(e, TextDelta))
    calls = [(e.raw, e.complete) for e in events if isinstance(e, ToolCallDone)]
    deltas, current = [], []
    for event in events:
        if isinstance(event, ToolCallDelta):
            current.append(event.text)
        elif isinstance(event, ToolCallDone):
            deltas.append("".join(current))
            current = []
    return prose, calls, deltas


def fenced(name, language="json", key="arguments", **arguments):
    return f"```{language}\n" + json.dumps({"name": name, key: arguments}, ensure_ascii=False) + "\n```"


WRITE = fenced("write_file", path="notes.md", content='a "quoted" } and ``` fence\n')
SAMPLE = f"Sure, writing it.\n{WRITE}\nDone."


def test_a_fenced_call_to_an_offered_tool_is_a_call_and_its_fence_is_not_prose():
    prose, calls, deltas = read([SAMPLE])
    assert prose == "Sure, writing it.\n\nDone."
    raw = json.dumps(
        {"name": "write_file", "arguments": {"path": "notes.md", "content": 'a "quoted" } and ``` fence\n'}}
    )
    assert calls == [(raw, True)]
    assert deltas == [raw]


@pytest.mark.parametrize("cut", range(len(SAMPLE) + 1))
def test_every_split_gives_the_same(cut):
    assert read([SAMPLE[:cut], SAMPLE[cut:]]) == read([SAMPLE])


@pytest.mark.parametrize(
    "text",
    [
        fenced("delete_everything", path="/"),  # names no tool this chat offers
        fenced("write_file", language="python", path="a"),  # a program, not a call
        '```json\n{"name": "write_file", "description": "Write a file"}\n```',  # a schema: no arguments
        '```json\n{"name": "write_file", "arguments": "a.txt"}\n```',  # arguments that are no object
        '```json\n{"path": "a.txt", "name": "write_file", "arguments": {}}\n```',  # not a call's shape
        '```\n{"name": "write_file" , "arguments" ',  # cut off before it could be known
        "Inline ``` fences ``` and ``x`` `y` stay as they are.",
        "```json\n[1, 2, 3]\n```",
    ],
)
def test_json_that_is_not_a_call_stays_prose(text):
    for cut in range(len(text) + 1):
        assert read([text[:cut], text[cut:]]) == (text, [], [])


def test_a_block_of_code_is_prose_up_to_its_closing_fence_which_opens_nothing():
    code = "```python\nx = 1\n```\n" + '{"name": "write_file", "arguments": {"path": "a"}}\n```\n'
    assert read([code]) == (code, [], [])


def test_other_fence_languages_spaces_and_parameters_and_mcp_names():
    assert read([fenced("read_file", language="", path="a")])[1] == [
        ('{"name": "read_file", "arguments": {"path": "a"}}', True)
    ]
    text = '```JSON \n\n  {  "name" :"files__search","parameters":{"q": 1}}```'
    assert read([text])[1] == [('{  "name" :"files__search","parameters":{"q": 1}}', True)]


def test_a_call_still_open_at_the_end_is_incomplete_and_two_calls_are_two():
    assert read(['```json\n{"name": "read_file", "arguments": {"path": "a'])[1] == [
        ('{"name": "read_file", "arguments": {"path": "a', False)
    ]
    two = fenced("read_file", path="a") + "\nand\n" + fenced("read_file", path="b")
    prose, calls, _ = read([two])
    assert prose == "\nand\n"
    assert [json.loads(raw)["arguments"] for raw, _ in calls] == [{"path": "a"}, {"path": "b"}]


def test_a_header_longer_than_the_cap_is_prose():
    text = "```json" + " " * HEADER_CAP + '\n{"name": "read_file", "arguments": {}}\n```'
    assert read([text]) == (text, [], [])


def test_prose_without_a_backtick_passes_at_once():
    assert FencedCalls(TOOLS).feed('plain words {"name": "write_file"}') == [
        TextDelta('plain words {"name": "write_file"}')
    ]


pieces = st.sampled_from(
    [
        "```", "``", "`", "json", "\n", " ", "{", "}", '"', "\\", ":", ",", '"name"', '"arguments"', '"write_file"',
        '"nope"', "text", "{}", '"a"', "<tools>", "</tools>", "<tool", "{{",
    ]
)  # fmt: skip


@given(st.lists(pieces, max_size=40), st.data())
def test_any_chunking_gives_the_same_prose_and_calls(parts, data):
    text = "".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    chunks = [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    assert read(chunks) == read([text])


@given(st.text(max_size=200))
def test_text_without_a_fenced_call_comes_out_whole(text):
    prose, calls, _ = read([text])
    if not calls:
        assert prose == text


def test_a_reply_that_is_a_calls_object_alone_is_a_call_and_json_later_in_prose_is_not():
    bare = '  \n{"name": "write_file", "arguments": {"path": "a.txt", "content": "hi"}}'
    for cut in range(len(bare) + 1):
        prose, calls, _ = read([bare[:cut], bare[cut:]])
        assert prose == "  \n"
        assert calls == [(bare.strip(), True)]
    later = 'Here it is:\n{"name": "write_file", "arguments": {"path": "a.txt"}}'
    assert read([later]) == (later, [], [])
    person = '{"name": "Bob", "arguments": {}} is my JSON'
    assert read([person]) == (person, [], [])


CALL = '{"name": "read_file", "arguments": {"path": "a.md"}}'


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        (f"<tools>\n{CALL}\n</tools>", ""),  # the tag of the tool list in Qwen2.5's template
        (f"Reading it. <tools>{CALL}</tools> Then done.", "Reading it.  Then done."),
        ("{" + CALL + "}", ""),  # doubled outer braces, copied from the example in that template
        ("{ " + CALL + " }\nok", "\nok"),
        ("```json\n{" + CALL + "}\n```", ""),
        ("<tools>{" + CALL + "}</tools>", ""),
        ("{" + CALL, ""),  # a doubled brace never closed: the call is the object all the same
    ],
)
def test_a_call_in_tools_tags_or_in_doubled_braces_is_the_object_alone_at_every_split(text, prose):
    for cut in range(len(text) + 1):
        assert read([text[:cut], text[cut:]]) == (prose, [(CALL, True)], [CALL])


@pytest.mark.parametrize(
    "text",
    [
        "<tools>\nwrite_file, read_file\n</tools>",  # the model quoting its tool list
        '<tools>{"name": "rm_rf", "arguments": {}}</tools>',  # names no tool this chat offers
        '<tools>{"type": "function", "function": {"name": "read_file"}}</tools>',  # a schema, as the template lists it
        'Use {{"name": "read_file", "arguments": {}}} later in prose',  # not the reply's start
        '{{"name": "Bob"}} is my JSON',
        "<tool <tools",
    ],
)
def test_a_tools_tag_or_doubled_brace_that_opens_no_call_stays_prose(text):
    for cut in range(len(text) + 1):
        assert read([text[:cut], text[cut:]]) == (text, [], [])
