"""The request for the model's next reply: the system prompt, the tools and the transcript fitted to its context."""

from __future__ import annotations

import json
from collections.abc import Iterable

from meowgent.config import Settings
from meowgent.context import FitResult, TokenEstimator, budget_for, fit_messages
from meowgent.conversation import Conversation
from meowgent.llm.types import ChatRequest, ModelProfile, ToolSpec
from meowgent.prompt import system_prompt
from meowgent.tools.registry import AnyTool


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
    system = system_prompt(offered, workspace=settings.workspace, native=profile.native_tools)
    specs = tuple(tool.spec() for tool in offered) if profile.native_tools else None
    context = min(info.context_length or settings.num_ctx, settings.num_ctx)
    fit = fit_messages(
        [{"role": "system", "content": system}, *conversation.messages],
        budget=budget_for(context) - _schema_tokens(specs, estimator),
        estimator=estimator,
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


def _schema_tokens(specs: tuple[ToolSpec, ...] | None, estimator: TokenEstimator) -> int:
    """Tokens the tools' schemas take in the prompt: chat templates write each tool as its function's JSON."""
    if not specs:
        return 0
    schemas = json.dumps([{"type": "function", "function": spec.as_json()} for spec in specs])
    return estimator.estimate([{"role": "system", "content": schemas}])
