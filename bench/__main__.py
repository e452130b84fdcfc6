"""Run the benchmarks and write their tables to docs/benchmarks.md: `python -m bench [--only NAME,...] [--quick]`.

Each bench module has `run() -> str` returning markdown. A module that is not there (yet) is skipped with a note.
With --only, the other sections already in docs/benchmarks.md are kept, so one table can be refreshed alone.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import inspect
import re
import sys
import time
import traceback
from pathlib import Path

from bench.report import machine

BENCHES = (
    "stream",
    "app",
    "families",
    "agent",
    "ui",
    "fetch",
    "search",
    "memory",
    "limits",
    "linear",
    "tokens",
    "mcp",
    "sandbox",
    "seccomp",
    "proxy",
    "verdict",
    "openai",
    "files",
    "watch",
    "engine",
    "engine_calls",
    "load",
)
"""Short names, in running order; each is the module bench.bench_<name>, or bench.<name> for load."""
DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
_SECTION = re.compile(r"^<!-- bench:(\w+) -->$", re.MULTILINE)


def module_name(name: str) -> str:
    return f"bench.{name}" if name == "load" else f"bench.bench_{name}"


def run_one(name: str, *, quick: bool) -> tuple[str, str]:
    """The bench's markdown, or a note saying why there is none; and "ran", "skipped" or "failed"."""
    try:
        module = importlib.import_module(module_name(name))
    except ModuleNotFoundError as exc:
        if exc.name != module_name(name):
            raise
        return f"*Skipped: there is no `{module_name(name)}` module yet.*\n", "skipped"
    options = {"quick": True} if quick and "quick" in inspect.signature(module.run).parameters else {}
    started = time.perf_counter()
    try:
        text = module.run(**options)
    except Exception:  # one broken bench must not lose the others' tables
        return f"*Failed:*\n\n```\n{traceback.format_exc(limit=5)}```\n", "failed"
    mode = ", quick sizes" if options else ""
    return text.rstrip() + f"\n\n*{time.perf_counter() - started:.0f} s{mode}.*\n", "ran"


def sections(text: str) -> dict[str, str]:
    """The sections of an existing docs/benchmarks.md by bench name, each with its marker line."""
    marks = list(_SECTION.finditer(text))
    return {
        mark.group(1): text[mark.start() : marks[i + 1].start() if i + 1 < len(marks) else len(text)].rstrip() + "\n"
        for i, mark in enumerate(marks)
    }


def document(new: dict[str, str], *, command: str) -> str:
    """docs/benchmarks.md: a header, then one section per bench in BENCHES order, new ones replacing old ones."""
    kept = sections(DOC.read_text()) if DOC.exists() else {}
    today = datetime.date.today().isoformat()
    for name, text in new.items():
        kept[name] = f"<!-- bench:{name} -->\n## {name} (measured {today})\n\n{text.rstrip()}\n"
    header = (
        "# Benchmarks\n\n"
        f"Last written {today} on {machine()}.\n\n"
        f"Regenerate with `python -m bench` (all, a few minutes) or `python -m bench --only NAME`; this run was "
        f"`{command}`. Tables from separate runs carry their own dates.\n"
    )
    return header + "".join(f"\n{kept[name]}" for name in BENCHES if name in kept)


def parse_names(value: str) -> list[str]:
    names = [n.strip().removeprefix("bench_") for n in value.split(",") if n.strip()]
    unknown = sorted(set(names) - set(BENCHES))
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown bench {', '.join(unknown)}; choose from {', '.join(BENCHES)}")
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n")[0])
    parser.add_argument("--only", type=parse_names, metavar="NAME[,NAME]", help=f"some of: {', '.join(BENCHES)}")
    parser.add_argument("--quick", action="store_true", help="smaller sizes, where a bench supports it")
    args = parser.parse_args(argv)
    chosen = [name for name in BENCHES if name in (args.only or BENCHES)]
    results: dict[str, str] = {}
    failed = []
    for name in chosen:
        print(f"## {name}\n", flush=True)
        text, status = run_one(name, quick=args.quick)
        print(text, flush=True)
        if status == "failed":  # keep the last good table in the document; the exit code tells
            failed.append(name)
        else:
            results[name] = text
    command = " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])])
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(document(results, command=command))
    print(f"Wrote {DOC}." + (f" Failed: {', '.join(failed)}." if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
