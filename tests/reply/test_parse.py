import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.events import ToolCall
from meowgent.reply.parse import CallParseError, _unfence, parse_tool_call, peek_call


@pytest.mark.parametrize(
    "raw",
    [
        '{"name": "read_file", "arguments": {"path": "a.md"}}',
        '  \n{"name": "read_file", "arguments": {"path": "a.md"}}\n ',
        '```json\n{"name": "read_file", "arguments": {"path": "a.md"}}\n```',
        '```\n{"name": "read_file", "arguments": {"path": "a.md"}}```',
        '{"name": "read_file", "parameters": {"path": "a.md"}}',
        '{"name": "read_file", "arguments": "{\\"path\\": \\"a.md\\"}"}',
        '{"function": {"name": "read_file", "arguments": {"path": "a.md"}}}',
        '{{"name": "read_file", "arguments": {"path": "a.md"}}}',  # copied from Qwen2.5's template example
        '```json\n{{ "name": "read_file", "arguments": {"path": "a.md"} }}\n```',
    ],
)
def test_tolerated_forms(raw):
    assert parse_tool_call(raw, call_id="c1") == ToolCall("c1", "read_file", {"path": "a.md"})


OLD_FENCE = re.compile(r"^```[\w-]*\s*\n?(.*?)\n?```$", re.DOTALL)
"""The regex _unfence used before: right on small texts, but it backtracked on an opening without a closing."""


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet="`js-{} \n\t", max_size=14))
def test_unfencing_reads_as_the_old_regex_did(raw):
    text = raw.strip()
    fenced = OLD_FENCE.match(text)
    assert _unfence(raw) == (fenced.group(1).strip() if fenced else text)


def test_an_opening_fence_without_a_closing_one_is_read_in_linear_time():
    """20 KB of spaces after an opening fence took a regex 3 s; here 200 KB, and the call is plain JSON after all."""
    for tail in (" " * 200_000 + "x", "\n" * 200_000 + "x"):
        with pytest.raises(CallParseError, match="not valid JSON"):
            parse_tool_call("```" + tail, call_id="c")
    call = '{"name": "read_file", "arguments": {"path": "a.md"}}'
    assert parse_tool_call("```json" + " " * 200_000 + "\n" + call + "\n```", call_id="c").name == "read_file"
    with pytest.raises(CallParseError, match="was empty"):
        parse_tool_call("``````", call_id="c")


@pytest.mark.parametrize("arguments", ["", "null"])
def test_missing_arguments_mean_none(arguments):
    raw = '{"name": "list_files"' + (f', "arguments": {arguments}' if arguments else "") + "}"
    assert parse_tool_call(raw, call_id="c").arguments == {}


@pytest.mark.parametrize(
    ("raw", "phrase"),
    [
        ("", "empty"),
        ('{"name": "read_file", "arguments": {"path": "a.md"}', "not valid JSON (Expecting ',' delimiter at line 1"),
        ("[1, 2]", "must be a JSON object"),
        ('{{"name": "read_file", "arguments": {"path": "a.md"}}', "not valid JSON"),  # doubled on one side only
        ("{{}}", 'has no "name"'),
        ('{"arguments": {}}', 'has no "name"'),
        ('{"name": 7}', 'has no "name"'),
        ('{"name": "x", "arguments": "path=a"}', "must be a JSON object, not the string 'path=a'"),
        ('{"name": "x", "arguments": [1]}', "must be a JSON object, got list"),
    ],
)
def test_errors_tell_the_model_what_to_fix(raw, phrase):
    with pytest.raises(CallParseError) as caught:
        parse_tool_call(raw, call_id="c")
    assert phrase in str(caught.value)


@pytest.mark.parametrize(
    ("partial", "expected"),
    [
        ("", (None, {})),
        ('{"na', (None, {})),
        ('{"name": "write_fi', ("write_fi", {})),
        ('{"name": "write_file", "arguments": {"path": "notes.m', ("write_file", {"path": "notes.m"})),
        ('```json\n{"name": "run_shell", "arguments": {"command": "ls -', ("run_shell", {"command": "ls -"})),
        ("not json at all", (None, {})),
    ],
)
def test_peek_reads_what_it_can_from_a_partial_call(partial, expected):
    assert peek_call(partial) == expected


names = st.sampled_from(["read_file", "write_file", "x"])
values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8), lambda inner: st.lists(inner))


@given(names, st.dictionaries(st.text(max_size=6), values, max_size=4), st.sampled_from(["", " ", "\n"]))
def test_doubled_outer_braces_read_as_the_object_inside_them(name, arguments, space):
    text = json.dumps({"name": name, "arguments": arguments})
    assert parse_tool_call("{" + space + text + space + "}", call_id="c") == parse_tool_call(text, call_id="c")
