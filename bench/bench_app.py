"""What Gradio costs the app besides its events: starting it, and Gradio's own summary after each event.

Run from the repository root: `python -m bench.bench_app`.

(a) CPU seconds to start and stop one app (`serve`, then `close`) in this process, against a scripted Ollama:
    as `serve` does it, and with the `demo.queue(default_concurrency_limit=None)` call it used to make, which
    builds Gradio's whole web app once more before `launch` builds it again. Alternating, median of each.
(b) Gradio's summary of the events it keeps (`Queue.compute_analytics_summary`, a pandas table grouped by event),
    which it makes after each event unless told otherwise, for a monitoring page the app never turns on: CPU per
    summary by how many events it keeps (at most 10,000; an app keeps every event until then).
"""

from __future__ import annotations

import random
import statistics
import tempfile
import time
from pathlib import Path

from gradio.queueing import Queue

from bench.report import machine, table
from tests.ui.conftest import started_app

STARTS = 15
"""Apps started each way, alternating."""
KEPT = (10, 100, 1_000, 10_000)
SUMMARIES = 30


def _start_seconds(folder: Path, *, queue_again: bool) -> float:
    folder.mkdir()
    before = time.process_time()
    with started_app(folder, {}) as app:
        if queue_again:  # what serve did before: the queue's settings through Gradio's `queue()`
            app.demo.queue(default_concurrency_limit=None)
    return time.process_time() - before


def _summary_ms(kept: int) -> float:
    queue = Queue.__new__(Queue)  # only the summary's own fields: no event loop, no app
    records = [
        {"time": 0.0, "status": random.choice(("success", "failed")), "process_time": random.random()}
        | {"function": f"on_{n % 40}", "session_hash": "s"}
        for n in range(kept)
    ]
    queue.events_recorded, queue.event_count_at_last_cache, queue.ANAYLTICS_CACHE_FREQUENCY = 0, 0, 1
    queue.cached_event_analytics_summary, queue.events_recorded_per_fn = {}, {}
    before = time.process_time()
    for _ in range(SUMMARIES):
        queue.events_recorded += 1
        queue.compute_analytics_summary(records)
    return (time.process_time() - before) / SUMMARIES * 1000


def run() -> str:
    with tempfile.TemporaryDirectory() as scratch:
        _start_seconds(Path(scratch) / "warm", queue_again=False)  # imports and caches, before anything is timed
        starts: dict[bool, list[float]] = {False: [], True: []}
        for n in range(STARTS):
            for queue_again in (False, True):
                folder = Path(scratch) / f"{n}-{queue_again}"
                starts[queue_again].append(_start_seconds(folder, queue_again=queue_again))
    now, before = statistics.median(starts[False]), statistics.median(starts[True])
    summaries = [[f"{kept:,}", f"{_summary_ms(kept):.1f}"] for kept in KEPT]
    return (
        f"### Starting an app, and Gradio's summary of its events ({machine()})\n\n"
        f"#### (a) CPU to start and stop one app, median of {STARTS} each, alternating\n\n"
        + table(
            ["serve", "CPU seconds", "ratio"],
            [
                ["as now", f"{now:.3f}", "1.00"],
                ["with the old `demo.queue(...)`", f"{before:.3f}", f"{before / now:.2f}"],
            ],
        )
        + f"\n#### (b) Gradio's summary after an event, by events kept (CPU, mean of {SUMMARIES}; now never made)\n\n"
        + table(["events kept", "ms per summary"], summaries)
    )


if __name__ == "__main__":
    print(run())
