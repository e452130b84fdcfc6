import pytest

from meowgent.events import ToolCall
from meowgent.toolcall import CallParseError, parse_tool_call, peek_call


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
    ],
)
def test_tolerated_forms(raw):
    assert parse_tool_call(raw, call_id="c1") == ToolCall("c1", "read_file", {"path": "a.md"})


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
