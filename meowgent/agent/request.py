"""The request for the model's next reply: the system prompt, the tools and the transcript fitted to its context."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from meowgent.config import Settings
from meowgent.context import FitResult, TokenEstimator, budget_for, estimate_schemas, fit_messages, latest_person
from meowgent.conversation import Conversation
from meowgent.llm.types import ChatRequest, ModelProfile
from meowgent.prompt import system_prompt
from meowgent.reply.assembler import TEXT_CALLS
from meowgent.tools.registry import AnyTool

BRIEF_TOOLS_UP_TO = 8192
"""A context window this small or smaller gets each tool in its first sentence (`ToolSpec.brief`). The builtin tools
told whole take about 2,100 tokens (estimated; 1,400 brief): half of the 4,096-token window a small model's server
often runs with, all read by a CPU before the first word of an answer."""


def build_request(
    conversation: Conversation,
    profile: ModelProfile,
    *,
    tools: Iterable[AnyTool],
    settings: Settings,
    estimator: TokenEstimator,
) -> tuple[ChatRequest, FitResult]:
    """The request for the model's next reply, with the transcript cut to fit its context (see context.py), and
    what was cut.

    A model whose calls its server parses gets the tools natively (see docs/architecture.md, "Model families");
    the others read them in the system prompt. Raises ContextTooSmall when even the latest message does not fit.
    """
    info = profile.info
    offered = list(tools)
    context = info.window(settings.num_ctx)
    brief = context <= BRIEF_TOOLS_UP_TO
    system = system_prompt(
        offered,
        workspace=settings.workspace,
        native=profile.native_tools,
        told_format=profile.told_format,
        brief=brief,
    )
    specs = tuple(tool.spec().brief() if brief else tool.spec() for tool in offered) if profile.native_tools else None
    fit = fit_messages(
        as_sent([{"role": "system", "content": system}, *conversation.messages], native=specs is not None),
        budget=budget_for(context),
        estimator=estimator,
        fixed=estimate_schemas([spec.as_json() for spec in specs or ()]),  # the server counts them in the prompt
    )
    request = ChatRequest(
        model=conversation.model,
        system=system,
        messages=tuple(fit.messages[1:]),  # the first is the system prompt, always kept as it is
        tools=specs,
        think=conversation.think,
        capabilities=info.capabilities,
        context=context,
        holding=profile.holding,
        chat=conversation.id,  # with several hosts, the chat stays on one (llm/hosts.py)
    )
    return request, fit


def as_sent(messages: Sequence[dict[str, Any]], *, native: bool) -> list[dict[str, Any]]:
    """The transcript, the system prompt first, as the server gets it: a call the model wrote in its text goes back
    as it wrote it, except, with native tools, in the answer still being written, where it is the server's own call
    (`tool_calls`, its text out of the message), answered by a result tied to it.

    Measured with Qwen2.5-Coder 1.5B on llama-server (docs/benchmarks.md, engine_calls): reading its last call back as
    the template's own, it answers from the result more often than reading it back as written, when it tends to make
    the same call again; but with the calls of earlier answers read back as the template's own, it wrote no call for
    the next request in 0 of 18 tries (at temperatures 0, 0.2 and 0.8 alike), and in 6 of 9 with them as written."""
    current = latest_person(messages)
    sent = []
    for index, message in enumerate(messages):
        written = message.get(TEXT_CALLS)
        if written is None:
            sent.append(message)
            continue
        plain = {key: value for key, value in message.items() if key != TEXT_CALLS}
        sent.append(plain | written if native and index > current else plain)
    return sent
