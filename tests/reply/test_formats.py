import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from meowgent.reply.formats import CallClosed, CallOpened, CallPiece, CallTextReader


def canonical(name, arguments):
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def tagged_json(name, arguments):
    return f"<tool_call>\n{canonical(name, arguments)}\n</tool_call>"


def tagged_xml(name, arguments):
    parameters = "".join(f"<parameter={key}>\n{value}\n</parameter>\n" for key, value in arguments.items())
    return f"<tool_call>\n<function={name}>\n{parameters}</function>\n</tool_call>"


def harmony(name, arguments):
    return (
        f"<|channel|>commentary to=functions.{name} <|constrain|>json<|message|>"
        f"{json.dumps(arguments, ensure_ascii=False)}<|call|>"
    )


FORMATS = [tagged_json, tagged_xml, harmony]


def read(chunks):
    """Feed chunks; return the merged events, checking on the way that every call's text only grows."""
    reader = CallTextReader()
    events = []
    for chunk in chunks:
        for event in reader.feed(chunk):
            if isinstance(event, CallPiece) and events and isinstance(events[-1], CallPiece):
                events[-1] = CallPiece(events[-1].text + event.text)
            else:
                events.append(event)
    return events


def calls(events):
    """The text of each call, and whether it closed."""
    out = []
    for event in events:
        if isinstance(event, CallOpened):
            out.append(["", False])
        elif isinstance(event, CallPiece):
            out[-1][0] += event.text
        elif isinstance(event, CallClosed):
            out[-1][1] = True
    return [tuple(call) for call in out]


def chunked(text, cuts):
    points = sorted({0, len(text), *(cut % (len(text) + 1) for cut in cuts)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


names = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
# Values as a model writes them: any text except the closing tag itself, ending in a non-newline (Ollama trims
# one newline at each end of a value, so a value that starts or ends with one cannot come back exactly).
values = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40).filter(
    lambda v: (
        not any(tag in v for tag in ("</parameter>", "<|call|>", "<|end|>", "<|return|>"))
        and not v.startswith("\n")
        and not v.endswith("\n")
    )
)
arguments = st.dictionaries(names, values, max_size=4)


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@given(name=names, args=arguments, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_any_chunking_gives_the_canonical_json(fmt, name, args, cuts):
    text = "noise <think>\n</think>\n\n" + fmt(name, args) + "\n"
    events = read(chunked(text, cuts))
    assert events == read([text])
    assert calls(events) == [(canonical(name, args), True)]


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: f.__name__)
@given(name=names, args=arguments, cuts=st.lists(st.integers(min_value=0), max_size=12))
def test_the_text_so_far_is_always_a_prefix_of_the_final_json(fmt, name, args, cuts):
    reader = CallTextReader()
    final = canonical(name, args)
    seen = ""
    for chunk in chunked(fmt(name, args), cuts):
        seen += "".join(event.text for event in reader.feed(chunk) if isinstance(event, CallPiece))
        assert final.startswith(seen)
    assert seen == final


def test_qwen3_coder_xml_becomes_json_with_the_newlines_ollama_trims():
    text = (
        "<tool_call>\n<function=write_file>\n<parameter=path>\nnotes.md\n</parameter>\n"
        '<parameter=content>\nline 1\n"quoted"\n\n</parameter>\n</function>\n</tool_call>'
    )
    assert calls(read(list(text))) == [
        ('{"name": "write_file", "arguments": {"path": "notes.md", "content": "line 1\\n\\"quoted\\"\\n"}}', True)
    ]


def test_json_in_tags_ends_with_its_object_even_with_braces_and_tags_in_strings():
    body = '{"name": "write_file", "arguments": {"path": "a}", "content": "</tool_call> \\" }"}}'
    assert calls(read(["<tool_call>", body[:20], body[20:], "</tool_call>"])) == [(body, True)]


def test_harmony_header_with_the_recipient_first_and_no_arguments():
    text = "<|start|>assistant to=functions.list_files<|channel|>commentary json<|message|><|call|>"
    assert calls(read(list(text))) == [('{"name": "list_files", "arguments": {}}', True)]


def test_a_call_still_being_written_is_open_and_shows_its_content_so_far():
    text = "<tool_call>\n<function=write_file>\n<parameter=content>\nhello wor"
    assert calls(read([text])) == [('{"name": "write_file", "arguments": {"content": "hello wor', False)]


def test_several_calls_in_one_reply():
    text = tagged_json("read_file", {"path": "a"}) + "\n" + tagged_xml("read_file", {"path": "b"})
    assert [call for call, _ in calls(read(list(text)))] == [
        canonical("read_file", {"path": "a"}),
        canonical("read_file", {"path": "b"}),
    ]


def test_reset_forgets_a_tag_cut_at_the_end_of_released_text():
    reader = CallTextReader()
    assert reader.feed("<tool_") == []
    reader.reset()  # Ollama released "<tool_" as prose
    assert reader.feed("call>{}") == []
    assert not reader.in_call


def test_noise_without_calls_gives_nothing_and_holds_only_a_possible_opener():
    reader = CallTextReader()
    assert reader.feed("<think>a < b</think>\n<|channel|>analysis<|message|>to=func") == []
    events = reader.feed("tions.x<|message|>{}<|call|>")
    assert calls(events) == [('{"name": "x", "arguments": {}}', True)]
