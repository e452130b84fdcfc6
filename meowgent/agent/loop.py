"""Agent: the generator loop that streams a reply, runs safe calls and pauses on risky ones.

Nothing here blocks on a person. A risky call ends the run with `ApprovalNeeded`; the
person's decision starts a new run through `resume`. Every failure becomes an event, and
the transcript stays consistent so the next message or a retry just works.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Generator, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from meowgent.agent.request import build_request
from meowgent.config import Settings
from meowgent.context import APP_NOTE, ContextTooSmall, TokenEstimator, describe_fit
from meowgent.conversation import Conversation, Decision, InvalidCall
from meowgent.events import (
    AgentEvent,
    ApprovalNeeded,
    Done,
    ErrorEvent,
    Notice,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCall,
    ToolCallDelta,
    ToolCallDone,
    ToolCallInvalid,
    ToolCallProgress,
    ToolCallReady,
    ToolCallStarted,
    ToolResult,
    UserMessage,
)
from meowgent.llm.backend import ModelBackend
from meowgent.llm.errors import ErrorLine, ModelError
from meowgent.llm.types import ChatChunk, ChatRequest, Holding, ModelProfile, NativeToolCall
from meowgent.policy.rules import Policy, Verdict
from meowgent.reply.formats import format_hint
from meowgent.reply.guard import Limits, ReplyGuard
from meowgent.reply.held import HeldCalls
from meowgent.reply.parse import CallParseError, new_call_id, normalize_arguments, parse_tool_call
from meowgent.reply.splitter import ToolCallSplitter
from meowgent.tools.registry import (
    AnyTool,
    FollowCheck,
    ToolContext,
    ToolError,
    ToolRegistry,
    redirect_needs_approval,
    redirect_not_allowed,
)

Outcome = Literal["complete", "paused", "stopped", "error"]


@dataclass
class _Reply:
    ended: Outcome = "complete"
    final: ChatChunk | None = None
    rejected: str | None = None
    """Ollama's words when its parser refused the model's tool call (the reply then ended with "error")."""


class Agent:
    """Runs conversations against one model server with the registered tools."""

    def __init__(
        self,
        client: ModelBackend,
        settings: Settings,
        *,
        policy: Policy | None = None,
        policies: Callable[[str], Policy] | None = None,
        tools: ToolRegistry | None = None,
    ) -> None:
        self._client = client
        self._settings = settings
        self.registry = tools or ToolRegistry.builtins()
        """The tools this app offers: its own, and its MCP servers'."""
        self.policy = policy or Policy([], settings.workspace, tools=self.registry)
        """The person's rules; replace it to apply edited rules to the next call."""
        self._policies = policies or (lambda _owner: self.policy)
        """The rules that judge a conversation's calls, by its owner, when the server has several owners."""
        self._estimators: dict[str, TokenEstimator] = {}
        self._estimators_lock = threading.Lock()

    def run(self, conversation: Conversation, text: str, cancel: threading.Event) -> Iterator[AgentEvent]:
        """Answer a new message from the person. Calls still waiting are rejected first."""
        yield UserMessage(text)
        yield from self._settle_all(conversation, "The person sent a new message instead of approving this call.")
        conversation.messages.append({"role": "user", "content": text})
        yield from self._turns(conversation, cancel)

    def resume(
        self, conversation: Conversation, decisions: Mapping[str, Decision], cancel: threading.Event
    ) -> Iterator[AgentEvent]:
        """Apply the person's decisions to the waiting calls, then let the model continue."""
        outcome = yield from self._run_pending(conversation, decisions, cancel)
        if outcome != "complete":
            yield Done(outcome)
            return
        yield from self._turns(conversation, cancel)

    def retry(self, conversation: Conversation, cancel: threading.Event) -> Iterator[AgentEvent]:
        """Answer the last user message again, dropping everything after it."""
        last_user = max((i for i, m in enumerate(conversation.messages) if m["role"] == "user"), default=None)
        if last_user is None:
            yield ErrorEvent("There is no message to answer again yet.", "nothing_to_retry")
            yield Done("error")
            return
        del conversation.messages[last_user + 1 :]
        dropped = [call for call in conversation.pending if isinstance(call, ToolCall)]
        conversation.pending.clear()
        yield UserMessage(conversation.messages[last_user]["content"])
        for call in dropped:  # not recorded (that reply is gone), but the page must stop showing them as waiting
            yield ToolResult(call.id, call.name, "Not run: the person asked for a new answer.", "rejected")
        yield from self._turns(conversation, cancel)

    def verdict(self, conversation: Conversation, call: ToolCall) -> Verdict:
        """Whether the call runs, asks or is refused: from the rules and this chat's scopes, never the model."""
        return self._policies(conversation.owner).decide(call, scopes=conversation.scopes)

    def _follow_check(self, conversation: Conversation) -> FollowCheck:
        """web_fetch's redirects to another host, judged as a new web_fetch of that URL would be in this chat."""

        def may_follow(url: str) -> str | None:
            verdict = self.verdict(conversation, ToolCall(new_call_id(), "web_fetch", {"url": url}))
            if verdict.decision == "allow":
                return None
            if verdict.decision == "deny":
                return redirect_not_allowed(url, verdict.reason)
            return redirect_needs_approval(url)

        return may_follow

    def tools(self, conversation: Conversation) -> dict[str, AnyTool]:
        """The tools this chat offers the model now: ours, and MCP tools of running servers not turned off here."""
        return self.registry.offered(off=conversation.servers_off)

    def waiting(self, conversation: Conversation) -> tuple[ToolCall, ...]:
        """The queued calls that need the person's decision, in order."""
        return tuple(
            call
            for call in conversation.pending
            if isinstance(call, ToolCall) and self.verdict(conversation, call).decision == "ask"
        )

    def _turns(self, conversation: Conversation, cancel: threading.Event) -> Iterator[AgentEvent]:
        try:
            profile = self._client.profile(conversation.model)
        except ModelError as exc:
            yield ErrorEvent(exc.message, exc.kind)
            yield Done("error")
            return
        noticed = asked_again = False
        for _ in range(self._settings.max_turns):
            offered = self.tools(conversation).values()
            estimator = self._estimator(conversation.model)
            try:
                request, fit = build_request(
                    conversation, profile, tools=offered, settings=self._settings, estimator=estimator
                )
            except ContextTooSmall as exc:
                yield ErrorEvent(exc.message, exc.kind)
                yield Done("error")
                return
            note = describe_fit(fit, request.context)
            if note and not noticed:  # once per answer, not before every model reply
                noticed = True
                yield Notice(note)
            guard = ReplyGuard(Limits.of(self._settings))
            stream = self._stream_reply(conversation, request, cancel, guard, retry_left=not asked_again)
            reply = yield from guard.watch(stream)
            counts = _token_counts(reply.final)
            if reply.final is not None and reply.final.prompt_tokens:
                estimator.calibrate(fit.raw_tokens, reply.final.prompt_tokens)
            if reply.rejected is not None:
                if not asked_again:  # one retry, told what went wrong; the same failure again ends the answer
                    asked_again = True
                    yield from _ask_again(conversation, reply.rejected, profile)
                    continue
                yield ErrorEvent(_rejected_twice(reply.rejected), "call_rejected")
            if reply.ended != "complete":
                yield Done(reply.ended, *counts)
                return
            if not conversation.pending:
                yield Done("complete", *counts)
                return
            outcome = yield from self._run_pending(conversation, {}, cancel)
            if outcome != "complete":
                yield Done(outcome, *counts)
                return
        yield ErrorEvent(
            f"I stopped after {self._settings.max_turns} model replies in a row without a final answer. "
            "Send a message to let it continue.",
            "max_turns",
        )
        yield Done("max_turns")

    def _stream_reply(
        self,
        conversation: Conversation,
        request: ChatRequest,
        cancel: threading.Event,
        guard: ReplyGuard,
        *,
        retry_left: bool = False,
    ) -> Generator[AgentEvent, None, _Reply]:
        reply = _Reply()
        splitter = ToolCallSplitter()
        held = HeldCalls(prompt_seconds=self._settings.read_timeout)
        content: list[str] = []
        thinking: list[str] = []
        native: list[dict[str, Any]] = []
        calls: list[ToolCall | InvalidCall] = []
        open_call: list[str] = []  # the id of the call being written, if any
        thinking_since: float | None = None
        stream = self._client.stream_chat(request, cancel=cancel)
        try:
            for chunk in stream:
                if cancel.is_set():
                    reply.ended = "stopped"
                    break
                live = held.read(chunk)  # panels of calls Ollama holds back; empty for nearly every chunk
                if chunk.thinking:
                    thinking_since = thinking_since or time.monotonic()
                    thinking.append(chunk.thinking)
                    yield ThinkingDelta(chunk.thinking)
                elif thinking_since is not None and (chunk.content or chunk.tool_calls or chunk.done or live):
                    yield ThinkingDone(time.monotonic() - thinking_since)
                    thinking_since = None
                if live:
                    yield from live
                if chunk.content:
                    content.append(chunk.content)
                    for piece in splitter.feed(chunk.content):
                        # Nearly every piece is prose or more of the open call: no nested generator for those.
                        if type(piece) is TextDelta:
                            yield piece
                        elif type(piece) is ToolCallDelta and open_call:
                            yield ToolCallProgress(open_call[0], piece.text)
                        else:
                            yield from self._on_piece(conversation, piece, open_call, calls)
                for call in chunk.tool_calls:
                    if guard.cut:
                        break
                    call_id, shown = held.claim()
                    yield from self._on_native_call(conversation, call, calls, call_id=call_id, shown=shown)
                    arguments = {} if guard.cut else call.arguments  # a refused call's arguments are not kept
                    native.append({"function": {"name": call.name, "arguments": arguments}})
                if chunk.done:
                    reply.final = chunk
                if guard.cut:  # a limit was passed (see limits.py); closing the stream below stops Ollama
                    break
            else:
                if cancel.is_set():
                    reply.ended = "stopped"
        except ErrorLine as exc:
            reply.ended = "error"
            # Ollama's parser refused the call we saw being written (or, unseen, may have been): the caller asks again.
            if held.pending or request.holding is Holding.SILENT:
                reply.rejected = exc.detail
            else:
                yield ErrorEvent(exc.message, exc.kind)
        except ModelError as exc:
            reply.ended = "error"
            yield ErrorEvent(exc.message, exc.kind)
        finally:
            stream.close()  # closes the HTTP response, so the server stops generating
        if guard.cut:
            reply.ended = guard.cut.ended
        for piece in splitter.close():
            yield from self._on_piece(conversation, piece, open_call, calls, interrupted=reply.ended != "complete")
        if reply.ended != "stopped":  # after Stop, Done marks the panels as interrupted
            retried = retry_left and reply.rejected is not None and not guard.cut
            yield from held.abandon(guard.cut.person if guard.cut else _abandoned(reply, retried), retried=retried)

        message: dict[str, Any] = {"role": "assistant", "content": guard.clip("".join(content))}
        if reply.ended != "complete" and not guard.cut:
            cut = _CUT_REASON["rejected" if reply.rejected is not None else reply.ended]
            message["content"] += f"\n\n[This answer was cut off: {cut}.]"
        if thinking:
            message["thinking"] = "".join(thinking)
        if native:
            message["tool_calls"] = native
        conversation.messages.append(message)
        calls = [call for call in calls if guard.may_run(call.id)]
        if guard.refused:
            call_id, error = guard.refused
            calls.append(InvalidCall(call_id, "", error))
        conversation.pending = calls if reply.ended == "complete" else []
        return reply

    def _estimator(self, model: str) -> TokenEstimator:
        """One per model: the correction it learns is the model's tokenizer's."""
        with self._estimators_lock:
            return self._estimators.setdefault(model, TokenEstimator())

    def _on_piece(
        self,
        conversation: Conversation,
        piece: TextDelta | ToolCallDelta | ToolCallDone,
        open_call: list[str],
        calls: list[ToolCall | InvalidCall],
        *,
        interrupted: bool = False,
    ) -> Iterator[AgentEvent]:
        if isinstance(piece, TextDelta):
            yield piece
            return
        if not open_call:
            open_call.append(new_call_id())
            yield ToolCallStarted(open_call[0])
        call_id = open_call[0]
        if isinstance(piece, ToolCallDelta):
            yield ToolCallProgress(call_id, piece.text)
            return
        open_call.clear()
        if interrupted:  # the Done event that follows marks the panel; nothing to run or tell the model
            return
        try:
            if not piece.complete:
                raise CallParseError("the tool call was not finished: end it with </tool_call>.")
            call = parse_tool_call(piece.raw, call_id=call_id)
        except CallParseError as exc:
            yield from self._invalid(InvalidCall(call_id, "", f"Error: {exc}"), piece.raw, calls)
            return
        yield from self._accept(conversation, call, calls)

    def _on_native_call(
        self,
        conversation: Conversation,
        native: NativeToolCall,
        calls: list[ToolCall | InvalidCall],
        *,
        call_id: str,
        shown: bool,
    ) -> Iterator[AgentEvent]:
        """Ollama's parsed call, which is the one that runs; `shown` when a live panel `call_id` already shows it."""
        name, arguments = native.name, native.arguments
        raw = json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)
        if not shown:
            yield ToolCallStarted(call_id)
            yield ToolCallProgress(call_id, raw)
        try:
            call = ToolCall(call_id, name, normalize_arguments(arguments, name=name))
        except CallParseError as exc:
            yield from self._invalid(InvalidCall(call_id, name, f"Error: {exc}"), raw, calls)
            return
        yield from self._accept(conversation, call, calls)

    def _accept(
        self, conversation: Conversation, call: ToolCall, calls: list[ToolCall | InvalidCall]
    ) -> Iterator[AgentEvent]:
        try:
            self.registry.offered_tool(call.name, off=conversation.servers_off).validate(call.arguments)
        except ToolError as exc:
            raw = json.dumps({"name": call.name, "arguments": call.arguments}, ensure_ascii=False)
            yield from self._invalid(InvalidCall(call.id, call.name, f"Error: {exc}"), raw, calls)
            return
        calls.append(call)
        yield ToolCallReady(call, self.verdict(conversation, call).decision != "allow")

    @staticmethod
    def _invalid(call: InvalidCall, raw: str, calls: list[ToolCall | InvalidCall]) -> Iterator[AgentEvent]:
        calls.append(call)
        yield ToolCallInvalid(call.id, raw, call.error)

    def _run_pending(
        self, conversation: Conversation, decisions: Mapping[str, Decision], cancel: threading.Event
    ) -> Iterator[AgentEvent]:
        """Run the queued calls in order; stop at the first risky call nobody has decided yet."""
        while conversation.pending:
            if cancel.is_set():
                return "stopped"
            call = conversation.pending[0]
            if isinstance(call, InvalidCall):
                result = ToolResult(call.id, call.name, call.error, "error")
            else:
                verdict = self.verdict(conversation, call)
                decision = decisions.get(call.id)
                if verdict.decision == "ask" and decision is None:
                    yield ApprovalNeeded(self.waiting(conversation))
                    return "paused"
                if verdict.decision == "deny":
                    result = _refused(call, verdict.reason)
                elif decision is not None and not decision.approved:
                    result = _rejected(call, decision.reason)
                else:
                    result = self._run_approved(conversation, call, decision, cancel)
            _record(conversation, result)
            conversation.pending.pop(0)
            yield result
        return "stopped" if cancel.is_set() else "complete"

    def _run_approved(
        self, conversation: Conversation, call: ToolCall, decision: Decision | None, cancel: threading.Event
    ) -> ToolResult:
        """Run the call, or the person's edit of it, which must pass the rules again.

        It reaches the network when the person turned it on for it or for the chat; a call that runs by a rule
        or a scope, without a card, gets the chat's setting.
        """
        edited = decision.arguments if decision and decision.arguments not in (None, call.arguments) else None
        if edited is not None:
            verdict = self.verdict(conversation, ToolCall(call.id, call.name, edited))
            if verdict.decision == "deny":
                return _refused(call, f"the changed call is not allowed: {verdict.reason}")
        network = conversation.network or (decision is not None and decision.network)
        context = ToolContext(self._settings, cancel, network=network, may_follow=self._follow_check(conversation))
        return _execute(self.registry, call, edited, context)

    def _settle_all(self, conversation: Conversation, reason: str) -> Iterator[AgentEvent]:
        """Give every call still queued a result, so the transcript never has a call without one."""
        for call in conversation.pending:
            if isinstance(call, InvalidCall):
                result = ToolResult(call.id, call.name, call.error, "error")
            else:
                result = _rejected(call, reason)
            _record(conversation, result)
            yield result
        conversation.pending.clear()


