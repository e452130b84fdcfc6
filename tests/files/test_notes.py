"""What the model is told of the person's own acts, and that the next message carries it."""

import threading

from meowgent.agent.loop import Agent
from meowgent.config import Settings
from meowgent.context import APP_NOTE
from meowgent.conversation import Conversation
from meowgent.files import told
from meowgent.llm.client import OllamaClient
from tests.scripted_ollama import reply


def test_the_sentences_name_the_files():
    assert told.uploaded([("report.pdf", 2_100_000)]) == "The person added report.pdf (2.1 MB) to the workspace."
    said = told.undone([("poem.md", True), ("a.txt", False)])
    assert "removed poem.md, which you had created" in said
    assert "put a.txt back as it was before you changed it" in said


def test_the_next_message_carries_the_notes_once(ollama_server, tmp_path):
    ollama_server.script(reply("Done."), reply("Again."))
    conversation = Conversation("c", "qwen3")
    conversation.notes.append(told.uploaded([("report.pdf", 2_100_000)]))
    agent = Agent(OllamaClient(ollama_server.url, read_timeout=10), Settings(workspace=tmp_path))
    list(agent.run(conversation, "summarise it", threading.Event()))
    note = APP_NOTE + "The person added report.pdf (2.1 MB) to the workspace."
    assert conversation.messages[:2] == [
        {"role": "user", "content": note},
        {"role": "user", "content": "summarise it"},
    ]
    assert [m["content"] for m in ollama_server.chat_requests[0]["messages"][1:3]] == [note, "summarise it"]
    list(agent.run(conversation, "and now?", threading.Event()))
    assert [m["content"] for m in conversation.messages].count(note) == 1
