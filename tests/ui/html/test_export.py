"""The Markdown download: the transcript, each call and result fenced, and the approvals in plain words."""

from meowgent.chats.export import ChatRecord
from meowgent.persist.calls import AuditRow
from meowgent.persist.store import Store
from meowgent.ui.html.export import chat_markdown


def test_the_markdown_has_the_transcript_and_the_approvals_in_words(tmp_path):
    with Store(tmp_path / "meowgent.db") as store:
        store.create_conversation("c1", owner="alice", title="Tidy up", model="qwen3", workspace="/w", now=0.0)
        messages = [
            {"role": "user", "content": "list it"},
            {
                "role": "assistant",
                "content": "Sure.",
                "tool_calls": [{"function": {"name": "run_shell", "arguments": {"command": "ls"}}}],
            },
            {"role": "tool", "tool_name": "run_shell", "content": "```\na.md"},
        ]
        store.save_conversation("c1", title="Tidy up", model="qwen3", think=True, messages=messages, pending=[])
        stored = store.load("c1")
    audit = [
        AuditRow(0.0, "run_shell", {"command": "ls"}, {"command": "ls"}, "approved", "once", "owner_browser", "done"),
        AuditRow(0.0, "run_shell", {"command": "rm x"}, None, "not_approved", "rules_or_chat", "owner", "rejected"),
        AuditRow(0.0, "web_fetch", {"url": "u"}, {"url": "u"}, "allowed", "once", "account", "error", account="bob"),
    ]
    markdown = chat_markdown(ChatRecord(stored, audit, []))
    assert markdown.startswith("# Tidy up\n")
    assert "## You\n\nlist it" in markdown
    assert "**Tool call:** `run_shell`" in markdown
    assert "````\n```\na.md\n````" in markdown  # a result's own fence cannot close the block
    assert "| run_shell | approved | you, in this browser | it ran |" in markdown
    assert "| run_shell | rejected by your rules | you | it did not run |" in markdown
    assert "| web_fetch | allowed without asking | bob | it ran and failed |" in markdown