_CUT_REASON = {
    "stopped": "the person pressed Stop",
    "error": "the model server failed",
    "rejected": "Ollama could not read the tool call",
}


def _abandoned(reply: _Reply, retried: bool) -> str:
    """What a live panel that never became a call says, and so what the model wrote was not run."""
    if reply.rejected is not None:
        again = " The model was asked to write it again." if retried else ""
        return f"Ollama could not read this tool call ({reply.rejected}), so it did not run.{again}"
    if reply.ended == "error":
        return "The answer broke off before this tool call was finished, so it did not run."
    return "Ollama did not turn this text into a tool call, so nothing ran."


def _ask_again(conversation: Conversation, detail: str, profile: ModelProfile) -> Iterator[AgentEvent]:
    """Tell the person, in a plain sentence, and the model, with what to fix, that its call could not be read."""
    yield Notice(
        "Ollama couldn't read the tool call the model wrote, so Meowgent asked the model to write it again.",
        "call_retry",
    )
    hint = format_hint(profile.info.parser)
    how = f" Write each tool call exactly in this format:\n{hint}" if hint else " Use your own tool-call format."
    conversation.messages.append(
        {
            "role": "user",
            "content": f"{APP_NOTE}Ollama could not read your last tool call ({detail}), so it did not run.{how}",
        }
    )


