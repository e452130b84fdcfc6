"""Watchers of one chat: 1, 10 and 50 viewers while the presenter's answer streams at 1,000 tokens/s.

Run from the repository root: `python -m bench.bench_watch`.

Each viewer is the watch page's own server-side stream (`viewer_stream`: the patch, its JSON, the SSE bytes) on
one asyncio loop, as uvicorn runs them; the network is left out. Measured in the same run for every row:
- the presenter's lag: from the answer's last event to its run returning (the run never waits on a viewer);
- the viewers' lag: from the last event to each viewer's stream carrying it (median and slowest);
- server CPU seconds for the whole answer (the run, the one feed, every viewer's stream), and per viewer against
  the row with no viewers;
- memory per viewer: what tracemalloc sees allocated for that many more viewers joining the finished chat.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import threading
import time
import tracemalloc
from pathlib import Path

from bench.report import machine, table
from meowgent.chats.runs import RunRegistry
from meowgent.events import Done, TextDelta, UserMessage
from meowgent.persist.store import Store
from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.routes.watchpage import WatchView
from meowgent.ui.routes.watchroutes import viewer_stream
from meowgent.watch.broadcast import Broadcasts
from meowgent.watch.links import WatchLinks

OWNER = "browser:presenter"
TOKENS_PER_SECOND = 1_000
SENTINEL = "ZZEND"
VIEWERS = (0, 1, 10, 50)
TARGET_LAG = 0.3


class AnyOwner:
    """The bench's one chat belongs to its presenter (ownership is tested in tests/watch)."""

    def get(self, owner: str, chat_id: str) -> None:
        return None


def links_of(chat_ids: list[str]) -> WatchLinks:
    """Links kept in a store of their own (in a temporary folder) that holds the bench's chats."""
    store = Store(Path(tempfile.mkdtemp(prefix="meowgent-bench-watch-")) / "meowgent.db")
    with store.transaction():
        for chat_id in chat_ids:
            store.create_conversation(chat_id, owner=OWNER, title="", model="", workspace="")
    return WatchLinks(AnyOwner(), store=store)


def answer(tokens: int, last_at: list[float]):
    def job(cancel):
        yield UserMessage("Tell the room a story")
        started = time.perf_counter()
        for index in range(tokens):
            delay = started + index / TOKENS_PER_SECOND - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            yield TextDelta(f"word{index % 97} ")
        last_at.append(time.perf_counter())
        yield TextDelta(SENTINEL)
        yield Done("done")

    return job


async def watch(links, broadcasts, token: str, language: str, seen: dict[int, float], index: int) -> None:
    async for chunk in viewer_stream(links, broadcasts, token, language, keepalive=1.0):
        if index not in seen and SENTINEL.encode() in chunk:
            seen[index] = time.perf_counter()


def trial(viewers: int, tokens: int) -> dict[str, float]:
    registry = RunRegistry()
    links = links_of(["chat"])
    broadcasts = Broadcasts(
        events_of=lambda owner, chat: registry.log(chat), new_source=WatchView, is_shared=links.is_shared
    )
    link = links.share(OWNER, "chat")
    loop = asyncio.new_event_loop()
    threading.Thread(target=loop.run_forever, daemon=True).start()
    seen: dict[int, float] = {}

    def join(count: int, first: int) -> list:
        return [
            asyncio.run_coroutine_threadsafe(
                watch(links, broadcasts, link.token, (ENGLISH, CHINESE)[i % 2], seen, i), loop
            )
            for i in range(first, first + count)
        ]

    streams = join(viewers, 0)
    time.sleep(0.5)  # every viewer has its first frame
    last_at: list[float] = []
    cpu = time.process_time()
    registry.start("chat", answer(tokens, last_at))
    registry.join("chat")
    returned = time.perf_counter()
    deadline = time.perf_counter() + 10
    while len(seen) < viewers and time.perf_counter() < deadline:
        time.sleep(0.005)
    cpu = time.process_time() - cpu
    lags = [seen[i] - last_at[0] for i in range(viewers) if i in seen]
    # Memory: as many viewers again join the finished chat; what they hold once each has its frame.
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    more = join(viewers, viewers)
    deadline = time.perf_counter() + 10
    while len(seen) < 2 * viewers and time.perf_counter() < deadline:
        time.sleep(0.01)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    links.revoke(OWNER, "chat")
    for stream in streams + more:
        stream.result(5)
    broadcasts.close()
    loop.call_soon_threadsafe(loop.stop)
    return {
        "presenter": returned - last_at[0],
        "median": statistics.median(lags) if lags else 0.0,
        "slowest": max(lags) if lags else 0.0,
        "missed": viewers - len(lags),
        "cpu": cpu,
        "memory": grown / viewers if viewers else 0.0,
    }


def lookup_seconds(links: WatchLinks, tokens: list[str], repeats: int) -> list[float]:
    """Per lookup of each token, the best of seven rounds of `repeats`; the tokens take turns in every round."""
    best = [float("inf")] * len(tokens)
    for _ in range(7):
        for index, token in enumerate(tokens):
            started = time.perf_counter()
            for _ in range(repeats):
                links.lookup(token)
            best[index] = min(best[index], (time.perf_counter() - started) / repeats)
    return best


def lookup_table(repeats: int) -> str:
    """A live token, one differing only in its last character, and one differing from the start: the same work."""
    links = links_of([f"chat{index}" for index in range(1_000)] + ["watched"])
    for index in range(1_000):  # a server with many live links
        links.share(OWNER, f"chat{index}")
    token = links.share(OWNER, "watched").token
    near = token[:-1] + ("A" if token[-1] != "A" else "B")
    wrong = ("A" if token[0] != "A" else "B") + token[1:]
    names = ["live", "near miss (last character)", "wrong (first character)"]
    seconds = lookup_seconds(links, [token, near, wrong], repeats)
    rows = [[name, f"{each * 1e6:.2f}", f"{each / seconds[0]:.2f}"] for name, each in zip(names, seconds, strict=True)]
    return table(["token", "lookup (µs)", "÷ live"], rows)


def run(*, quick: bool = False) -> str:
    tokens = 1_000 if quick else 3_000
    results = {viewers: trial(viewers, tokens) for viewers in VIEWERS}
    base = results[0]["cpu"]
    rows = []
    for viewers, r in results.items():
        per_viewer = f"{(r['cpu'] - base) / viewers * 1000:.1f}" if viewers else "–"
        memory = f"{r['memory'] / 1024:.1f}" if viewers else "–"
        lag = f"{r['median']:.3f} / {r['slowest']:.3f}" if viewers else "–"
        ok = "✅" if r["presenter"] <= TARGET_LAG and not r["missed"] else "❌"
        rows.append([viewers, f"{r['presenter']:.4f}", lag, f"{r['cpu']:.2f}", per_viewer, memory, ok])
    headers = [
        "viewers",
        "presenter's lag (s)",
        "viewers' lag, median / slowest (s)",
        "server CPU (s)",
        "CPU per viewer (ms)",
        "memory per viewer (KB)",
        f"presenter ≤ {TARGET_LAG} s, every viewer has the end",
    ]
    intro = (
        f"### Watchers of one chat: {tokens:,} tokens at {TOKENS_PER_SECOND:,}/s ({machine()})\n\n"
        "One feed and one render per frame (at most 5 a second, per language) whatever the viewers; half the "
        "viewers read English, half Traditional Chinese.\n\n"
    )
    lookups = "\n### A token's lookup among 1,001 live links\n\n" + lookup_table(20_000 if quick else 100_000)
    return intro + table(headers, rows) + lookups


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
