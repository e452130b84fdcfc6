"""Faults injected into the launched app, driven through gradio_client.

Every case ends the same way: the app still answers a new message, what was said before (and any partial
answer) is still in the chat, and the chat explains the fault in plain words, without tracebacks or the names
of the libraries underneath.
"""

import json
import time
from pathlib import Path

import pytest

from bench.load import screen as frame_values
from meowgent.tools.registry import ToolRegistry, builtin_tools
from meowgent.tools.spec import ToolContext, tool, tool_of
from tests.scripted_ollama import Drop, ErrorLine, Stall, Status, Text, Turn, reply, tool_call_text
from tests.ui.conftest import chat_text, html_text, owners_client

LEAKS = ("Traceback", 'File "', "httpx", "httpcore", "ResponseError", "ollama._types", "ConnectError", "ReadTimeout")
"""What a person must never see: traces and the internals of the HTTP and Ollama clients."""


def screen(values):
    """(chat, card summary, card details as the frames left it); a frame of streaming text redraws the chat alone and
    leaves the card as it was (an update without a value), read here as no card text."""
    chat, summary, details = frame_values(values)
    return chat, html_text(summary) if isinstance(summary, str) else "", details


class Page:
    """One browser's view of the app: its owner key and gradio_client session."""

    def __init__(self, url):
        self.client = owners_client(url)
        # As a browser that never saw the page: every stored value (owner key, settings) empty.
        stored = self.client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/on_load"]
        self.key = self.client.predict(*[""] * len(stored["parameters"]), api_name="/on_load")[0]

    def send(self, text):
        return screen(self.client.predict(self.key, text, api_name="/on_send"))

    def card_details(self):
        """The waiting call's whole content, which the page gets once, after an event's frames."""
        return self.client.predict(self.key, api_name="/show_card_details")

    def approve(self):
        return screen(self.client.predict(self.key, "", api_name="/on_approve"))

    def pick_model(self, name):
        self.client.predict(self.key, name, api_name="/on_model")

    def banner(self, model="qwen3"):
        return self.client.predict(self.key, model, api_name="/on_tick")[0]


def assert_plain(text):
    leaked = [leak for leak in LEAKS if leak in text]
    assert not leaked, f"the chat shows {leaked}: {text[-600:]}"


def assert_recovers(running_app, page, *kept):
    """A new message gets an answer, and everything in `kept` is still in the chat."""
    running_app.ollama.script(reply("Still here, purring."))
    chat, card, _details = page.send("are you still there?")
    text = chat_text(chat)
    assert "Still here, purring." in text
    for before in kept:
        assert before in text, f"{before!r} is gone from the chat"
    assert card == ""
    assert_plain(text)


@pytest.fixture
def page(running_app):
    return Page(running_app.url)


def test_the_model_server_down_at_start_then_up(running_app):
    running_app.ollama.stop()
    page = Page(running_app.url)
    assert "ollama serve" in page.banner()
    chat, _, _ = page.send("hello while it sleeps")
    text = chat_text(chat)
    assert "Can't reach Ollama" in text
    assert "ollama serve" in text
    assert_plain(text)
    running_app.ollama.start()
    banner = page.banner()  # the page's timer asks the same question every few seconds; no reload needed
    assert "Connected" in banner
    assert "ollama serve" not in banner
    assert_recovers(running_app, page, "hello while it sleeps", "Can't reach Ollama")


def test_a_model_that_is_not_installed_says_how_to_pull_it(running_app, page):
    page.pick_model("tabby:7b")
    chat, _, _ = page.send("hi, tabby")
    assert "ollama pull tabby:7b" in chat_text(chat)
    # A model removed while the chat is open: Ollama answers the chat itself with a 404.
    page.pick_model("qwen3")
    running_app.ollama.script(Status(404, {"error": "model 'qwen3' not found"}))
    chat, _, _ = page.send("hi again")
    text = chat_text(chat)
    assert "ollama pull qwen3" in text
    assert_plain(text)
    assert_recovers(running_app, page, "hi, tabby", "ollama pull tabby:7b", "hi again")


def test_an_error_line_mid_stream_is_shown_and_the_partial_answer_kept(running_app, page):
    running_app.ollama.script(
        Turn(Text("The first half of a fine answer"), ErrorLine("model runner has unexpectedly stopped"), chunk_size=8)
    )
    chat, _, _ = page.send("tell me something")
    text = chat_text(chat)
    assert "The first half of a fine answer" in text
    assert "model runner has unexpectedly stopped" in text
    assert_plain(text)
    assert_recovers(running_app, page, "tell me something", "The first half of a fine answer")


def test_a_dropped_connection_keeps_the_partial_answer(running_app, page):
    running_app.ollama.script(Turn(Text("Half a thought before the line"), Drop(), chunk_size=8))
    chat, _, _ = page.send("think aloud")
    text = chat_text(chat)
    assert "Half a thought before the line" in text
    assert "broke off" in text
    assert_plain(text)
    assert_recovers(running_app, page, "think aloud", "Half a thought before the line")


def test_a_stall_past_the_read_timeout_is_reported(running_app, page):
    assert running_app.settings.read_timeout == 5
    running_app.ollama.script(Turn(Text("Slow start"), Stall(7), Text(" never arrives")))
    chat, _, _ = page.send("take your time")
    text = chat_text(chat)
    assert "Slow start" in text
    assert "never arrives" not in text
    assert "stopped answering for 5 s" in text
    assert_plain(text)
    assert_recovers(running_app, page, "take your time", "Slow start")


@tool(risky=False)
def explode_for_test(ctx: ToolContext) -> str:
    """Fails on purpose (test only)."""
    raise RuntimeError("the test tool blew up")


