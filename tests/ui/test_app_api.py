"""The launched app through gradio_client: streaming, approval by id, stale clicks, isolation."""

import json
import os
import secrets
import stat
from pathlib import Path

import gradio
import httpx
import pytest

from meowgent.ui.state.approval import CARD_BOX_CHARS
from tests.persist.test_recorder import flushers
from tests.scripted_ollama import Text, reply, tool_call_text
from tests.ui.conftest import OWNER_HEADERS, chat_text, html_text, owners_client, started_app


@pytest.fixture
def client(running_app):
    return owners_client(running_app.url)


def screen(values):
    """(chat, card summary as shown text): the last values of every event that shows the chat."""
    chat, card, _details, _path, _old, _edit_args, _scopes, _meter = values[-8:]
    return chat, html_text(card)


def card_details(client, key):
    """The waiting call's whole content, which the page gets once, after an event's frames."""
    return client.predict(key, api_name="/show_card_details")


def open_page(client):
    values = client.predict("", "", api_name="/on_load")
    return values[0], *screen(values)


def test_an_answer_streams_into_the_chat(running_app, client):
    running_app.ollama.script(reply("Purr. All good here.", chunk_size=3, delay=0.01))
    key, chat, _ = open_page(client)
    assert chat == []
    job = client.submit(key, "hello", api_name="/on_send")
    updates = list(job)
    assert len(updates) >= 2  # the answer arrived in several frames, not all at once
    chat, card = screen(job.result())
    assert "Purr. All good here." in chat_text(chat)
    assert card == ""


def test_a_risky_call_waits_then_runs_on_approve(running_app, client):
    running_app.ollama.script(
        Text(tool_call_text("write_file", {"path": "cat.md", "content": "meow"})), reply("Saved.")
    )
    key, _, _ = open_page(client)
    chat, card = screen(client.predict(key, "save a cat", api_name="/on_send"))
    assert "Write cat.md" in card
    assert "Create the new file cat.md with this text" in card
    assert card_details(client, key) == "meow"
    assert not (running_app.workspace / "cat.md").exists()
    chat, card = screen(client.predict(key, "", api_name="/on_approve"))
    assert (running_app.workspace / "cat.md").read_text() == "meow"
    assert "Saved." in chat_text(chat)
    assert card == ""


def test_reject_does_not_run_and_the_reason_reaches_the_model(running_app, client):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch made.txt"})), reply("OK, I won't."))
    key, _, _ = open_page(client)
    client.predict(key, "make a file", api_name="/on_send")
    chat, _card = screen(client.predict(key, "not today", api_name="/on_reject"))
    assert not (running_app.workspace / "made.txt").exists()
    assert "OK, I won't." in chat_text(chat)
    tool_message = running_app.ollama.chat_requests[-1]["messages"][-1]
    assert "not today" in tool_message["content"]


def test_a_stale_approval_runs_nothing(running_app, client):
    running_app.ollama.script(
        Text(tool_call_text("run_shell", {"command": "echo once >> count.txt"})),
        reply("Done."),
    )
    key, _, _ = open_page(client)
    client.predict(key, "count", api_name="/on_send")
    client.predict(key, "", api_name="/on_approve")
    client.predict(key, "", api_name="/on_approve")  # a second click on a card that is gone
    assert (running_app.workspace / "count.txt").read_text() == "once\n"
    assert len(running_app.ollama.chat_requests) == 2


def test_two_clients_are_isolated(running_app):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch a-was-here"})))
    alice, bob = (
        owners_client(running_app.url),
        owners_client(running_app.url),
    )
    alice_key, _, _ = open_page(alice)
    bob_key, bob_chat, _ = open_page(bob)
    alice.predict(alice_key, "touch it", api_name="/on_send")
    assert card_details(alice, alice_key) == "touch a-was-here"
    # Bob sees nothing of Alice's chat, and his approve (even with her key) reaches only his own chat.
    bob_chat, bob_card = screen(bob.predict(bob_key, "", api_name="/on_approve"))
    bob.predict(alice_key, "", api_name="/on_approve")
    assert "touch it" not in chat_text(bob_chat)
    assert bob_card == ""
    assert not (running_app.workspace / "a-was-here").exists()


