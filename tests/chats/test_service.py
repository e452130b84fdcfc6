"""ChatService: ownership and every page action, against the scripted model server with real tools."""

import json
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from meowgent.agent.loop import Agent
from meowgent.chats.errors import ChatError, ChatErrorKind
from meowgent.chats.service import TITLE_CHARS, ChatService
from meowgent.config import Settings
from meowgent.conversation import Decision
from meowgent.events import ApprovalNeeded, Done, ErrorEvent, ToolResult, UserMessage
from meowgent.llm.client import OllamaClient
from meowgent.persist.store import Store
from meowgent.policy.rules import Policy, Rule
from meowgent.policy.scopes import Scope
from meowgent.tools.registry import ExternalTool, ToolRegistry
from meowgent.ui.state.render import ChatView
from tests.sandboxing import GREETING, fetch, needs_sandbox
from tests.scripted_ollama import ScriptedOllama, Stall, Text, Turn, reply, tool_call_text

ALICE, BOB = "browser:alice", "browser:bob"
UNAVAILABLE, NOT_WAITING, BUSY = ChatErrorKind.UNAVAILABLE, ChatErrorKind.NOT_WAITING, ChatErrorKind.BUSY


def refused_with(kind):
    """pytest.raises for a ChatError of `kind` (the page words it: tests/ui/test_i18n.py)."""
    return pytest.raises(ChatError, check=lambda error: error.kind == kind)


def make_service(server, workspace, *, rules=(), store=None, **options):
    """A real ChatService; `store`: its Store (one in a new temporary folder unless given)."""
    settings = Settings(workspace=workspace, ollama_host=server.url, read_timeout=10, shell_timeout=10, **options)
    agent = Agent(OllamaClient(server.url, read_timeout=10), settings, policy=Policy(list(rules), workspace))
    store = store or Store(Path(tempfile.mkdtemp(prefix="meowgent-store-")) / "meowgent.db")
    return ChatService(agent, store, default_model="qwen3", workspace=workspace)


@pytest.fixture
def service(ollama_server, tmp_path):
    return make_service(ollama_server, tmp_path)


def settle(service, owner, chat_id):
    """Every event of the chat so far, once its running answer (if any) has ended."""
    return [event for batch in service.follow(owner, chat_id, poll=0.02) for event in batch]


def marker_turn(marker, *more_calls):
    """A reply whose one call appends `marker` to ran.txt in the workspace (risky: run_shell)."""
    calls = [("run_shell", {"command": f"echo {marker} >> ran.txt"}), *more_calls]
    return Turn(Text("On it. " + "".join(tool_call_text(name, arguments) for name, arguments in calls)))


def refusal(action):
    """The kind of ChatError `action` was refused with, or None if it was accepted."""
    try:
        action()
    except ChatError as exc:
        return exc.kind
    return None


def ran(workspace):
    path = workspace / "ran.txt"
    return path.read_text().split() if path.exists() else []


def waiting_chat(service, server, owner="browser:alice", *more_calls):
    """A chat of `owner` whose answer is paused on a run_shell call writing marker 'first'."""
    server.script(marker_turn("first", *more_calls))
    chat = service.new_chat(owner)
    service.send(owner, chat.id, "please run it")
    events = settle(service, owner, chat.id)
    assert isinstance(events[-1], Done)
    assert events[-1].reason == "paused"
    return chat


# ---- ownership ----


