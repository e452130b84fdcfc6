"""Agent: the generator loop that streams a reply, runs safe calls and pauses on risky ones.

Nothing here blocks on a person. A risky call ends the run with `ApprovalNeeded`; the
person's decision starts a new run through `resume`. Every failure becomes an event, and
the transcript stays consistent so the next message or a retry just works.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Iterator, Mapping

from meowgent.agent import notes, repeats
from meowgent.agent.gate import ApprovalGate
from meowgent.agent.request import build_request
from meowgent.config import Settings
from meowgent.context import ContextTooSmall, TokenEstimator, trim_notice
from meowgent.conversation import Conversation, Decision
from meowgent.events import AgentEvent, Done, ErrorEvent, Notice, ToolCall, ToolResult, UserMessage
from meowgent.files.checkpoints import Checkpoints
from meowgent.llm.backend import ModelBackend
from meowgent.llm.errors import ModelError
from meowgent.llm.types import ChatRequest
from meowgent.policy.rules import Policy, Verdict
from meowgent.reply.assembler import Ended, Reply, ReplyAssembler
from meowgent.reply.guard import Limits
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import AnyTool, ToolError


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
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self._client = client
        self._settings = settings
        self.registry = tools or ToolRegistry.builtins()
        """The tools this app offers: its own, and its MCP servers'."""
        self.policy = policy or Policy([], settings.workspace, tools=self.registry)
        """The person's rules; replace it to apply edited rules to the next call."""
        # The rules that judge a conversation's calls, by its owner, when the server has several owners.
        self._gate = ApprovalGate(
            self.registry, settings, policies=policies or (lambda _owner: self.policy), checkpoints=checkpoints
        )
        self._estimators: dict[str, TokenEstimator] = {}
        self._estimators_lock = threading.Lock()

    def run(self, conversation: Conversation, text: str, cancel: threading.Event) -> Iterator[AgentEvent]:
        """Answer a new message from the person. Calls still waiting are rejected first."""
        yield UserMessage(text)
        yield from self._gate.settle_all(conversation)
        if conversation.notes:  # what the person did meanwhile (uploads, undos), before what they now say
            conversation.messages.append({"role": "user", "content": notes.person_acts(conversation.notes)})
            conversation.notes.clear()
        conversation.messages.append({"role": "user", "content": text})
        yield from self._turns(conversation, cancel)

    def resume(
        self, conversation: Conversation, decisions: Mapping[str, Decision], cancel: threading.Event
    ) -> Iterator[AgentEvent]:
        """Apply the person's decisions to the waiting calls, then let the model continue."""
        made = repeats.made(conversation.pending)
        outcome = yield from self._gate.run_pending(conversation, decisions, cancel)
        if outcome != "complete":
            yield Done(outcome)
            return
        yield from self._turns(conversation, cancel, answered=made)

    def retry(self, conversation: Conversation, cancel: threading.Event) -> Iterator[AgentEvent]:
        """Answer the last user message again, dropping everything after it."""
        last_user = max((i for i, m in enumerate(conversation.messages) if m["role"] == "user"), default=None)
        if last_user is None:
            yield ErrorEvent("nothing_to_retry")
            yield Done("error")
            return
        del conversation.messages[last_user + 1 :]
        dropped = [call for call in conversation.pending if isinstance(call, ToolCall)]
        conversation.pending.clear()
        yield UserMessage(conversation.messages[last_user]["content"])
        for call in dropped:  # not recorded (that reply is gone), but the page must stop showing them as waiting
            yield ToolResult(call.id, call.name, notes.NEW_ANSWER, "rejected", not_run="new_answer")
        yield from self._turns(conversation, cancel)

    def verdict(self, conversation: Conversation, call: ToolCall) -> Verdict:
        """Whether the call runs, asks or is refused: from the rules and this chat's scopes, never the model."""
        return self._gate.verdict(conversation, call)

    def known_hosts(self, conversation: Conversation) -> tuple[str, ...]:
        """The hosts the rules and this chat's scopes already allow (what the card offers a command's network)."""
        return self._gate.known_hosts(conversation)

    def tools(self, conversation: Conversation) -> dict[str, AnyTool]:
        """The tools this chat offers the model now: ours, and MCP tools of running servers not turned off here."""
        return self.registry.offered(off=conversation.servers_off)

    def waiting(self, conversation: Conversation) -> tuple[ToolCall, ...]:
        """The queued calls that need the person's decision, in order."""
        return self._gate.waiting(conversation)

    def _turns(
        self, conversation: Conversation, cancel: threading.Event, *, answered: tuple[ToolCall, ...] = ()
    ) -> Iterator[AgentEvent]:
        """Model replies, and the calls they make, until an answer; `answered` are the calls whose results the first
        reply reads (a call made again is not run again: agent/repeats.py)."""
        try:
            profile = self._client.profile(conversation.model)
        except ModelError as exc:
            yield ErrorEvent(exc.kind, exc.values)
            yield Done("error")
            return
        estimator = self._estimator(conversation.model)
        noticed = asked_again = told_repeat = False
        for _ in range(self._settings.max_turns):
            offered = self.tools(conversation).values()
            try:
                request, fit = build_request(
                    conversation, profile, tools=offered, settings=self._settings, estimator=estimator
                )
            except ContextTooSmall as exc:
                yield ErrorEvent(exc.kind, exc.values)
                yield Done("error")
                return
            notice = trim_notice(fit, request.context)
            if notice and not noticed:  # once per answer, not before every model reply
                noticed = True
                yield notice
            reply = yield from self._reply(conversation, request, cancel, retry_left=not asked_again)
            final = reply.final
            counts = (final.prompt_tokens, final.output_tokens) if final else (None, None)
            if final is not None and final.prompt_tokens:
                estimator.calibrate(fit.raw_tokens, final.prompt_tokens)
            if reply.rejected is not None:
                if not asked_again:  # one retry, told what went wrong; the same failure again ends the answer
                    asked_again = True
                    yield Notice("call_retry")
                    note = notes.ask_again(reply.rejected, profile.info.parser)
                    conversation.messages.append({"role": "user", "content": note})
                    continue
                yield ErrorEvent("call_rejected", {"detail": reply.rejected})
            if reply.ended != "complete" or not conversation.pending:
                yield Done(reply.ended, *counts)
                return
            again = repeats.repeats(conversation.pending, answered)
            answered = repeats.made(conversation.pending)
            outcome = yield from self._gate.run_pending(conversation, {}, cancel, repeats=again)
            if outcome != "complete":
                yield Done(outcome, *counts)
                return
            if again and told_repeat:  # told once that the result is above, it made the same call again
                yield ErrorEvent("call_repeated")
                yield Done("error", *counts)
                return
            told_repeat = told_repeat or bool(again)
        yield ErrorEvent("max_turns", {"turns": self._settings.max_turns})
        yield Done("max_turns")

    def _reply(
        self, conversation: Conversation, request: ChatRequest, cancel: threading.Event, *, retry_left: bool
    ) -> Generator[AgentEvent, None, Reply]:
        """Stream one model reply into events, the transcript and the queue (see reply/assembler.py)."""
        assembler = ReplyAssembler(
            Limits.of(self._settings),
            check=lambda call: self._unusable(conversation, call),
            risky=lambda call: self.verdict(conversation, call).action != "allow",
            notes=notes.END_NOTES,
            holding=request.holding,
            prompt_seconds=self._settings.read_timeout,
            tools=frozenset(self.tools(conversation)),  # a fenced JSON block naming one is a call
        )
        ended: Ended = "complete"
        stream = self._client.stream_chat(request, cancel=cancel)
        try:
            for chunk in stream:
                if cancel.is_set():
                    ended = "stopped"
                    break
                events = assembler.feed(chunk)
                if events:
                    yield from events
                if assembler.cut:  # a limit was passed (see reply/guard.py); closing the stream below stops it
                    break
            else:
                if cancel.is_set():
                    ended = "stopped"
        except ModelError as exc:
            ended = "error"
            yield from assembler.fail(exc)
        finally:
            stream.close()  # closes the HTTP response, so the server stops generating
        events, reply = assembler.finish(ended, retry_left=retry_left)
        yield from events
        conversation.messages.append(reply.message)
        conversation.pending = reply.calls
        return reply

    def _unusable(self, conversation: Conversation, call: ToolCall) -> str | None:
        """Why the call cannot run as written (its tool is not offered here, its arguments do not fit), or None."""
        try:
            self.registry.offered_tool(call.name, off=conversation.servers_off).validate(call.arguments)
        except ToolError as exc:
            return str(exc)
        return None

    def _estimator(self, model: str) -> TokenEstimator:
        """One per model: the correction it learns is the model's tokenizer's."""
        with self._estimators_lock:
            return self._estimators.setdefault(model, TokenEstimator())