def test_an_edited_call_runs_as_edited_and_the_model_is_told(running_app, client):
    call = Text(tool_call_text("run_shell", {"command": "echo proposed >> out.txt"}))
    running_app.ollama.script(call, reply("Ok."), call, reply("Ok, as you changed it."))
    key, _, _ = open_page(client)
    client.predict(key, "write it", api_name="/on_send")
    assert card_details(client, key) == "echo proposed >> out.txt"
    # Fields sent without opening the edit section change nothing (in the page they are empty until then).
    client.predict(key, "", "", "echo unseen >> out.txt", api_name="/on_approve")
    assert (running_app.workspace / "out.txt").read_text() == "proposed\n"
    client.predict(key, "write it again", api_name="/on_send")
    path, old, command = client.predict(key, api_name="/on_edit")
    assert (path["visible"], old["visible"], command["value"]) == (False, False, "echo proposed >> out.txt")
    chat, _card = screen(client.predict(key, "", "", "echo edited >> out.txt", api_name="/on_approve"))
    assert (running_app.workspace / "out.txt").read_text() == "proposed\nedited\n"
    told = running_app.ollama.chat_requests[-1]["messages"][-1]["content"]
    assert "The person changed this call before approving it" in told
    assert "echo edited >> out.txt" in told
    assert "ran as you changed it" in str(chat)


def test_approve_all_decides_every_call_the_card_showed(running_app, client):
    running_app.ollama.script(
        Text(
            tool_call_text("write_file", {"path": "a.md", "content": "A"})
            + tool_call_text("write_file", {"path": "b.md", "content": "B"})
        ),
        reply("Both written."),
    )
    key, _, _ = open_page(client)
    _chat, card = screen(client.predict(key, "write two", api_name="/on_send"))
    assert "wants to do 2 things" in card
    assert "Write a.md" in card
    assert "Write b.md" in card
    assert card_details(client, key) == "A"
    _chat, card = screen(client.predict(key, api_name="/on_approve_all"))
    assert (running_app.workspace / "a.md").read_text() == "A"
    assert (running_app.workspace / "b.md").read_text() == "B"
    assert card == ""


def test_approve_all_never_approves_a_call_the_card_cut_short(running_app, client):
    """The button is hidden then; a click sent anyway (every event is an endpoint) runs nothing."""
    long = "x" * (CARD_BOX_CHARS + 1)
    running_app.ollama.script(
        Text(
            tool_call_text("write_file", {"path": "a.md", "content": "A"})
            + tool_call_text("write_file", {"path": "b.md", "content": long})
        ),
        reply("Both written."),
    )
    key, _, _ = open_page(client)
    values = client.predict(key, "write two", api_name="/on_send")
    assert "each one waits for its own approval" in screen(values)[1]
    client.predict(key, api_name="/on_approve_all")
    assert not (running_app.workspace / "a.md").exists()
    assert not (running_app.workspace / "b.md").exists()
    client.predict(key, "", api_name="/on_approve")
    assert (running_app.workspace / "a.md").read_text() == "A"
    assert card_details(client, key) == long  # now first in line: whole in the box under the card
    client.predict(key, "", api_name="/on_approve")
    assert (running_app.workspace / "b.md").read_text() == long


