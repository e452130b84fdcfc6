"""A workspace, a store with one chat, checkpoints, and a gate that runs approved calls through them."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from meowgent.agent.gate import ApprovalGate
from meowgent.config import Settings
from meowgent.conversation import Conversation, Decision
from meowgent.events import ToolCall
from meowgent.files.checkpoints import Checkpoints
from meowgent.persist.store import Store
from meowgent.policy.rules import Policy
from meowgent.reply.parse import new_call_id
from meowgent.tools.registry import ToolRegistry
from meowgent.tools.spec import ToolContext

CHAT = "chat-1"


@dataclass
class Bench:
    """One chat whose approved calls run through the gate, as the app runs them."""

    workspace: Path
    checkpoints: Checkpoints
    gate: ApprovalGate
    conversation: Conversation

    def say(self, text: str) -> int:
        """The person's message; returns its index in the transcript."""
        self.conversation.messages.append({"role": "user", "content": text})
        return len(self.conversation.messages) - 1

    def call(self, name: str, **arguments: object) -> str:
        """Run one approved call; returns its id."""
        call = ToolCall(new_call_id(), name, dict(arguments))
        self.conversation.pending.append(call)
        results = list(self.gate.run_pending(self.conversation, {call.id: Decision(True)}, threading.Event()))
        assert results, "the call did not run"
        return call.id

    def file(self, name: str) -> bytes | None:
        path = self.workspace / name
        return path.read_bytes() if path.exists() else None


def make_bench(root: Path, *, cap: int = 50_000_000) -> Bench:
    workspace = root / "ws"
    workspace.mkdir()
    data = root / "data"
    store = Store(data / "meowgent.db")
    store.create_conversation(CHAT, owner="me", title="t", model="m", workspace=workspace)
    settings = Settings(workspace=workspace, data_dir=data)
    registry = ToolRegistry.builtins()
    checkpoints = Checkpoints(store, data, workspace, cap=cap)
    gate = ApprovalGate(
        registry, settings, policies=lambda _owner: Policy([], workspace, tools=registry), checkpoints=checkpoints
    )
    return Bench(workspace, checkpoints, gate, Conversation(CHAT, "m", owner="me"))


@pytest.fixture
def bench(tmp_path: Path) -> Bench:
    return make_bench(tmp_path)


def context(workspace: Path) -> ToolContext:
    return ToolContext(Settings(workspace=workspace))
