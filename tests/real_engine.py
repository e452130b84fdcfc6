"""A real llama.cpp `llama-server` for the tests and benches marked `real_engine`: found, started, stopped.

    engine = find_engine()          # None when there is none: skip with `missing_reason()`
    with running_server(engine) as url:   # http://127.0.0.1:PORT/v1, what --openai-url takes
        speed = measure_speed(url)        # its rates now, on this machine as loaded as it is: for deadlines

Found through `MEOWGENT_LLAMA_SERVER` (the binary) and `MEOWGENT_TEST_MODEL` (a GGUF file), else in the cache that
`../shared/engines/build_llama.sh` fills (~/.cache/meowgent-engine: bin/llama-server, models/*.gguf). The server is
started as the README says (`--jinja`), the model named by its file's stem (`-a`), greedy (`--temp 0`) with one
slot, and its answers are short (`-n`). One thread by default: on two cores shared with other work, llama.cpp's
threads wait on each other (measured under load: 2.6 tokens/s with one thread, 0.3 with two).
"""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

CACHE = Path.home() / ".cache" / "meowgent-engine"
MODELS = ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b", "smollm2-135m")
"""The cache's models, the test's default first: the smallest that calls tools."""
START_SECONDS = 120.0
NO_AMX = ("--no-repack",)
"""No extra weight buffers, AMX's among them: the build is for this CPU (GGML_NATIVE), which reports AMX, but this
virtual machine does not let a process use it, and the server died of an illegal instruction (`tilezero`) at its
first matrix product."""


@dataclass(frozen=True)
class Engine:
    server: Path
    """The `llama-server` binary."""
    model: Path
    """The GGUF model the tests use unless they name another."""

    def tool_model(self) -> Path:
        """The model of the multi-turn tool tests: the one `MEOWGENT_TEST_MODEL` names, else the cache's
        Qwen2.5-Coder 1.5B (the one issue 31's bar is set on: bench/bench_engine_calls.py), else the default."""
        named = os.environ.get("MEOWGENT_TEST_MODEL")
        return self.model if named else self.model_named("qwen2.5-coder-1.5b") or self.model

    def model_named(self, name: str) -> Path | None:
        """A model of the cache by its name ("qwen2.5-coder-1.5b"), if it is there."""
        path = CACHE / "models" / f"{name}.gguf"
        return path if path.is_file() else None


def find_engine() -> Engine | None:
    """The server and model the environment names, else the cache's; None when either is missing."""
    server = Path(os.environ.get("MEOWGENT_LLAMA_SERVER") or CACHE / "bin" / "llama-server")
    named = os.environ.get("MEOWGENT_TEST_MODEL")
    candidates = [Path(named)] if named else [CACHE / "models" / f"{name}.gguf" for name in MODELS]
    model = next((path for path in candidates if path.is_file()), None)
    if not (server.is_file() and os.access(server, os.X_OK)) or model is None:
        return None
    return Engine(server, model)


def missing_reason() -> str:
    """Why there is no engine, in one line (a skip's reason)."""
    return (
        "no llama-server and model: set MEOWGENT_LLAMA_SERVER and MEOWGENT_TEST_MODEL, "
        "or run ../shared/engines/build_llama.sh"
    )


@contextmanager
def running_server(
    engine: Engine,
    model: Path | None = None,
    *,
    ctx: int = 4096,
    max_tokens: int = 256,
    threads: int = 1,
    greedy: bool = True,
    options: Sequence[str] = (),
) -> Iterator[str]:
    """A `llama-server` on a free loopback port, ready; yields its OpenAI base URL. Stopped (and waited for) at the
    end, whatever happened. `greedy=False` keeps the server's own sampling, as a person's server has; `options` are
    more of llama-server's flags."""
    port = _free_port()
    model = model or engine.model
    command = [
        str(engine.server), "-m", str(model), "-a", model.stem, "--jinja", "--host", "127.0.0.1", "--port", str(port),
        "-c", str(ctx), "-np", "1", "-t", str(threads), "-n", str(max_tokens), "--no-webui", *NO_AMX,
        *(["--temp", "0"] if greedy else []), *options,
    ]  # fmt: skip
    with tempfile.TemporaryFile("w+") as log:  # a file, not a pipe: a full pipe would block the server
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, text=True)
        try:
            _wait_ready(process, f"http://127.0.0.1:{port}", log)
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)


@dataclass(frozen=True)
class Speed:
    """How fast the server reads a prompt and writes an answer, as measured (llama.cpp's own `timings`)."""

    prompt_per_second: float
    tokens_per_second: float

    def reply_seconds(self, *, prompt_tokens: int, output_tokens: int, margin: float = 3.0) -> float:
        """A generous bound on one reply: the whole prompt read uncached and every token written, `margin` times
        (the machine's load changes between the measurement and the reply), and a few seconds for the rest."""
        work = prompt_tokens / self.prompt_per_second + output_tokens / self.tokens_per_second
        return margin * work + 10.0


def measure_speed(url: str) -> Speed:
    """One short uncached request (about 200 prompt tokens, 16 answer tokens) timed by the server itself."""
    words = " ".join(f"cat{n}" for n in range(100))
    body = {
        "messages": [{"role": "user", "content": f"Repeat the first word of this list: {words}"}],
        "max_tokens": 16,
        "cache_prompt": False,
        "ignore_eos": True,  # all 16 tokens, however short its answer would be
        "temperature": 0,
    }
    timings = httpx.post(f"{url}/chat/completions", json=body, timeout=600).json()["timings"]
    return Speed(timings["prompt_per_second"], timings["predicted_per_second"])


def root_of(url: str) -> str:
    """The server's root (where /props, /slots and /health are) from its OpenAI base URL."""
    return url.removesuffix("/v1")


def _wait_ready(process: subprocess.Popen[str], root: str, log: IO[str]) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"llama-server ended at start: {log.read()[-2000:]}")
        try:
            if httpx.get(f"{root}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"llama-server was not ready within {START_SECONDS:.0f} s")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]