@pytest.mark.parametrize("app_options", [{"tools": ToolRegistry([*builtin_tools(), tool_of(explode_for_test)])}])
def test_a_tool_that_raises_becomes_a_result_and_the_model_goes_on(running_app, page):
    exploding_tool = explode_for_test.__name__
    running_app.ollama.script(
        Turn(Text("Trying the risky gadget.\n"), Text(tool_call_text(exploding_tool, {}))),
        reply("That tool failed, sorry."),
    )
    chat, _, _ = page.send("use the gadget")
    text = chat_text(chat)
    assert "That tool failed, sorry." in text
    assert f"{exploding_tool} failed unexpectedly" in text
    assert "the test tool blew up" in text
    assert_plain(text)
    told = running_app.ollama.chat_requests[-1]["messages"][-1]["content"]
    assert "the test tool blew up" in told
    assert_recovers(running_app, page, "use the gadget", "Trying the risky gadget.")


def processes_running(fragment):
    """Command lines of live processes containing `fragment` (zombies have none)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            command = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:  # the process ended while we looked
            continue
        if fragment in command:
            found.append(command)
    return found


def test_a_shell_command_that_times_out_leaves_no_process_behind(running_app, page):
    nap = "sleep 1000.4321"  # a duration nothing else uses, so its processes are surely this test's
    command = f"({nap} & {nap}) & {nap}"  # two grandchildren in a subshell, and a child
    running_app.ollama.script(
        Text(tool_call_text("run_shell", {"command": command, "timeout": 1})), reply("It ran out of time.")
    )
    page.send("nap for a while")
    assert page.card_details() == command
    chat, _, _ = page.approve()
    text = chat_text(chat)
    assert "timed out after 1 s" in text
    assert "It ran out of time." in text
    assert_plain(text)
    deadline = time.monotonic() + 30
    while processes_running(nap) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_running(nap) == []
    assert_recovers(running_app, page, "nap for a while")


def test_a_5_mb_tool_result_is_capped_and_the_page_stays_light(running_app, page):
    command = "head -c 5000000 /dev/zero | tr '\\0' a"
    running_app.ollama.script(Text(tool_call_text("run_shell", {"command": command})), reply("That was a lot of a."))
    page.send("print five million a")
    chat, _, _ = page.approve()
    assert "That was a lot of a." in chat_text(chat)
    told = running_app.ollama.chat_requests[-1]["messages"][-1]["content"]
    assert len(told) <= running_app.settings.max_tool_output + 1_000
    assert "cut" in told
    assert len(json.dumps(chat)) < 100_000  # the page gets a trimmed view, not 5 MB
    assert_recovers(running_app, page, "print five million a")


def test_a_1_mb_tool_call_argument_is_written_exactly(running_app, page):
    line = 'line {:06d}: "quotes", \\back\\slashes, tabs\t, cats 🐱, and a fake </tool_call> end tag\n'
    content = "".join(line.format(i) for i in range(12_000))[: 1024 * 1024]
    call = tool_call_text("write_file", {"path": "big.txt", "content": content})
    running_app.ollama.script(Turn(Text("Writing it.\n"), Text(call), chunk_size=4096), reply("Written."))
    _chat, card, _details = page.send("save the big file")
    assert "big.txt" in card
    assert not (running_app.workspace / "big.txt").exists()
    chat, _, _ = page.approve()
    assert "Written." in chat_text(chat)
    assert (running_app.workspace / "big.txt").read_text() == content
    assert len(json.dumps(chat)) < 100_000  # the panel shows a view of the call, not the whole megabyte
    assert_recovers(running_app, page, "save the big file")


def reopen(url, key):
    """The same browser after a reload: a new connection that brings its stored owner key."""
    client = owners_client(url)
    stored = client.view_api(print_info=False, return_format="dict")["named_endpoints"]["/on_load"]
    return client, [key, *[""] * (len(stored["parameters"]) - 1)]


def test_a_reload_during_a_stream_reattaches_and_the_answer_completes(running_app, page):
    words = " ".join(f"w{i:03d}" for i in range(300))
    running_app.ollama.script(reply(words + " THE-END", chunk_size=6, delay=0.01))
    job = page.client.submit(page.key, "count slowly", api_name="/on_send")
    deadline = time.monotonic() + 10
    while not any("w010" in chat_text(screen(values)[0]) for values in job.outputs()):
        assert time.monotonic() < deadline, "the answer never got going"
        time.sleep(0.05)
    client, stored = reopen(running_app.url, page.key)  # the page reloads while the answer streams
    chat, _card, _details = screen(client.predict(*stored, api_name="/on_load"))
    text = chat_text(chat)
    assert "count slowly" in text
    assert "THE-END" in text  # the reloaded page followed the answer to its end
    assert len(running_app.ollama.chat_requests) == 1  # re-attached, not asked again
    assert_plain(text)


def test_a_restart_with_a_pending_approval_then_approve(running_app, page):
    running_app.ollama.script(
        Text(tool_call_text("write_file", {"path": "kept.md", "content": "through a restart"})), reply("Saved.")
    )
    _chat, card, _details = page.send("save it")
    assert "kept.md" in card
    running_app.restart()
    client, stored = reopen(running_app.url, page.key)
    _chat, card, _details = screen(client.predict(*stored, api_name="/on_load"))
    assert "kept.md" in card
    assert client.predict(page.key, api_name="/show_card_details") == "through a restart"
    chat, card, _details = screen(client.predict(page.key, "", api_name="/on_approve"))
    assert (running_app.workspace / "kept.md").read_text() == "through a restart"
    assert "Saved." in chat_text(chat)
    assert card == ""
