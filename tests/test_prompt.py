from pathlib import Path

from meowgent.prompt import system_prompt
from meowgent.reply.parse import CALL_FORMAT
from meowgent.tools.registry import ToolRegistry

TOOLS = ToolRegistry.builtins().all().values()


def test_the_text_protocol_prompt_describes_every_tool_and_the_call_format():
    prompt = system_prompt(TOOLS, workspace=Path("/w"), operating_system="Linux")
    assert CALL_FORMAT in prompt
    assert '"name": "read_file"' in prompt


def test_a_native_prompt_names_no_competing_format_but_says_what_asks_first():
    prompt = system_prompt(TOOLS, workspace=Path("/w"), operating_system="Linux", native=True)
    assert "<tool_call>" not in prompt
    assert '"parameters"' not in prompt
    assert "write_file" in prompt
    assert "run_shell" in prompt
    assert "read_file" not in prompt  # safe tools need no mention: the schemas go to Ollama as tools=


def test_an_openai_servers_native_prompt_says_in_one_line_how_to_write_a_call():
    prompt = system_prompt(TOOLS, workspace=Path("/w"), operating_system="Linux", native=True, told_format=True)
    assert prompt.count(CALL_FORMAT) == 1
    assert "usual tool-call format" not in prompt
    assert '"parameters"' not in prompt  # the schemas still go to the server as tools=