def test_allowing_a_write_for_this_chat_allows_that_file_and_not_another(running_app, client):
    """Issue 12: allowing the write of a.md let a later write of b.md run without asking."""
    write_a = Text(tool_call_text("write_file", {"path": "a.md", "content": "A"}))
    write_b = Text(tool_call_text("write_file", {"path": "b.md", "content": "B"}))
    running_app.ollama.script(write_a, reply("Wrote a."), write_a, reply("Again."), write_b, reply("Asked."))
    key, _, _ = open_page(client)
    client.predict(key, "write a", api_name="/on_send")
    client.predict(key, "", api_name="/on_approve_chat")
    _chat, card = screen(client.predict(key, "a again", api_name="/on_send"))
    assert card == ""  # the same file: allowed for this chat
    _chat, card = screen(client.predict(key, "now b", api_name="/on_send"))
    assert "b.md" in card  # another file: the card asks
    assert not (running_app.workspace / "b.md").exists()


def test_allow_for_this_chat_then_revoke_and_the_audit_log(running_app, client):
    command = "echo hi >> said.txt"
    call = Text(tool_call_text("run_shell", {"command": command}))
    running_app.ollama.script(call, reply("First."), call, reply("Second, without asking."), call, reply("Third."))
    key, _, _ = open_page(client)
    client.predict(key, "say hi", api_name="/on_send")
    client.predict(key, "", api_name="/on_approve_chat")
    assert (running_app.workspace / "said.txt").read_text() == "hi\n"
    _chat, card = screen(client.predict(key, "again", api_name="/on_send"))
    assert card == ""  # allowed for this chat: no card
    assert (running_app.workspace / "said.txt").read_text() == "hi\nhi\n"

    scope = json.dumps({"tool": "run_shell", "command": command, "prefix": None, "path": None, "host": None})
    client.predict(key, [scope], api_name="/on_revoke")
    _chat, card = screen(client.predict(key, "once more", api_name="/on_send"))
    assert "Run this command" in card  # asks again
    assert (running_app.workspace / "said.txt").read_text() == "hi\nhi\n"

    log = html_text(client.predict(key, api_name="/on_audit"))
    assert f"for this chat: this exact command: {command}" in log
    assert "by your rules or a permission for this chat" in log
    assert "How it ended: it ran" in log


def test_another_client_cannot_open_a_chat_by_its_id(running_app):
    running_app.ollama.script(reply("Alice's secret plans."))
    alice, bob = (
        owners_client(running_app.url),
        owners_client(running_app.url),
    )
    alice_values = alice.predict("", "", api_name="/on_load")
    alice_key = alice_values[0]
    # The chat list comes back as an update whose value is the open chat's id.
    alice_chat = next(v["value"] for v in alice_values if isinstance(v, dict) and "choices" in v and v["choices"])
    alice.predict(alice_key, "my plans", api_name="/on_send")
    bob_key = bob.predict("", "", api_name="/on_load")[0]
    try:  # Gradio itself may refuse an id that is not among Bob's choices; if not, the owner check does
        opened = bob.predict(bob_key, alice_chat, api_name="/on_open")
    except Exception as refused:  # gradio_client raises its own AppError
        opened = str(refused)
    assert "secret" not in json.dumps(opened)
    chat, _card = screen(bob.predict(bob_key, "", api_name="/on_approve"))
    assert "secret" not in json.dumps(chat)
    # The chat drawn again after an undo: no frame of it for anyone but its owner.
    assert "secret" in json.dumps(alice.predict(alice_key, alice_chat, api_name="/redraw_chat"))
    try:
        redrawn = bob.predict(bob_key, alice_chat, api_name="/redraw_chat")
    except Exception as refused:  # gradio_client raises its own AppError
        redrawn = str(refused)
    assert "secret" not in json.dumps(redrawn)


