"""Memory: resident size of the app idle, and with many open sessions each holding a long conversation.

Run from the repository root: `python -m bench.bench_memory`.

The app runs in its own process (bench.load.app_process) so only its memory is counted, read from
/proc/<pid>/status. Sessions are gradio_client clients, each its own owner and chat, driven concurrently against
a scripted model that answers every message at once with the same reply.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from bench.load import OWNER_HEADERS, EchoingOllama, app_process, chat_text, open_page, screen
from bench.report import machine, table
from tests.scripted_ollama import Turn, reply

SESSIONS = 20
SENDS = 100
"""Messages each session sends: with the answers, a 200-message conversation."""
QUESTION = "Tell me one more thing about cats, please; keep it short. "
ANSWER = (
    "Cats sleep twelve to sixteen hours a day, purr at about 25 to 150 Hz, and can rotate their ears 180 degrees. "
) * 4
"""About 450 characters (some 110 tokens): a short paragraph of an answer."""


def rss_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MB: resident now, and the peak so far."""
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("VmRSS", "VmHWM"):
                fields[name] = int(value.split()[0]) / 1024  # kB
    return fields["VmRSS"], fields["VmHWM"]


class Session:
    """One page's gradio_client session and owner key."""

    def __init__(self, url: str, index: int) -> None:
        from gradio_client import Client

        self.client = Client(
            url, verbose=False, ssl_verify=False, headers=OWNER_HEADERS
        )  # see bench.load.run_session for ssl_verify
        self.key = open_page(self.client)
        self.index = index

    def converse(self, numbers: range) -> tuple[int, int]:
        """Send one message per number; returns the questions and answers the chat shows at the end."""
        chat: list[dict] = []
        for number in numbers:
            values = self.client.predict(self.key, f"{QUESTION}({self.index}.{number})", api_name="/on_send")
            chat = screen(values)[0]
        # Other messages may be in the chat too, such as notes that old messages no longer fit the model's context.
        text = [(m["role"], chat_text([m])) for m in chat]
        # The page shows the answer as prose, which ends at its last word: the trailing space is not drawn.
        return sum(role == "user" and QUESTION in t for role, t in text), sum(ANSWER.rstrip() in t for _, t in text)


def measure(sessions: int = SESSIONS, sends: int = SENDS) -> dict[str, float]:
    """RSS in MB at each stage, with the seconds the conversations took."""
    answer: Turn = reply(ANSWER)
    half = sends // 2
    with EchoingOllama(lambda body: answer) as ollama, app_process(ollama.url) as app:
        rss = {"idle": rss_mb(app.pid)[0]}
        # The first page and answer load what stays loaded whatever the sessions: tools, caches.
        if (shown := Session(app.url, -1).converse(range(1))) != (1, 1):
            raise RuntimeError(f"the warm-up chat shows {shown} questions and answers, not one each")
        rss["warm"] = rss_mb(app.pid)[0]
        with ThreadPoolExecutor(sessions, thread_name_prefix="session") as pool:
            opened = list(pool.map(lambda i: Session(app.url, i), range(sessions)))
            rss["open"] = rss_mb(app.pid)[0]
            started = time.perf_counter()
            list(pool.map(lambda session: session.converse(range(half)), opened))
            rss["half"] = rss_mb(app.pid)[0]
            counts = list(pool.map(lambda session: session.converse(range(half, sends)), opened))
            rss["seconds"] = time.perf_counter() - started
        if counts != [(sends, sends)] * sessions:
            raise RuntimeError(f"every chat should show {sends} questions and answers; they show {counts}")
        rss["loaded"], rss["peak"] = rss_mb(app.pid)
    return rss


def run(*, quick: bool = False) -> str:
    sessions, sends = (5, 20) if quick else (SESSIONS, SENDS)
    m = measure(sessions, sends)
    half = sends // 2
    per_session = (m["loaded"] - m["warm"]) / sessions
    per_message = (m["loaded"] - m["half"]) / (sessions * 2 * (sends - half)) * 1024
    text = sessions * sends * (len(QUESTION) + 10 + len(ANSWER)) / 1e6
    rows = [
        ["idle: started, no page open", f"{m['idle']:.0f} MB"],
        ["warm: one page, one answer", f"{m['warm']:.0f} MB"],
        [f"{sessions} pages open, no messages", f"{m['open']:.0f} MB"],
        [f"{sessions} sessions × {2 * half} messages", f"{m['half']:.0f} MB"],
        [f"{sessions} sessions × {2 * sends} messages", f"{m['loaded']:.0f} MB (peak {m['peak']:.0f} MB)"],
        ["**per session** (last − warm) / sessions", f"**{per_session:.2f} MB**"],
        ["of which an open page without messages", f"{(m['open'] - m['warm']) / sessions:.2f} MB"],
        ["per message, over the second half", f"{per_message:.1f} KB"],
        ["text of all the conversations (UTF-8)", f"{text:.1f} MB"],
        ["time to hold the conversations", f"{m['seconds']:.0f} s ({sessions * sends / m['seconds']:.0f} answers/s)"],
    ]
    return (
        f"### Memory: app RSS with {sessions} open sessions of {2 * sends} messages ({machine()})\n\n"
        + table(["state", "resident memory (VmRSS)"], rows)
        + f"\nEach answer is {len(ANSWER)} characters, each question about {len(QUESTION) + 10}. RSS only grows when "
        "Python's allocator takes more pages, so small differences are coarse.\n"
    )


if __name__ == "__main__":
    print(run())
