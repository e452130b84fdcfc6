"""ToolSpec.brief: a tool told in its first sentence, for a small context window."""

from hypothesis import given
from hypothesis import strategies as st

from meowgent.llm.types import ToolSpec
from meowgent.tools.registry import ToolRegistry

PARAMETERS = {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}


def spec(description: str) -> ToolSpec:
    return ToolSpec("read_file", description, PARAMETERS)


def test_the_first_sentence_on_one_line_and_the_arguments_whole():
    told = spec("Read a text file\nfrom the workspace. Returns its lines; a.txt or 1.5 MB\nfiles too.").brief()
    assert told == ToolSpec("read_file", "Read a text file from the workspace.", PARAMETERS)


def test_a_full_stop_inside_a_word_or_number_ends_no_sentence():
    assert spec("Reads a.txt, 1.5 MB at most").brief().description == "Reads a.txt, 1.5 MB at most"


def test_every_builtin_tool_keeps_a_sentence_that_names_what_it_does():
    for tool in ToolRegistry.builtins().all().values():
        whole, brief = tool.spec(), tool.spec().brief()
        assert 20 < len(brief.description) < len(whole.description)
        assert brief.description.endswith(".")
        assert brief.parameters == whole.parameters


@given(st.text())
def test_brief_is_the_descriptions_beginning_in_its_own_words_and_briefing_it_again_changes_nothing(text):
    brief = spec(text).brief()
    assert " ".join(text.split()).startswith(brief.description)
    assert "\n" not in brief.description
    assert brief.brief() == brief
