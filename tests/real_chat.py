"""A chat with a real model through the app's own API, as the page drives it: the person asks for a tool, approves
the call, and the model answers from the result, over several turns; each turn's outcome, and whose fault a failure
is.

    with running_server(engine, greedy=False) as url, Tap(root_of(url)) as tap:
        trial = run_trial(tap, model=engine.model.stem, speed=measure_speed(url), folder=tmp)

The app is served in this process (`meowgent.ui.app.serve`) against the server through a relay (bench/wiretap.py)
that keeps what the model wrote, and driven with gradio_client: `/on_send`, then `/on_approve` on the card, exactly
the events the page's buttons send. Deadlines come from the server's measured speed (tests/real_engine.py `Speed`),
not fixed seconds, so a busy machine is slower, not failed.
"""

from __future__ import annotations

import json
import re
import secrets
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradio_client import Client

from bench.wiretap import Tap
from meowgent.config import Settings
from meowgent.ui.app import serve
from meowgent.ui.html.safehtml import shown_text
from meowgent.ui.i18n import ENGLISH, t
from tests.real_engine import Speed
from tests.ui.conftest import OWNER, free_port, owners_client

CONTEXT = 4096
"""The server's window (`running_server(ctx=)`), what a small model's server is often started with."""
ANSWER_TOKENS = 256
"""The server's `-n`: the longest reply."""
NO_CALL, UNREADABLE, WRONG_TOOL, BAD_ARGS, CALLED_AGAIN, MISSED, APP_ERROR, TIMEOUT = (
    "no call",
    "call not JSON",
    "wrong tool",
    "bad arguments",
    "called again instead of answering",
    "answer misses the result",
    "app error",
    "timeout",
)
MODELS_FAULT = frozenset({NO_CALL, UNREADABLE, WRONG_TOOL, BAD_ARGS, CALLED_AGAIN, MISSED})
"""Outcomes where the app did its part (offered the tool, read the call, ran it, sent the result back)."""


@dataclass(frozen=True)
class Turn:
    ask: str
    """What the person writes."""
    tool: str
    """The tool that does it; its name in the model's call."""
    done: Callable[[Path], bool]
    """The call did what was asked (seen in the workspace)."""
    told: str
    """A word the answer must hold, which only the tool's result tells the model ("" for any answer in words)."""


def _has(name: str, word: str) -> Callable[[Path], bool]:
    return lambda workspace: (workspace / name).is_file() and word in (workspace / name).read_text()


SEEDED = "whiskers-{}.md"
"""A file the workspace holds before the chat, under a name the model cannot guess."""


def turns(seeded: str) -> tuple[Turn, ...]:
    write = "Use the write_file tool to create hello.txt containing the word meow."
    listing = "Use the run_shell tool to run ls, then tell me the names of the files in the folder."
    return (
        Turn(write, "write_file", _has("hello.txt", "meow"), ""),
        Turn(listing, "run_shell", lambda _workspace: True, seeded.removesuffix(".md")),
    )


@dataclass(frozen=True)
class Outcome:
    turn: int
    """From 1."""
    result: str
    """"ok", or one of the failures above."""
    detail: str = ""
    """What the model wrote (or the app said), shortened: the evidence for the cause."""

    @property
    def models_fault(self) -> bool:
        return self.result in MODELS_FAULT


@dataclass(frozen=True)
class Trial:
    outcomes: tuple[Outcome, ...]
    replies: int
    """Model replies the trial took."""

    @property
    def ok(self) -> bool:
        return all(outcome.result == "ok" for outcome in self.outcomes) and len(self.outcomes) > 1

    @property
    def failure(self) -> Outcome | None:
        return next((outcome for outcome in self.outcomes if outcome.result != "ok"), None)


def run_trial(
    tap: Tap, *, model: str, speed: Speed, folder: Path, last: int | None = None, answer_tokens: int = ANSWER_TOKENS
) -> Trial:
    """One chat in a fresh app (its data in `folder`): every turn of `turns` (up to the `last`th), until one fails;
    `answer_tokens` is the server's `-n`, which bounds a reply's time.

    The workspace is always `folder/workspace`, emptied first: the system prompt names it, and the same prompt lets
    the server reuse what it read of it in the last trial."""
    workspace = folder / "workspace"
    shutil.rmtree(workspace, ignore_errors=True)
    workspace.mkdir(parents=True)
    seeded = SEEDED.format(secrets.randbelow(9000) + 1000)
    (workspace / seeded).write_text("notes\n")
    reply_seconds = speed.reply_seconds(prompt_tokens=CONTEXT, output_tokens=answer_tokens)
    settings = Settings(
        workspace=workspace,
        openai_urls=(tap.url,),
        model=model,
        port=free_port(),
        data_dir=folder / f"data-{secrets.token_hex(4)}",
        read_timeout=reply_seconds,  # silence while a long prompt is read is not a stall
        token=OWNER,
    )
    demo, url, _ = serve(settings)
    try:
        chat = _Chat(owners_client(url), tap, workspace, reply_seconds)
        outcomes: list[Outcome] = []
        first = len(tap.replies)
        for number, turn in enumerate(turns(seeded)[:last], 1):
            outcomes.append(chat.turn(number, turn))
            if outcomes[-1].result != "ok":
                break
        return Trial(tuple(outcomes), len(tap.replies) - first)
    finally:
        demo.close()


