"""The approval gate: whether a call runs, asks or is refused, and a chat's queued calls run through it in order.

Nothing here waits for a person. The first risky call nobody has decided yet ends the run with `ApprovalNeeded`;
the person's decision comes back as a `Decision` in a new run (see docs/architecture.md, "The approval gate").
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Generator, Iterator, Mapping
from dataclasses import replace
from typing import Any, Literal

from meowgent.agent import notes
from meowgent.config import Settings
from meowgent.context import APP_NOTE
from meowgent.conversation import Conversation, Decision, InvalidCall
from meowgent.events import AgentEvent, ApprovalNeeded, NotRun, ToolCall, ToolResult
from meowgent.files.checkpoints import Before, Checkpoints, written_path
from meowgent.policy.hosts import known_hosts, network_hosts
from meowgent.policy.rules import Policy, Verdict
from meowgent.reply.parse import new_call_id
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import FollowCheck, ToolContext, Visited, redirect_needs_approval, redirect_not_allowed

Outcome = Literal["complete", "paused", "stopped", "error"]


class ApprovalGate:
    """Judges and runs the calls of one app's chats with its tools, by the rules of each chat's owner."""

    def __init__(
        self,
        registry: ToolRegistry,
        settings: Settings,
        *,
        policies: Callable[[str], Policy],
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self._registry = registry
        self._settings = settings
        self._policies = policies
        self._checkpoints = checkpoints
        """Where a write keeps the file it changes, so the person can undo it; None keeps nothing."""

    def verdict(self, conversation: Conversation, call: ToolCall) -> Verdict:
        """Whether the call runs, asks or is refused: from the rules and this chat's scopes, never the model."""
        return self._policies(conversation.owner).decide(call, scopes=conversation.scopes)

    def known_hosts(self, conversation: Conversation) -> tuple[str, ...]:
        """The hosts the rules and this chat's scopes already allow: what the card offers a command's network."""
        return known_hosts(self._policies(conversation.owner).rules, conversation.scopes)

    def waiting(self, conversation: Conversation) -> tuple[ToolCall, ...]:
        """The queued calls that need the person's decision, in order."""
        return tuple(
            call
            for call in conversation.pending
            if isinstance(call, ToolCall) and self.verdict(conversation, call).action == "ask"
        )

    def run_pending(
        self,
        conversation: Conversation,
        decisions: Mapping[str, Decision],
        cancel: threading.Event,
        *,
        repeats: Collection[str] = (),
    ) -> Generator[AgentEvent, None, Outcome]:
        """Run the queued calls in order; stop at the first risky call nobody has decided yet. The calls in `repeats`
        (agent/repeats.py) neither run nor ask: the model is told their result is above."""
        while conversation.pending:
            if cancel.is_set():
                return "stopped"
            call = conversation.pending[0]
            if isinstance(call, InvalidCall):
                result = ToolResult(call.id, call.name, call.error, "error")
            elif call.id in repeats:
                result = ToolResult(call.id, call.name, notes.REPEATED, "rejected", repeated=True)
            else:
                verdict = self.verdict(conversation, call)
                decision = decisions.get(call.id)
                if verdict.action == "ask" and decision is None:
                    yield ApprovalNeeded(self.waiting(conversation))
                    return "paused"
                if verdict.action == "deny":
                    result = _not_run(call, notes.refused(call, str(verdict.reason)), "rules", verdict.reason.values())
                elif decision is not None and not decision.approved:
                    said = {"said": decision.reason} if decision.reason else {}
                    result = _not_run(call, notes.rejected(call, decision.reason), "person", said)
                else:
                    result = self._run_approved(conversation, call, decision, cancel)
            _record(conversation, result)
            conversation.pending.pop(0)
            yield result
        return "stopped" if cancel.is_set() else "complete"

    def settle_all(self, conversation: Conversation) -> Iterator[AgentEvent]:
        """Give every call still queued a result, so the transcript never has a call without one: the person sent a
        new message instead of deciding."""
        for call in conversation.pending:
            if isinstance(call, InvalidCall):
                result = ToolResult(call.id, call.name, call.error, "error")
            else:
                result = _not_run(call, notes.rejected(call, notes.NEW_MESSAGE), "new_message")
            _record(conversation, result)
            yield result
        conversation.pending.clear()

    def _run_approved(
        self, conversation: Conversation, call: ToolCall, decision: Decision | None, cancel: threading.Event
    ) -> ToolResult:
        """Run the call, or the person's edit of it, which must pass the rules again.

        It reaches the hosts the person gave it and the chat's; a call that runs by a rule or a scope, without a
        card, gets the chat's. Where a command went through its proxy goes into its result.
        """
        edited = decision.arguments if decision and decision.arguments not in (None, call.arguments) else None
        if edited is not None:
            verdict = self.verdict(conversation, ToolCall(call.id, call.name, edited))
            if verdict.action == "deny":
                said = notes.refused(call, f"the changed call is not allowed: {verdict.reason}")
                return _not_run(call, said, "changed_call", verdict.reason.values())
        hosts = network_hosts(conversation.network, decision.network if decision is not None else ())
        went: list[Visited] = []
        context = ToolContext(
            self._settings, cancel, network=hosts, may_follow=self._follow_check(conversation), on_visited=went.append
        )
        before = self._checkpoint(conversation, call, edited)
        try:
            result = _execute(self._registry, call, edited, context)
            return replace(result, reached=went[0].reached, refused=went[0].refused) if went else result
        finally:
            if before is not None and self._checkpoints is not None:
                self._checkpoints.finish(before)

    def _checkpoint(self, conversation: Conversation, call: ToolCall, edited: dict[str, Any] | None) -> Before | None:
        """Keep the file a write is about to change: here, where every approved call runs, however it was approved."""
        if self._checkpoints is None or call.name not in self._registry.all():
            return None
        path = written_path(self._registry.get(call.name), call.arguments if edited is None else edited)
        if path is None:
            return None
        return self._checkpoints.begin(conversation.id, call.id, message=_answered(conversation), path=path)

    def _follow_check(self, conversation: Conversation) -> FollowCheck:
        """web_fetch's redirects to another host, judged as a new web_fetch of that URL would be in this chat."""

        def may_follow(url: str) -> str | None:
            verdict = self.verdict(conversation, ToolCall(new_call_id(), "web_fetch", {"url": url}))
            if verdict.action == "allow":
                return None
            if verdict.action == "deny":
                return redirect_not_allowed(url, str(verdict.reason))
            return redirect_needs_approval(url)

        return may_follow


