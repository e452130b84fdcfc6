"""Issue 31's bar: in a multi-turn chat on a real engine, the model calls a tool, the person approves, and the model
answers from the result, at least 4 times in 5 with Qwen2.5-Coder-1.5B, every failure the model's.

Run from the repository root: `nice python -m bench.bench_engine_calls [--trials N] [--model NAME] [--threads T]`
(needs llama-server and the model: tests/real_engine.py finds them; without them the bench says so).

Each trial is a fresh chat in a fresh app, driven through the app's own API as the page does (tests/real_chat.py):
write a file (approved), then run `ls` (approved) and name a file only the result shows. The server keeps its own
sampling (not greedy), as a person's does, so the trials are not one trial repeated. Each row says what went wrong
and whose fault it is, with what the model wrote; the header says how busy the machine was.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

from bench.report import machine, table
from bench.wiretap import Tap
from tests.real_chat import ANSWER_TOKENS, CONTEXT, Trial, run_trial
from tests.real_engine import find_engine, measure_speed, missing_reason, root_of, running_server

TRIALS = 5
MODEL = "qwen2.5-coder-1.5b"
GOAL = 4
"""Trials of `TRIALS` that must pass."""


def run(quick: bool = False, *, trials: int = TRIALS, model: str = MODEL, threads: int = 1) -> str:
    engine = find_engine()
    path = engine.model_named(model) if engine else None
    if engine is None or path is None:
        return f"*Skipped: {missing_reason() if engine is None else f'no {model} in the cache'}.*\n"
    rows = []
    with (
        running_server(engine, path, ctx=CONTEXT, max_tokens=ANSWER_TOKENS, threads=threads, greedy=False) as url,
        Tap(root_of(url)) as tap,
        tempfile.TemporaryDirectory(prefix="meowgent-calls-") as folder,
    ):
        speed = measure_speed(url)
        for number in range(1, (1 if quick else trials) + 1):
            load = os.getloadavg()[0]
            started, first = time.monotonic(), len(tap.replies)
            trial = run_trial(tap, model=model, speed=speed, folder=Path(folder))
            rows.append(_row(number, trial, time.monotonic() - started, load))
            print(" | ".join(rows[-1][:-1]), file=sys.stderr)  # as it goes: a long run still says how far it got
            for reply in tap.replies[first:]:  # the whole evidence, where a person reading the table can look
                print(f"trial {number}, {rows[-1][1]}: the model wrote {''.join(reply.text)!r}", file=sys.stderr)
    passed = sum(row[1] == "ok" for row in rows)
    head = (
        f"Engine: llama-server, {model}, {CONTEXT:,}-token window, {threads} thread(s), its own sampling. "
        f"Measured at the start: prompt {speed.prompt_per_second:.0f} tokens/s, answer "
        f"{speed.tokens_per_second:.1f} tokens/s. Machine: {machine()}.\n\n"
        f"**{passed} of {len(rows)} trials passed** (goal: {GOAL} of {TRIALS}).\n\n"
    )
    columns = ["trial", "outcome", "whose", "turn", "replies", "seconds", "load (1 min)", "model wrote"]
    return head + table(columns, rows)


def _row(number: int, trial: Trial, seconds: float, load: float) -> list[str]:
    failure = trial.failure
    whose = "" if failure is None else ("model" if failure.models_fault else "app")
    wrote = "" if failure is None else _cell(failure.detail)
    outcome = "ok" if trial.ok else (failure.result if failure else "incomplete")
    turn = str(failure.turn) if failure else ""
    return [str(number), outcome, whose, turn, str(trial.replies), f"{seconds:.0f}", f"{load:.1f}", wrote]


def _cell(text: str, limit: int = 160) -> str:
    """The model's words in one table cell: one line, no pipes, shortened."""
    flat = " ".join(text.split()).replace("|", "\\|")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=TRIALS)
    parser.add_argument("--model", default=MODEL)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    print(run(trials=args.trials, model=args.model, threads=args.threads))