def test_another_clients_rules_cannot_let_an_owners_risky_call_run(running_app):
    """Issue 13: one gradio_client call allowed everything server-wide, and another owner's command ran unasked."""
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch victim-ran"})), reply("Done."))
    victim, attacker = (
        owners_client(running_app.url),
        owners_client(running_app.url),
    )
    victim_key, _, _ = open_page(victim)
    allow_everything = '[{"tool": "*", "action": "allow"}]'
    assert "Open Meowgent's page first" in attacker.predict("", allow_everything, api_name="/on_save_rules")
    attacker_key, _, _ = open_page(attacker)
    assert "Saved 1 rule(s)" in attacker.predict(attacker_key, allow_everything, api_name="/on_save_rules")
    _chat, card = screen(victim.predict(victim_key, "clean up", api_name="/on_send"))
    assert "Run touch victim-ran" in card
    assert card_details(victim, victim_key) == "touch victim-ran"  # still waits for the victim's own decision
    assert not (running_app.workspace / "victim-ran").exists()
    assert victim.predict(victim_key, api_name="/on_rules") != allow_everything


def test_an_owners_own_rules_judge_their_chats(running_app, client):
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": "touch mine"})), reply("Done."))
    key, _, _ = open_page(client)
    client.predict(key, '[{"tool": "run_shell", "action": "allow", "command": "touch *"}]', api_name="/on_save_rules")
    _chat, card = screen(client.predict(key, "touch it", api_name="/on_send"))
    assert card == ""
    assert (running_app.workspace / "mine").exists()


def test_a_pull_without_an_owner_is_refused(running_app, client):
    refused = client.predict("", "qwen3", api_name="/on_pull")
    assert "Open Meowgent's page first" in refused
    assert not any(path == "/api/pull" for path, _body in running_app.ollama.requests)


def test_config_hands_out_nothing_from_the_data_folder(running_app, client):
    """Issue 13: /config gave every client the data folder's browser-secret."""
    key, _, _ = open_page(client)
    client.predict(
        key, '[{"tool": "read_file", "action": "allow", "note": "a-rule-only-i-know"}]', api_name="/on_save_rules"
    )
    config = httpx.get(running_app.url + "config", headers=OWNER_HEADERS, timeout=10).text
    kept = [file for file in running_app.settings.data_dir.rglob("*") if file.is_file() and ".db" not in file.name]
    assert kept  # the owner's rules, at least
    for file in kept:
        for word in file.read_text().split():
            assert word not in config or len(word) < 8, f"{word} from {file.name} is in /config"
    assert not (running_app.settings.data_dir / "browser-secret").exists()


def test_exports_are_private_and_gone_when_the_app_stops(running_app, client):
    running_app.ollama.script(reply("Exported words."))
    key, _, _ = open_page(client)
    client.predict(key, "hello", api_name="/on_send")
    client.predict(key, api_name="/on_export")
    cache = Path(os.environ["GRADIO_TEMP_DIR"])
    exported = sorted(cache.rglob("chat.*"))
    assert [file.name for file in exported] == ["chat.json", "chat.md"]
    assert "Exported words." in exported[1].read_text()
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert all(stat.S_IMODE(file.stat().st_mode) == 0o600 for file in exported)
    running_app.demo.close()
    assert not any(file.exists() for file in exported)


def test_an_app_that_stops_leaves_no_recorder_behind(tmp_path):
    before = flushers()
    with started_app(tmp_path, {}):
        assert flushers() == before + 1
    assert flushers() == before


# Calling these makes the caller an owner with a chat of their own, as opening the page does.
BECOMES_AN_OWNER = ("/on_load", "/on_new_chat", "/on_delete")