def _execute(tools: ToolRegistry, call: ToolCall, edited: dict[str, Any] | None, context: ToolContext) -> ToolResult:
    """Run the call, or the person's edit of it; the model is told when what ran differs from what it asked."""
    outcome = tools.execute(call.name, call.arguments if edited is None else edited, context)
    text = outcome.text if edited is None else notes.changed(edited, outcome.text)
    return ToolResult(call.id, call.name, text, "done" if outcome.ok else "error", outcome.duration, edited)


def _not_run(call: ToolCall, said: str, why: NotRun, reason: Mapping[str, Any] | None = None) -> ToolResult:
    """A call that did not run: `said` tells the model, `why` and `reason` the page (in the person's language)."""
    return ToolResult(call.id, call.name, said, "rejected", not_run=why, reason=reason or {})


def _answered(conversation: Conversation) -> int:
    """The index of the person's message the current answer is for (Meowgent's own notes are not theirs)."""
    return max(
        (
            index
            for index, message in enumerate(conversation.messages)
            if message["role"] == "user" and not str(message.get("content") or "").startswith(APP_NOTE)
        ),
        default=0,
    )


def _record(conversation: Conversation, result: ToolResult) -> None:
    conversation.messages.append({"role": "tool", "content": result.output, "tool_name": result.name})
