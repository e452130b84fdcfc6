"""An OpenAI-compatible server's tool-call fragments read into live text and calls, at N and 10×N in the same run.

Run from the repository root: `python -m bench.bench_openai`. `run()` returns the markdown. `ToolCallDeltas` (llm/
deltas.py) sees every `delta.tool_calls` fragment of a reply; linear work takes about ten times as long at ten times
the size. Fragments are 8 characters of arguments, as vLLM's parsers send about a token at a time.
"""

from __future__ import annotations

import json
import time

from bench.report import machine, table
from meowgent.llm.deltas import ToolCallDeltas

REPEATS = 3
PIECE = 8


def _fragments(chars: int) -> list[tuple[int | None, str | None, str | None, str | None]]:
    text = json.dumps({"path": "big.txt", "content": 'line "quoted" \\ ünï\n' * (chars // 20)})
    pieces = [(0, None, None, text[i : i + PIECE]) for i in range(0, len(text), PIECE)]
    return [(0, "call_1", "write_file", ""), *pieces]


def _seconds(chars: int) -> float:
    fragments = _fragments(chars)
    best = float("inf")
    for _ in range(REPEATS):
        started = time.perf_counter()
        deltas = ToolCallDeltas()
        for fragment in fragments:
            deltas.feed(*fragment)
        deltas.finish()
        best = min(best, time.perf_counter() - started)
    return best


def run(*, quick: bool = False) -> str:
    size = 20_000 if quick else 200_000
    small, big = _seconds(size), _seconds(size * 10)
    rows = [
        [
            f"`write_file` of {size:,} characters",
            f"{small * 1000:.1f} ms",
            f"{big * 1000:.1f} ms",
            f"{big / small:.1f}×",
        ]
    ]
    return f"Machine: {machine()}.\n\n" + table(
        ["reply (8-character fragments)", "N", "10×N", "ratio (linear ≈ 10)"], rows
    )


if __name__ == "__main__":
    print(run())
