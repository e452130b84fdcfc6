"""Runaway replies: what a model that streams on and on, floods calls or writes a 20 MB call costs the running app.

Run from the repository root: `python -m bench.bench_limits`.

The app runs in its own process with the default caps (Settings.max_reply_chars, max_call_chars,
max_calls_per_reply). Each case is one message sent through gradio_client, as a page would; the scripted model
answers it with the runaway reply. We read the app's resident memory from /proc and the size of its data folder
before and after: both must stay bounded by the caps, however long the model would have gone on.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from bench.bench_memory import rss_mb
from bench.load import OWNER_HEADERS, EchoingOllama, app_process, open_page
from bench.report import machine, table
from meowgent.config import Settings
from tests.scripted_ollama import Text, Turn, reply, tool_call_text

ENDLESS = "The cat sat on the mat and then it sat on the mat again. " * 400_000
"""About 23 MB: six times the reply cap, standing in for a model that never stops."""
FLOOD = 1_000
"""Calls in one reply."""
HUGE = 20_000_000
"""Characters of one write_file call's content."""

CASES = {
    "endless": ("a reply that streams 23 MB", Turn(Text(ENDLESS), chunk_size=256)),
    "flood": (
        f"{FLOOD:,} read_file calls in one reply",
        Turn(Text("".join(tool_call_text("read_file", {"path": "notes.md"}) for _ in range(FLOOD))), chunk_size=256),
    ),
    "huge": (
        "one 20 MB write_file call",
        Turn(Text(tool_call_text("write_file", {"path": "big.txt", "content": "m" * HUGE})), chunk_size=4096),
    ),
}


def respond(body: Mapping[str, Any]) -> Turn:
    """The runaway reply the person's message names; after tool results, a short final answer."""
    last = body["messages"][-1]
    if last["role"] != "user" or last["content"] not in CASES:
        return reply("Done.")
    return CASES[last["content"]][1]


def stored_mb(database: Path) -> float:
    """MB of the database's pages in use, after moving the write-ahead log into it (whose file size is a cache)."""
    with closing(sqlite3.connect(database, isolation_level=None)) as conn:
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        (pages,), (free,), (size,) = (conn.execute(f"PRAGMA {name}").fetchone() for name in _PAGES)
    return (pages - free) * size / 1e6


_PAGES = ("page_count", "freelist_count", "page_size")


def measure() -> tuple[list[dict[str, float]], bool]:
    """Per case: growth of memory and data folder, and seconds; and whether the big file was written."""
    rows = []
    with EchoingOllama(respond) as ollama, app_process(ollama.url) as app:
        from gradio_client import Client

        database = app.workspace.parent / "data" / "meowgent.db"
        client = Client(app.url, verbose=False, headers=OWNER_HEADERS)
        key = open_page(client)
        client.predict(key, "hello", api_name="/on_send")  # load what any first answer loads
        for case in CASES:
            rss, db = rss_mb(app.pid)[0], stored_mb(database)
            started = time.perf_counter()
            client.predict(key, case, api_name="/on_send")
            seconds = time.perf_counter() - started
            now, peak = rss_mb(app.pid)
            rows.append({"rss": now - rss, "peak": peak, "db": stored_mb(database) - db, "seconds": seconds})
        return rows, (app.workspace / "big.txt").exists()


def run() -> str:
    defaults = Settings()
    measured, written = measure()
    rows = [
        [label, f"{m['seconds']:.1f} s", f"+{m['rss']:.0f} MB (peak {m['peak']:.0f} MB)", f"+{m['db']:.1f} MB"]
        for (label, _), m in zip(CASES.values(), measured, strict=True)
    ]
    return (
        f"### Runaway replies against the running app ({machine()})\n\n"
        + table(
            ["the model sends", "until the page has the answer", "app memory (VmRSS)", "database (pages in use)"], rows
        )
        + f"\nDefault caps: {defaults.max_reply_chars:,} characters a reply, {defaults.max_call_chars:,} a call, "
        f"{defaults.max_calls_per_reply} calls a reply. The reply is cut at its cap and the stream closed; the flood "
        f"runs {defaults.max_calls_per_reply} calls and refuses the next; the big call is refused before it is shown "
        f"or run (big.txt written: {'yes' if written else 'no'}).\n"
    )


if __name__ == "__main__":
    print(run())
