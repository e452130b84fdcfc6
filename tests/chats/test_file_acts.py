"""ChatService's file acts: uploads and undos are the owner's, logged as the person's own act, and told to the model."""

import io
import uuid
from pathlib import Path

import pytest

from meowgent.agent.loop import Agent
from meowgent.chats.errors import ChatError, ChatErrorKind
from meowgent.chats.service import ChatService
from meowgent.config import Settings
from meowgent.conversation import Decision
from meowgent.files.checkpoints import Checkpoints
from meowgent.files.errors import FileRefused
from meowgent.llm.client import OllamaClient
from meowgent.persist.store import Store
from tests.scripted_ollama import Text, Turn, reply, tool_call_text

ALICE, BOB = "browser:alice", "browser:bob"
CAPS = {"max_bytes": 1_000, "max_files": 3}


@pytest.fixture
def service(ollama_server, tmp_path):
    workspace, data = tmp_path / "ws", tmp_path / "data"
    workspace.mkdir()
    settings = Settings(workspace=workspace, data_dir=data, ollama_host=ollama_server.url, read_timeout=10)
    store = Store(data / "meowgent.db")
    checkpoints = Checkpoints(store, data, workspace, cap=1_000_000)
    agent = Agent(OllamaClient(ollama_server.url, read_timeout=10), settings, checkpoints=checkpoints)
    return ChatService(agent, store, default_model="qwen3", workspace=workspace, checkpoints=checkpoints)


def workspace_of(service) -> Path:
    return service._workspace


def wait(service, owner, chat_id):
    for _ in service.follow(owner, chat_id, poll=0.02):
        pass


def test_an_upload_is_saved_logged_as_the_persons_own_act_and_told_to_the_model(service):
    chat = service.new_chat(ALICE)
    written = service.files.upload(ALICE, chat.id, [("report.txt", io.BytesIO(b"hello"))], **CAPS)
    assert [(item.path, item.size) for item in written] == [("report.txt", 5)]
    assert (workspace_of(service) / "report.txt").read_bytes() == b"hello"
    [row] = service.audit(ALICE, chat.id)
    assert (row.tool, row.decision, row.decided_by, row.proposed) == (
        "upload",
        "person",
        "owner_browser",
        {"path": "report.txt", "size": 5, "replaced": False},
    )
    assert chat.conversation.notes == ["The person added report.txt (5 bytes) to the workspace."]


def test_someone_elses_chat_takes_no_upload_and_no_undo(service):
    chat = service.new_chat(ALICE)
    service.new_chat(BOB)
    with pytest.raises(ChatError, check=lambda error: error.kind == ChatErrorKind.UNAVAILABLE):
        service.files.upload(BOB, chat.id, [("x.txt", io.BytesIO(b"x"))], **CAPS)
    with pytest.raises(ChatError, check=lambda error: error.kind == ChatErrorKind.UNAVAILABLE):
        service.files.undo(BOB, chat.id, "any")
    assert not (workspace_of(service) / "x.txt").exists()


def test_a_refused_upload_keeps_the_ones_before_it_and_logs_only_those(service):
    chat = service.new_chat(ALICE)
    files = [("a.txt", io.BytesIO(b"a")), ("../b.txt", io.BytesIO(b"b"))]
    with pytest.raises(FileRefused, check=lambda refused: refused.kind == "bad_name"):
        service.files.upload(ALICE, chat.id, files, **CAPS)
    assert [row.proposed["path"] for row in service.audit(ALICE, chat.id)] == ["a.txt"]
    with pytest.raises(FileRefused, check=lambda refused: refused.kind == "too_many"):
        service.files.upload(ALICE, chat.id, [(f"{n}.txt", io.BytesIO(b"")) for n in range(4)], **CAPS)


def test_undo_of_an_approved_write_restores_logs_and_tells_the_model(service, ollama_server):
    (workspace_of(service) / "poem.md").write_bytes(b"old\n")
    chat = service.new_chat(ALICE)
    ollama_server.script(
        Turn(Text(tool_call_text("write_file", {"path": "poem.md", "content": "new\n"}))), reply("Written.")
    )
    service.send(ALICE, chat.id, "rewrite it")
    wait(service, ALICE, chat.id)
    [waiting] = service.waiting(ALICE, chat.id)
    service.decide(ALICE, chat.id, {waiting.id: Decision(True)})
    wait(service, ALICE, chat.id)
    assert (workspace_of(service) / "poem.md").read_bytes() == b"new\n"
    assert [row.path for row in service.files.changes(ALICE, chat.id)] == ["poem.md"]
    report = service.files.undo(ALICE, chat.id, waiting.id, account="alice")
    assert [item.path for item in report.done] == ["poem.md"]
    assert (workspace_of(service) / "poem.md").read_bytes() == b"old\n"
    undo_row = service.audit(ALICE, chat.id)[-1]
    assert (undo_row.tool, undo_row.decision, undo_row.decided_by, undo_row.account) == (
        "undo",
        "person",
        "account",
        "alice",
    )
    assert "put poem.md back as it was before you changed it" in chat.conversation.notes[-1]
    ollama_server.script(reply("Noted."))
    service.send(ALICE, chat.id, "thanks")
    wait(service, ALICE, chat.id)
    sent = [message["content"] for message in ollama_server.chat_requests[-1]["messages"]]
    assert any("put poem.md back" in text for text in sent)


def test_undo_without_checkpoints_does_nothing(ollama_server, tmp_path):
    settings = Settings(workspace=tmp_path, ollama_host=ollama_server.url)
    store = Store(tmp_path / f"{uuid.uuid4().hex}.db")
    agent = Agent(OllamaClient(ollama_server.url), settings)
    service = ChatService(agent, store, default_model="q", workspace=tmp_path)
    chat = service.new_chat(ALICE)
    assert service.files.undo(ALICE, chat.id, "c").done == ()
    assert service.files.changes(ALICE, chat.id) == []