class _Chat:
    """The page's events for one chat, and what the model wrote meanwhile."""

    def __init__(self, client: Client, tap: Tap, workspace: Path, reply_seconds: float) -> None:
        self._client = client
        self._tap = tap
        self._workspace = workspace
        self._reply_seconds = reply_seconds
        self._key = client.predict("", "", api_name="/on_load")[0]

    def turn(self, number: int, turn: Turn) -> Outcome:
        seen = len(self._tap.replies)
        screen = self._event("/on_send", turn.ask)
        if screen is None:
            return Outcome(number, TIMEOUT, "no card or answer in time")
        written = self._written(seen)
        if not screen.card:
            return Outcome(number, _missing_call(written, turn.tool, screen.error), screen.error or written)
        if turn.tool not in _called(written):
            return Outcome(number, WRONG_TOOL, written)
        seen = len(self._tap.replies)
        screen = self._event("/on_approve", "")
        if screen is None:
            return Outcome(number, TIMEOUT, "no answer in time after approval")
        since = self._written(seen)
        answer = self._written(len(self._tap.replies) - 1)  # calls that run unasked (reading a file) may come first
        if screen.error:  # the model's failure if the app said so (the evidence is then what it wrote)
            said = _said_of_model(screen.error)
            return Outcome(number, said or APP_ERROR, since if said else screen.error)
        if not turn.done(self._workspace):
            return Outcome(number, BAD_ARGS, written)
        if screen.card:
            return Outcome(number, CALLED_AGAIN, since)
        if not answer.strip() or _called(answer) or turn.told.lower() not in answer.lower():
            return Outcome(number, MISSED, since)
        return Outcome(number, "ok", answer)

    def _event(self, api: str, text: str) -> _Screen | None:
        """The last frame of the event, or None when it did not end in time (two replies: a call and an answer,
        or a call asked for again)."""
        job = self._client.submit(self._key, text, api_name=api)
        try:
            values = job.result(timeout=2 * self._reply_seconds)
        except TimeoutError:
            self._client.predict(self._key, api_name="/on_stop")
            return None
        return _Screen.of(values)

    def _written(self, since: int) -> str:
        """Everything the model wrote in the replies after the first `since`, joined."""
        return "\n".join("".join(reply.text) for reply in self._tap.replies[since:])


@dataclass(frozen=True)
class _Screen:
    card: str
    """The waiting call's card, as shown text ("" when nothing waits)."""
    error: str
    """The first error the chat shows (a ⚠️ line), or ""."""

    @classmethod
    def of(cls, values: Any) -> _Screen:
        chat, card = values[-8], values[-7]
        shown = [_message_text(message) for message in chat]
        error = next((line for text in shown for line in text.splitlines() if line.startswith("⚠️")), "")
        return cls(shown_text(card or "").strip(), error)


def _message_text(message: dict[str, Any]) -> str:
    content = message["content"]
    parts = [c.get("text", "") for c in content] if isinstance(content, list) else [str(content)]
    return shown_text("\n".join(parts))


_CALLED = re.compile(r'"name"\s*:\s*"([\w.-]+)"|\[call ([\w.-]+)\]')
"""A tool named in a call the model wrote: JSON's `"name": "…"`, or a native call's name as the relay notes it."""


def _called(written: str) -> set[str]:
    return {first or second for first, second in _CALLED.findall(written)}


_MODELS_FAULTS = {
    t(ENGLISH, "error_call_rejected").split(" (")[0]: BAD_ARGS,
    t(ENGLISH, "error_call_repeated"): CALLED_AGAIN,
}
"""The app's words when the model twice wrote a call it could not read, or made the same call again after being told
its result is above: the model's failures, which the app saw and said."""


def _said_of_model(error: str) -> str | None:
    return next((outcome for words, outcome in _MODELS_FAULTS.items() if words in error), None)


def _missing_call(written: str, tool: str, error: str) -> str:
    """No card came: the model wrote no call, named another tool (one that runs unasked, or none of ours), twice
    wrote one that cannot be read, or made one again; any other error, or a call to the tool the app did not take, is
    the app's."""
    called = _called(written)
    if error:
        return _said_of_model(error) or APP_ERROR
    if tool in called:  # the app did not take it: fair only if its JSON is no JSON
        return APP_ERROR if _is_json(written[written.find("{") : written.rfind("}") + 1]) else UNREADABLE
    return WRONG_TOOL if called else NO_CALL


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True