def test_a_caller_that_never_opened_the_page_learns_nothing_from_any_endpoint(running_app, client):
    """Issue 17: every Gradio event is an API endpoint; the MCP timer told anyone how each server is started."""
    servers = {"mcpServers": {"files": {"command": "meow-missing-program", "args": ["--token", "tok-SECRET-123"]}}}
    (running_app.settings.data_dir / "mcp.json").write_text(json.dumps(servers))
    running_app.restart()
    owner = owners_client(running_app.url)
    key, _, _ = open_page(owner)
    owner.predict(
        key,
        '[{"tool": "read_file", "action": "allow", "note": "rule-only-the-owner-knows"}]',
        api_name="/on_save_rules",
    )
    private = [str(running_app.workspace), "llama-plain", "meow-missing-program", "rule-only-the-owner-knows"]
    assert "llama-plain" in json.dumps(owner.predict(key, "qwen3", api_name="/on_tick"))
    assert "meow-missing-program --token ••••" in owner.predict(key, api_name="/listing")  # the owner's own sidebar

    stranger = owners_client(running_app.url)
    endpoints = stranger.view_api(print_info=False, return_format="dict")["named_endpoints"]
    called = []
    for name, info in endpoints.items():
        if name.startswith(BECOMES_AN_OWNER):
            continue
        arguments = [
            secrets.token_urlsafe(8) if parameter["component"] == "Browserstate" else parameter["example_input"]
            for parameter in info["parameters"]
        ]
        try:
            answered = json.dumps(stranger.predict(*arguments, api_name=name), ensure_ascii=False)
        except Exception as refused:  # gradio_client raises its own AppError
            answered = str(refused)
        called.append(name)
        for secret in private:
            assert secret not in answered, f"{name} told a stranger {secret!r}"
    assert {"/on_tick", "/on_rules", "/listing", "/on_show", "/on_language"} <= set(called)
    config = httpx.get(running_app.url + "config", headers=OWNER_HEADERS, timeout=10).text
    for secret in private:
        assert secret not in config, f"/config holds {secret!r}"
    assert "tok-SECRET-123" not in config


@pytest.mark.parametrize("app_options", [{"upload_max_bytes": 1_000, "upload_max_files": 2}])
def test_gradios_upload_takes_files_only_from_a_page_and_under_the_caps(running_app):
    """Issue 21: /upload writes into Gradio's cache before any event runs, so a stranger's script gets nothing in."""
    cache = Path(os.environ["GRADIO_TEMP_DIR"])
    url = running_app.url + "gradio_api/upload"
    stranger = httpx.post(url, files={"files": ("small.bin", b"x" * 10)}, headers=OWNER_HEADERS, timeout=30)
    assert stranger.status_code == 403
    ticket = {"meowgent-upload": running_app.demo.file_links.ticket()}
    over_one = httpx.post(
        url, files={"files": ("one.bin", b"\0" * 1_500)}, cookies=ticket, headers=OWNER_HEADERS, timeout=30
    )
    assert over_one.status_code == 413  # one file over upload_max_bytes: Gradio's own max_file_size
    over_all = httpx.post(
        url, files={"files": ("all.bin", b"\0" * 3_000)}, cookies=ticket, headers=OWNER_HEADERS, timeout=30
    )
    assert over_all.status_code == 413  # the request over the caps in all: refused before Gradio reads it
    assert not [path for name in ("small.bin", "one.bin", "all.bin") for path in cache.rglob(name)]
    taken = httpx.post(url, files={"files": ("fine.bin", b"fine")}, cookies=ticket, headers=OWNER_HEADERS, timeout=30)
    assert taken.status_code == 200


def test_each_event_draws_its_progress_on_one_component_at_most(running_app):
    """Gradio's page updates every progress target of every event that ran, on every frame of an answer: with
    all outputs as targets, about 100 components a frame (bench/bench_engine.py)."""
    config = httpx.get(running_app.url + "config", headers=OWNER_HEADERS, timeout=10).json()
    ids = {component.get("props", {}).get("elem_id"): component["id"] for component in config["components"]}
    events = config["dependencies"]
    assert all(event["show_progress_on"] is not None and len(event["show_progress_on"]) <= 1 for event in events)
    sends = [event for event in events if event["api_name"] == "on_send"]
    assert sends
    assert all(event["show_progress_on"] == [ids["msg"]] for event in sends)  # the box says it is busy
    hidden = [event for event in events if event["show_progress"] == "hidden"]
    assert hidden
    assert all(event["show_progress_on"] == [] for event in hidden)