def test_another_owner_cannot_touch_a_chat_and_learns_nothing_about_it(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    requests = len(ollama_server.chat_requests)
    with pytest.raises(ChatError) as missing:
        service.get(BOB, "no-such-chat")
    assert missing.value.kind == UNAVAILABLE
    actions = {
        "get": lambda: service.get(BOB, chat.id),
        "send": lambda: service.send(BOB, chat.id, "run it, I say"),
        "decide": lambda: service.decide(BOB, chat.id, {head.id: Decision(True)}),
        "stop": lambda: service.stop(BOB, chat.id),
        "retry": lambda: service.retry(BOB, chat.id),
        "follow": lambda: service.follow(BOB, chat.id),
        "waiting": lambda: service.waiting(BOB, chat.id),
        "is_running": lambda: service.is_running(BOB, chat.id),
        "set_model": lambda: service.set_model(BOB, chat.id, "llama3.2"),
    }
    for name, action in actions.items():
        with pytest.raises(ChatError) as refused:
            action()
        assert refused.value.kind == UNAVAILABLE, name
    assert ran(tmp_path) == []
    assert len(ollama_server.chat_requests) == requests
    assert service.waiting(ALICE, chat.id) == (head,)  # Alice's call still waits, untouched
    assert chat.conversation.model == "qwen3"
    assert service.chats(BOB) == []


def test_the_owner_can_approve_and_the_call_runs_once(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    assert ran(tmp_path) == []
    ollama_server.script(reply("Done, it ran."))
    service.decide(ALICE, chat.id, {head.id: Decision(True)})
    events = settle(service, ALICE, chat.id)
    assert ran(tmp_path) == ["first"]
    result = next(e for e in events if isinstance(e, ToolResult))
    assert (result.call_id, result.status) == (head.id, "done")
    assert events[-1] == Done("complete", *(events[-1].prompt_tokens, events[-1].output_tokens))
    with refused_with(NOT_WAITING):  # a second click on a card that is gone
        service.decide(ALICE, chat.id, {head.id: Decision(True)})
    assert ran(tmp_path) == ["first"]


# ---- deciding ----


def test_a_decision_must_name_the_call_at_the_head_of_the_queue(service, ollama_server, tmp_path):
    second = ("run_shell", {"command": "echo second >> ran.txt"})
    chat = waiting_chat(service, ollama_server, ALICE, second)
    head, after = service.waiting(ALICE, chat.id)
    requests = len(ollama_server.chat_requests)
    for decisions in (
        {after.id: Decision(True)},
        {"call_forged000": Decision(True)},
        {head.id: Decision(True), "call_forged000": Decision(True)},
        {},
    ):
        with pytest.raises(ChatError) as refused:
            service.decide(ALICE, chat.id, decisions)
        assert refused.value.kind == NOT_WAITING
        assert not service.is_running(ALICE, chat.id)
    assert ran(tmp_path) == []
    assert len(ollama_server.chat_requests) == requests
    assert service.waiting(ALICE, chat.id) == (head, after)

    service.decide(ALICE, chat.id, {head.id: Decision(True)})
    events = settle(service, ALICE, chat.id)
    assert ran(tmp_path) == ["first"]  # only the head: the second call waits for its own decision
    assert service.waiting(ALICE, chat.id) == (after,)
    assert isinstance(events[-2], ApprovalNeeded)
    assert events[-2].calls == (after,)


def test_a_rejected_call_does_not_run_and_the_model_hears_why(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    ollama_server.script(reply("All right, I won't."))
    service.decide(ALICE, chat.id, {head.id: Decision(False, "not on a Friday")})
    events = settle(service, ALICE, chat.id)
    assert ran(tmp_path) == []
    assert [(e.call_id, e.status) for e in events if isinstance(e, ToolResult)] == [(head.id, "rejected")]
    told = [m for m in ollama_server.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert "not on a Friday" in told[-1]["content"]


def test_deciding_or_sending_while_an_answer_runs_is_refused(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    ollama_server.script(Turn(Text("Working"), Stall(1.5), Text(" on it.")))
    service.decide(ALICE, chat.id, {head.id: Decision(True)})
    assert service.is_running(ALICE, chat.id)
    assert service.waiting(ALICE, chat.id) == ()
    with pytest.raises(ChatError) as refused:
        service.decide(ALICE, chat.id, {head.id: Decision(True)})
    assert refused.value.kind == NOT_WAITING
    with pytest.raises(ChatError) as busy:
        service.send(ALICE, chat.id, "and another thing")
    assert busy.value.kind == BUSY
    with pytest.raises(ChatError) as busy_retry:
        service.retry(ALICE, chat.id)
    assert busy_retry.value.kind == BUSY
    events = settle(service, ALICE, chat.id)
    assert ran(tmp_path) == ["first"]
    assert [e.text for e in events if isinstance(e, UserMessage)] == ["please run it"]
    assert events[-1].reason == "complete"


def test_stop_ends_a_running_answer(service, ollama_server):
    ollama_server.script(reply("word " * 300, chunk_size=5, delay=0.01))
    chat = service.new_chat(ALICE)
    assert service.stop(ALICE, chat.id) is False  # nothing runs yet
    service.send(ALICE, chat.id, "talk")
    time.sleep(0.2)
    assert service.stop(ALICE, chat.id) is True
    events = settle(service, ALICE, chat.id)
    assert events[-1].reason == "stopped"
    assert not service.is_running(ALICE, chat.id)


# ---- sending ----


def test_a_new_message_rejects_the_waiting_call_and_tells_the_model(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    ollama_server.script(reply("Sure, a joke instead."))
    service.send(ALICE, chat.id, "never mind, tell a joke")
    events = settle(service, ALICE, chat.id)
    assert ran(tmp_path) == []
    assert [(e.call_id, e.status) for e in events if isinstance(e, ToolResult)] == [(head.id, "rejected")]
    sent = ollama_server.chat_requests[-1]["messages"]
    tool = next(m for m in sent if m["role"] == "tool")
    assert "new message instead of approving" in tool["content"]
    assert sent[-1] == {"role": "user", "content": "never mind, tell a joke"}
    assert service.waiting(ALICE, chat.id) == ()
    with refused_with(NOT_WAITING):
        service.decide(ALICE, chat.id, {head.id: Decision(True)})
    assert ran(tmp_path) == []


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_an_empty_message_is_refused(service, ollama_server, text):
    chat = service.new_chat(ALICE)
    with pytest.raises(ChatError) as refused:
        service.send(ALICE, chat.id, text)
    assert refused.value.kind == ChatErrorKind.TYPE_FIRST
    assert not service.is_running(ALICE, chat.id)
    assert ollama_server.chat_requests == []
    assert chat.title == "New chat"


def test_the_title_comes_from_the_first_message(service, ollama_server):
    chat = service.new_chat(ALICE)
    assert chat.title == "New chat"
    service.send(ALICE, chat.id, "  Plan a weekend in Kyoto\nwith temples and tea  ")
    settle(service, ALICE, chat.id)
    assert chat.title == "Plan a weekend in Kyoto"
    service.send(ALICE, chat.id, "Something else entirely")
    settle(service, ALICE, chat.id)
    assert chat.title == "Plan a weekend in Kyoto"

    long = service.new_chat(ALICE)
    service.send(ALICE, long.id, "x" * 100)
    settle(service, ALICE, long.id)
    assert long.title == "x" * TITLE_CHARS


def test_chats_are_listed_newest_first_and_only_the_owners(service, ollama_server):
    first = service.new_chat(ALICE)
    time.sleep(0.01)
    second = service.new_chat(ALICE)
    time.sleep(0.01)
    theirs = service.new_chat(BOB)
    assert [c.id for c in service.chats(ALICE)] == [second.id, first.id]
    time.sleep(0.01)
    service.send(ALICE, first.id, "hello again")  # activity moves a chat to the top
    settle(service, ALICE, first.id)
    assert [c.id for c in service.chats(ALICE)] == [first.id, second.id]
    assert [c.id for c in service.chats(BOB)] == [theirs.id]


def test_delete_stops_the_answer_and_removes_the_chat_for_good(service, ollama_server):
    ollama_server.script(reply("word " * 300, chunk_size=5, delay=0.01))
    running = service.new_chat(ALICE)
    theirs = service.new_chat(BOB)
    service.send(ALICE, running.id, "talk for a while")
    follower = service.follow(ALICE, running.id, poll=0.02)
    seen = next(follower)  # a page attached before the chat was deleted
    with refused_with(UNAVAILABLE):
        service.delete(BOB, running.id)
    service.delete(ALICE, running.id)
    assert running.id not in [c.id for c in service.chats(ALICE)]
    with refused_with(UNAVAILABLE):
        service.get(ALICE, running.id)
    seen += [event for batch in follower for event in batch]
    assert seen[-1].reason == "stopped"
    assert [c.id for c in service.chats(BOB)] == [theirs.id]


def test_a_deleted_chat_is_told_to_its_listeners_once_it_is_gone_and_a_refused_delete_is_not(service):
    deleted = []
    service.on_delete(lambda chat_id: deleted.append((chat_id, [c.id for c in service.chats(ALICE)])))
    chat = service.new_chat(ALICE)
    with refused_with(UNAVAILABLE):
        service.delete(BOB, chat.id)
    assert deleted == []
    service.delete(ALICE, chat.id)
    assert deleted == [(chat.id, [])]


def test_retry_drops_the_waiting_call_and_answers_again(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (old,) = service.waiting(ALICE, chat.id)
    ollama_server.script(marker_turn("second"))
    service.retry(ALICE, chat.id)
    settle(service, ALICE, chat.id)
    (new,) = service.waiting(ALICE, chat.id)
    assert new.id != old.id
    assert new.arguments["command"] == "echo second >> ran.txt"
    with refused_with(NOT_WAITING):
        service.decide(ALICE, chat.id, {old.id: Decision(True)})
    assert ran(tmp_path) == []
    assert [m["content"] for m in chat.conversation.messages if m["role"] == "user"] == ["please run it"]


def test_after_retry_no_panel_still_waits_for_an_approval_that_is_gone(service, ollama_server):
    chat = waiting_chat(service, ollama_server, ALICE)
    (old,) = service.waiting(ALICE, chat.id)
    ollama_server.script(reply("A fresh answer without tools."))
    service.retry(ALICE, chat.id)
    view = ChatView()
    events = settle(service, ALICE, chat.id)
    for event in events:
        view.apply(event)
    assert service.waiting(ALICE, chat.id) == ()
    assert [e.not_run for e in events if isinstance(e, ToolResult)] == ["new_answer"]
    panels = [m for m in view.messages() if m.metadata.get("id")]
    assert [p.metadata["id"] for p in panels] == [old.id]
    assert panels[0].metadata.get("log") != "waiting for your approval"
    assert panels[0].metadata["status"] == "done"


def test_a_call_passed_over_by_a_new_message_is_audited_as_not_decided(service, ollama_server):
    chat = waiting_chat(service, ollama_server, ALICE)
    ollama_server.script(reply("Something else, then."))
    service.send(ALICE, chat.id, "never mind")
    settle(service, ALICE, chat.id)
    assert [(row.decision, row.outcome) for row in service.audit(ALICE, chat.id)] == [("not_decided", "rejected")]


def test_retry_with_nothing_to_answer_says_so(service, ollama_server):
    chat = service.new_chat(ALICE)
    service.retry(ALICE, chat.id)
    events = settle(service, ALICE, chat.id)
    assert [e.kind for e in events if isinstance(e, ErrorEvent)] == ["nothing_to_retry"]
    assert ollama_server.chat_requests == []


# ---- the invariant: no risky call runs without a matching approval from the owning session ----

ACTIONS = (
    "send",
    "approve",
    "approve",
    "approve",
    "approve_stale",
    "approve_as_other",
    "approve_edited_to_denied",
    "allow_for_chat",
    "reject",
    "stop",
    "retry",
)
"""Approving is weighted up so most examples run calls; the others race it."""
DENY_TOUCH = Rule("run_shell", "deny", command="touch *")


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from(ACTIONS), st.sampled_from([True, True, True, False])), min_size=3, max_size=14),
    st.randoms(use_true_random=False),
)
def test_no_risky_call_runs_without_the_owners_approval(steps, rnd):
    """Any mix of page actions, settled or racing the running answer; the files say what really ran.

    Allowed to run: a call the owner approved, or any `echo` call once the owner allowed `echo` commands for
    the chat. Never allowed: anything the rules deny, however it was approved or edited.
    """
    with tempfile.TemporaryDirectory() as folder, ScriptedOllama() as server:
        workspace = Path(folder)
        service = make_service(server, workspace, rules=[DENY_TOUCH])
        chat = service.new_chat(ALICE)
        approved: dict[str, str] = {}  # call id -> its marker, taken from waiting() when the owner decided
        before_scope: list[str] | None = None  # what had run when the owner allowed echo commands for the chat
        resolved: set[str] = set()  # ids that got a result: they can never wait again
        for step, (action, wait) in enumerate([("send", True), *steps]):
            # Every model reply is a risky call with a fresh marker; every third also tries a denied command.
            marker = uuid.uuid4().hex
            denied = ("run_shell", {"command": f"touch denied-{marker}"})
            server.script(marker_turn(marker, *([denied] if step % 3 == 2 else [])))
            waiting = service.waiting(ALICE, chat.id)
            head = waiting[0] if waiting else None
            if action == "send":
                assert refusal(lambda: service.send(ALICE, chat.id, "go on")) in (None, BUSY)
            elif action == "retry":
                assert refusal(lambda: service.retry(ALICE, chat.id)) in (None, BUSY)
            elif action == "stop":
                service.stop(ALICE, chat.id)
            elif action in ("approve", "reject", "allow_for_chat"):
                if head is None:
                    with refused_with(NOT_WAITING):
                        service.decide(ALICE, chat.id, {})
                else:
                    scope = Scope("run_shell", prefix="echo") if action == "allow_for_chat" else None
                    if scope is not None and before_scope is None:
                        before_scope = ran(workspace)  # stable: a decision is only taken while nothing runs
                    service.decide(ALICE, chat.id, {head.id: Decision(action != "reject", scope=scope)})
                    if action != "reject":
                        approved[head.id] = head.arguments["command"].split()[1]
            elif action == "approve_edited_to_denied" and head is not None:
                edit = Decision(True, arguments={"command": f"touch denied-edit-{marker}"})
                with refused_with(ChatErrorKind.EDIT_DENIED):
                    service.decide(ALICE, chat.id, {head.id: edit})
            elif action == "approve_stale":
                stale = rnd.choice([*sorted(resolved), f"call_{uuid.uuid4().hex[:12]}"])
                with refused_with(NOT_WAITING):
                    service.decide(ALICE, chat.id, {stale: Decision(True)})
            elif action == "approve_as_other":
                target = head.id if head else rnd.choice([*sorted(resolved), "call_forged0000"])
                with refused_with(UNAVAILABLE):
                    service.decide(BOB, chat.id, {target: Decision(True)})
            if wait:
                events = settle(service, ALICE, chat.id)
                resolved |= {e.call_id for e in events if isinstance(e, ToolResult)}
        events = settle(service, ALICE, chat.id)
        assert not list(workspace.glob("denied-*")), "a command the rules deny ran"
        markers = Counter(ran(workspace))
        unscoped = markers if before_scope is None else Counter(before_scope)
        assert set(unscoped) <= set(approved.values()), "a call ran that the owner never approved"
        assert all(count == 1 for count in markers.values()), f"an approved call ran more than once: {markers}"


def test_the_invariant_harness_sees_approved_calls_run(tmp_path):
    """The property above would pass vacuously if nothing ever ran; this pins the happy path it relies on."""
    with ScriptedOllama() as server:
        service = make_service(server, tmp_path)
        chat = service.new_chat(ALICE)
        server.script(marker_turn("aaa"), marker_turn("bbb"))
        service.send(ALICE, chat.id, "go")
        settle(service, ALICE, chat.id)
        (head,) = service.waiting(ALICE, chat.id)
        service.decide(ALICE, chat.id, {head.id: Decision(True)})
        settle(service, ALICE, chat.id)
        assert ran(tmp_path) == ["aaa"]
        (nxt,) = service.waiting(ALICE, chat.id)
        assert nxt.arguments["command"] == "echo bbb >> ran.txt"


def test_every_call_is_kept_with_its_status_arguments_result_and_timing(service, ollama_server):
    def stored_calls():
        return json.loads(service.export(ALICE, chat.id).to_json())["tool_calls"]

    chat = waiting_chat(service, ollama_server, ALICE)
    (call,) = service.waiting(ALICE, chat.id)
    assert [(row["call_id"], row["status"]) for row in stored_calls()] == [(call.id, "pending")]
    ollama_server.script(reply("Done."))
    service.decide(ALICE, chat.id, {call.id: Decision(True)})
    settle(service, ALICE, chat.id)
    (row,) = stored_calls()
    assert row["status"] == "done"
    assert row["arguments"] == call.arguments
    assert row["result"].startswith("$ ")
    assert row["started"] <= row["finished"]


# ---- network for commands ----


def fetching_chat(service, server, port, owner=ALICE):
    """A chat paused on a run_shell call that fetches from the host's 127.0.0.1:port with bash alone."""
    server.script(Turn(Text("Fetching. " + tool_call_text("run_shell", {"command": fetch(port)}))))
    chat = service.new_chat(owner)
    service.send(owner, chat.id, "fetch it")
    settle(service, owner, chat.id)
    return chat


def decide_and_result(service, server, chat, decision, **options):
    (head,) = service.waiting(ALICE, chat.id)
    server.script(reply("Done."))
    service.decide(ALICE, chat.id, {head.id: decision}, **options)
    return [e for e in settle(service, ALICE, chat.id) if isinstance(e, ToolResult)][-1].output


@needs_sandbox
def test_network_is_the_persons_choice_for_one_command_or_for_the_chat(ollama_server, host_server, tmp_path):
    service = make_service(ollama_server, tmp_path, allow_private_fetch=True)  # the server is on 127.0.0.1
    chat = fetching_chat(service, ollama_server, host_server)
    assert GREETING in decide_and_result(service, ollama_server, chat, Decision(True, network=("127.0.0.1",)))
    assert service.network(ALICE, chat.id) == ()  # that command only

    ollama_server.script(Turn(Text(tool_call_text("run_shell", {"command": fetch(host_server)}))))
    service.send(ALICE, chat.id, "again")
    settle(service, ALICE, chat.id)
    assert "Connection refused" in decide_and_result(service, ollama_server, chat, Decision(True))

    ollama_server.script(Turn(Text(tool_call_text("run_shell", {"command": fetch(host_server)}))))
    service.send(ALICE, chat.id, "and again")
    settle(service, ALICE, chat.id)
    reached = decide_and_result(service, ollama_server, chat, Decision(True), chat_network=("*",))
    assert GREETING in reached
    assert "network: reached 127.0.0.1" in reached
    assert service.network(ALICE, chat.id) == ("*",)
    audit = service.audit(ALICE, chat.id)
    assert [(row.network, row.hosts, row.reached) for row in audit] == [
        (True, ["127.0.0.1"], ["127.0.0.1"]),
        (False, None, None),
        (True, ["*"], ["127.0.0.1"]),
    ]


def test_the_card_offers_the_hosts_the_rules_and_the_chats_scopes_allow(ollama_server, tmp_path):
    rules = [Rule("web_fetch", "allow", host="*.python.org"), Rule("web_fetch", "ask", host="x.com")]
    service = make_service(ollama_server, tmp_path, rules=rules)
    chat = service.new_chat(ALICE)
    assert service.known_hosts(ALICE, chat.id) == ("*.python.org",)
    service.allow(ALICE, chat.id, Scope("web_fetch", host="pypi.org"))
    assert service.known_hosts(ALICE, chat.id) == ("*.python.org", "pypi.org")


def test_only_the_owner_turns_a_chats_network_on_or_off_and_it_is_kept(ollama_server, tmp_path):
    store = Store(tmp_path / "data" / "meowgent.db")
    settings = Settings(workspace=tmp_path, ollama_host=ollama_server.url, read_timeout=10)
    agent = Agent(OllamaClient(ollama_server.url, read_timeout=10), settings, policy=Policy([], tmp_path))
    service = ChatService(agent, store, default_model="qwen3", workspace=tmp_path)
    chat = service.new_chat(ALICE)
    assert refusal(lambda: service.set_network(BOB, chat.id, ("*",))) == UNAVAILABLE
    assert refusal(lambda: service.network(BOB, chat.id)) == UNAVAILABLE
    service.set_network(ALICE, chat.id, ("pypi.org",))
    reloaded = ChatService(agent, store, default_model="qwen3", workspace=tmp_path)
    assert reloaded.network(ALICE, chat.id) == ("pypi.org",)
    reloaded.set_network(ALICE, chat.id, ())
    assert ChatService(agent, store, default_model="qwen3", workspace=tmp_path).network(ALICE, chat.id) == ()


def test_rejecting_never_turns_the_chats_network_on(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (head,) = service.waiting(ALICE, chat.id)
    ollama_server.script(reply("All right."))
    service.decide(ALICE, chat.id, {head.id: Decision(False)}, chat_network=("*",))
    settle(service, ALICE, chat.id)
    assert service.network(ALICE, chat.id) == ()
    assert [row.network for row in service.audit(ALICE, chat.id)] == [None]  # nothing ran


# ---- the audit trail ----


def test_the_audit_trail_says_who_decided_what_about_each_risky_call(service, ollama_server, tmp_path):
    chat = waiting_chat(service, ollama_server, ALICE)
    (first,) = service.waiting(ALICE, chat.id)
    ollama_server.script(Turn(Text(tool_call_text("run_shell", {"command": "echo second"}))), reply("Both ran."))
    echo = Scope("run_shell", prefix="echo")
    service.decide(ALICE, chat.id, {first.id: Decision(True, scope=echo)}, account="alice")
    settle(service, ALICE, chat.id)
    ollama_server.script(Turn(Text(tool_call_text("run_shell", {"command": "touch third"}))), reply("Fine."))
    service.send(ALICE, chat.id, "one more")
    settle(service, ALICE, chat.id)
    (third,) = service.waiting(ALICE, chat.id)
    service.decide(ALICE, chat.id, {third.id: Decision(False, "not that one")})
    settle(service, ALICE, chat.id)
    assert ran(tmp_path) == ["first"]
    trail = [
        (row.proposed["command"], row.decision, row.scope, row.chat_scope, row.decided_by, row.account, row.outcome)
        for row in service.audit(ALICE, chat.id)
    ]
    assert trail == [
        ("echo first >> ran.txt", "approved", "for_chat", asdict(echo), "account", "alice", "done"),
        ("echo second", "allowed", "rules_or_chat", None, "owner", "", "done"),
        ("touch third", "rejected", "once", None, "owner_browser", "", "rejected"),
    ]
    assert service.audit(ALICE, chat.id)[-1].reason == "not that one"
    exported = json.loads(service.export(ALICE, chat.id).to_json())
    assert [entry["decision"] for entry in exported["audit"]] == ["approved", "allowed", "rejected"]
    assert [call["status"] for call in exported["tool_calls"]] == ["done", "done", "rejected"]


def test_a_call_whose_mcp_server_went_away_while_it_waited_is_still_audited(ollama_server, tmp_path):
    registry = ToolRegistry.builtins()
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    registry.register_external(
        [ExternalTool("calc__add", "Add.", schema, lambda context, **a: "2", group="calc")], group="calc"
    )
    settings = Settings(workspace=tmp_path, ollama_host=ollama_server.url, read_timeout=10)
    policy = Policy([], tmp_path, tools=registry)
    agent = Agent(OllamaClient(ollama_server.url, read_timeout=10), settings, policy=policy, tools=registry)
    service = ChatService(agent, Store(tmp_path / "data" / "meowgent.db"), default_model="qwen3", workspace=tmp_path)
    ollama_server.script(Turn(Text(tool_call_text("calc__add", {"n": 1}))), reply("It is gone."))
    chat = service.new_chat(ALICE)
    service.send(ALICE, chat.id, "add one")
    settle(service, ALICE, chat.id)
    (call,) = service.waiting(ALICE, chat.id)
    registry.unregister_group("calc")  # its server stopped
    service.decide(ALICE, chat.id, {call.id: Decision(True)})
    events = settle(service, ALICE, chat.id)
    assert [e.kind for e in events if isinstance(e, ErrorEvent)] == []
    assert [(row.tool, row.decision, row.outcome) for row in service.audit(ALICE, chat.id)] == [
        ("calc__add", "approved", "error")
    ]
