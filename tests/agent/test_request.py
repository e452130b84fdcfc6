"""The request for the next reply, built from the conversation and the model's profile: no server needed."""

from pathlib import Path

import pytest

from meowgent.agent.request import BRIEF_TOOLS_UP_TO, as_sent, build_request
from meowgent.config import Settings
from meowgent.context import APP_NOTE, TokenEstimator, budget_for
from meowgent.conversation import Conversation
from meowgent.llm.client import profile_of
from meowgent.llm.types import Holding, ModelInfo
from meowgent.reply.assembler import TEXT_CALLS
from meowgent.reply.parse import CALL_FORMAT
from meowgent.tools.registry import ToolRegistry

TOOLS = ToolRegistry.builtins().all()
SETTINGS = Settings(workspace=Path("/w"), num_ctx=16384)


def model(window=40960, *, parser=None, capabilities=("completion", "tools", "thinking")):
    return ModelInfo("m", frozenset(capabilities), window, None, None, None, None, parser=parser)


def build(conversation, info, *, version="0.17.0", settings=SETTINGS, estimator=None, tools=TOOLS):
    return build_request(
        conversation,
        profile_of(info, version),
        tools=tools.values(),
        settings=settings,
        estimator=estimator or TokenEstimator(),
    )


def test_a_model_without_a_parser_reads_the_tools_in_the_system_prompt():
    conversation = Conversation("c", "m", think=False, messages=[{"role": "user", "content": "hi"}])
    request, fit = build(conversation, model())
    assert request.tools is None
    assert CALL_FORMAT in request.system
    assert request.messages == ({"role": "user", "content": "hi"},)
    assert (request.model, request.think, request.holding) == ("m", False, Holding.NONE)
    assert request.capabilities == {"completion", "tools", "thinking"}
    assert fit.dropped_messages == fit.trimmed_results == 0


@pytest.mark.parametrize(("version", "holding"), [("0.17.0", Holding.SHOWN), ("0.12.10", Holding.SILENT)])
def test_a_model_whose_calls_the_server_parses_gets_every_tool_natively(version, holding):
    conversation = Conversation("c", "m", messages=[{"role": "user", "content": "hi"}])
    request, _ = build(conversation, model(parser="qwen3"), version=version)
    assert [spec.name for spec in request.tools] == list(TOOLS)
    assert request.tools[0] == next(iter(TOOLS.values())).spec()
    assert CALL_FORMAT not in request.system
    assert request.holding is holding


@pytest.mark.parametrize(("window", "context"), [(8192, 8192), (40960, 16384), (None, 16384)])
def test_the_context_window_is_the_models_within_the_settings_cap(window, context):
    request, _ = build(Conversation("c", "m", messages=[{"role": "user", "content": "hi"}]), model(window))
    assert request.context == context


def test_the_transcript_is_fitted_with_room_for_the_native_tools_schemas():
    history = []
    for n in range(12):
        history += [
            {"role": "user", "content": f"question {n}"},
            {"role": "assistant", "content": f"answer {n} " + "words " * 400},
        ]
    conversation = Conversation("c", "m", messages=[*history, {"role": "user", "content": "the latest"}])
    settings, native = Settings(workspace=Path("/w"), num_ctx=8192), model(parser="qwen3")
    offered, offered_fit = build(conversation, native, settings=settings)
    bare, bare_fit = build(conversation, native, settings=settings, tools={})
    assert offered.messages[-1] == bare.messages[-1] == {"role": "user", "content": "the latest"}
    assert bare_fit.estimated_tokens <= budget_for(8192)
    assert offered_fit.estimated_tokens < bare_fit.estimated_tokens  # the schemas, sent apart, take room too
    assert offered_fit.dropped_messages > bare_fit.dropped_messages
    assert len(conversation.messages) == 25  # the transcript itself is kept whole


@pytest.mark.parametrize("parser", ["qwen3", None])
def test_a_small_window_gets_each_tool_in_its_first_sentence_and_a_larger_one_whole(parser):
    conversation = Conversation("c", "m", messages=[{"role": "user", "content": "hi"}])
    small, _ = build(conversation, model(BRIEF_TOOLS_UP_TO, parser=parser))
    large, _ = build(conversation, model(BRIEF_TOOLS_UP_TO * 2, parser=parser))
    run_shell = TOOLS["run_shell"].spec()
    told = {"small": small.system + repr(small.tools), "large": large.system + repr(large.tools)}
    assert "sandbox" in told["large"]  # a later sentence of run_shell's description
    assert "sandbox" not in told["small"]
    assert len(told["small"]) < len(told["large"]) * 0.75
    if parser:  # natively: the same tools, their arguments' schemas whole
        assert [(s.name, s.parameters) for s in small.tools] == [(s.name, s.parameters) for s in large.tools]
        assert small.tools[list(TOOLS).index("run_shell")].description == run_shell.brief().description


def test_a_call_written_in_the_text_is_sent_as_the_servers_own_only_in_the_answer_going_on_and_only_natively():
    written = '{"name": "read_file", "arguments": {"path": "a.md"}}'
    apart = {"content": "", "tool_calls": [{"function": {"name": "read_file", "arguments": {"path": "a.md"}}}]}
    call = {"role": "assistant", "content": written, TEXT_CALLS: apart}
    result = {"role": "tool", "content": "a.md: 1 line", "tool_name": "read_file"}
    plain = {"role": "assistant", "content": written}
    system = {"role": "system", "content": "You are Meowgent."}
    earlier = [system, {"role": "user", "content": "read a.md"}, call, result, {"role": "assistant", "content": "ok"}]
    now = [{"role": "user", "content": "again"}, call, result, {"role": "user", "content": f"{APP_NOTE}noted"}, call]
    sent = as_sent(earlier + now, native=True)
    assert sent[2] == plain  # an earlier answer's: as the model wrote it
    assert sent[6] == sent[9] == {"role": "assistant"} | apart  # this answer's, after a note of the app's too
    assert as_sent(earlier + now, native=False) == [plain if m is call else m for m in earlier + now]