def _rejected_twice(detail: str) -> str:
    return (
        f"Ollama couldn't read the model's tool call, again after asking it to write the call once more ({detail}). "
        "The conversation is kept: send a message to try again, or choose another model."
    )


def _execute(tools: ToolRegistry, call: ToolCall, edited: dict[str, Any] | None, context: ToolContext) -> ToolResult:
    """Run the call, or the person's edit of it; the model is told when what ran differs from what it asked."""
    outcome = tools.execute(call.name, call.arguments if edited is None else edited, context)
    text = outcome.text
    if edited is not None:
        ran = json.dumps(edited, ensure_ascii=False)
        text = f"The person changed this call before approving it. It ran with these arguments: {ran}\n\n{text}"
    return ToolResult(call.id, call.name, text, "done" if outcome.ok else "error", outcome.duration, edited)


def _refused(call: ToolCall, reason: str) -> ToolResult:
    text = f"Not run: the person's rules do not allow this call to {call.name} ({reason}). Do not retry it."
    return ToolResult(call.id, call.name, text, "rejected")


def _rejected(call: ToolCall, reason: str) -> ToolResult:
    text = f"The person rejected this call to {call.name}; it did not run."
    if reason:
        text += f" Their reason: {reason}"
    return ToolResult(call.id, call.name, text, "rejected")


def _record(conversation: Conversation, result: ToolResult) -> None:
    conversation.messages.append({"role": "tool", "content": result.output, "tool_name": result.name})


def _token_counts(final: ChatChunk | None) -> tuple[int | None, int | None]:
    return (final.prompt_tokens, final.output_tokens) if final else (None, None)