def test_no_event_of_one_session_waits_for_another_sessions(running_app):
    """Answers stream for minutes: an event with a concurrency limit would queue every other session behind one."""
    queue = running_app.demo._queue
    limits = {fn.concurrency_limit for fn in running_app.demo.fns.values()}
    assert {queue.default_concurrency_limit if limit == "default" else limit for limit in limits} == {None}


def test_gradio_sums_up_no_events_for_a_monitoring_page_that_is_off(running_app, client):
    """Gradio's default: after each event, a pandas table of the last 10,000, growing dearer as the app ages."""
    running_app.ollama.script(reply("Purr."))
    key, _, _ = open_page(client)
    client.predict(key, "hello", api_name="/on_send")
    queue = running_app.demo._queue
    assert queue.events_recorded >= 2  # the page's load and the message went through Gradio's queue
    assert queue.cached_event_analytics_summary == {"functions": {}}


def test_the_app_tells_gradio_nothing_however_it_is_started(tmp_path, monkeypatch):
    """Gradio's default is to report each start to its servers and to ask them for its latest version, unless
    GRADIO_ANALYTICS_ENABLED says no: app.py sets that, but an app composed in any other program must not report."""
    monkeypatch.setenv("GRADIO_ANALYTICS_ENABLED", "True")  # Gradio's own default, whatever this process set
    reported = []
    for name in ("version_check", "initiated_analytics", "launched_analytics", "integration_analytics"):
        monkeypatch.setattr(gradio.analytics, name, lambda *args, name=name: reported.append(name))
    with started_app(tmp_path, {}) as app:
        assert httpx.get(app.url, headers=OWNER_HEADERS, timeout=30).status_code == 200
        assert app.demo.analytics_enabled is False
    assert reported == []


def test_the_app_starts_on_a_machine_too_busy_to_answer_gradios_own_check_in_time(tmp_path, monkeypatch):
    # Gradio's launch gives up when one request for the page takes over 3 s (a model busy on every core).
    monkeypatch.setattr(gradio.networking, "url_ok", lambda url: False)
    with started_app(tmp_path, {}) as app:
        assert httpx.get(app.url, headers=OWNER_HEADERS, timeout=30).status_code == 200


def test_every_field_a_person_can_reach_has_a_name_a_screen_reader_says(running_app):
    """A field without a label is announced by Gradio's page as "Textbox" (the message box was), and the rules' editor
    showed "Code" in either language. The fields hidden until a card needs them are labelled then (test_layout_card)."""
    fields = ("textbox", "dropdown", "radio", "checkbox", "checkboxgroup", "file", "code")
    reachable = [
        component
        for component in running_app.demo.config["components"]
        if component["type"] in fields and component["props"].get("visible") not in (False, "hidden")
    ]
    assert {component["props"].get("elem_id") for component in reachable} >= {
        "msg",
        "card_details",
        "pull_name",
        "rules",
    }
    unnamed = [component["props"].get("elem_id") for component in reachable if not component["props"].get("label")]
    assert unnamed == []


def test_the_frames_of_streamed_text_leave_the_stores_write_lock_to_the_recorder(running_app, client, monkeypatch):
    """Which calls are undone is a write transaction of the store: read for whole frames, not for every frame."""
    running_app.ollama.script(reply("Purr. " * 300, chunk_size=6, delay=0.01))  # about 3 s: 15 frames of text
    key, _, _ = open_page(client)
    files = running_app.demo.service.files
    reads = []
    monkeypatch.setattr(files, "changes", lambda owner, chat: reads.append(chat) or [])
    frames = list(client.submit(key, "hello", api_name="/on_send"))
    assert "Purr. Purr." in chat_text(screen(frames[-1])[0])
    assert len(frames) >= 10  # the answer streamed in many frames
    assert 1 <= len(reads) < len(frames) / 2
