"""The context module's token estimate against reference counts, before and after calibration.

Run from the repository root: `python -m bench.bench_tokens`. `run()` returns the markdown tables.

Samples: English prose, Python code, a search result full of line numbers, a JSON tool call, Traditional Chinese
prose and a mixed Chinese and code message; each alone, then all of them in one agent conversation of six requests
whose counts calibrate the estimator in order, as the agent does after every reply.

References, each named in its table's title:
- the scripted server's prompt_eval_count, over HTTP: ceil(characters / 4) of the message contents. A synthetic
  count, so its table only shows that calibration follows whatever the server reports;
- Qwen's BPE, only when `tiktoken` and the vocabulary file shipped in the `dashscope` package are installed
  (neither is a project dependency; nothing can be downloaded at run time here). Without them the report says so.
"""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.report import table
from meowgent.config import Settings
from meowgent.context import TokenEstimator, estimate_messages
from meowgent.llm.client import OllamaClient
from meowgent.llm.types import ChatRequest, Holding
from meowgent.prompt import system_prompt
from meowgent.tools.registry import ToolRegistry
from tests.scripted_ollama import ScriptedOllama, tool_call_text

ROOT = Path(__file__).resolve().parent.parent
Messages = list[dict[str, Any]]

CHINESE = (
    "貓咪代理是一個在瀏覽器裡執行的本機人工智慧助理。使用者在網頁上和 Ollama 提供的模型對話，"
    "模型可以讀取、搜尋並修改工作資料夾裡的檔案，執行命令，也能擷取網頁內容。\n\n"
    "每一個有風險的動作都要先等使用者核准或拒絕；模型寫工具呼叫的時候，頁面會即時顯示參數。"
    "我們希望程式簡單、可靠、容易閱讀：一個模組只有一個改變的理由，核心是純函式，輸入輸出留在邊緣。\n\n"
    "如果對話太長，超過模型的上下文長度，Ollama 會默默丟掉最舊的內容，連系統提示和工具清單都會不見。"
    "所以每次送出之前，我們先估計長度，必要時縮短舊的工具輸出，或略過最早的幾輪對話，完整的紀錄仍然保存在資料庫裡。"
)

MIXED = (
    "請幫我看一下 `meowgent/stream.py` 裡的 `ToolCallSplitter.feed()`：如果模型在 JSON 字串裡寫了 "
    "`</tool_call>`，會不會提早結束？例如這段輸入：\n\n"
    "```python\n"
    'splitter.feed(\'<tool_call>{"name": "write_file", "arguments": {"content": "a </tool_call> b"}}\')\n'
    "events = splitter.close()\n"
    "```\n\n"
    "我希望回傳 1 個 ToolCallDone，而不是 2 個。謝謝！"
)


CODE = "Python code (meowgent/reply/splitter.py)"


def samples() -> list[tuple[str, str]]:
    """(name, text) pairs; most are read from this repository, so they change a little as it does."""
    code = (ROOT / "meowgent" / "reply" / "splitter.py").read_text()
    search = "\n".join(
        f"{path.relative_to(ROOT)}:{number}:{line}"
        for path in sorted((ROOT / "meowgent").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.lstrip().startswith("def ")
    )[:6000]
    call = tool_call_text("write_file", {"path": "meowgent/toolcall.py", "content": code[:3000]})
    return [
        ("English prose (docs/architecture.md)", (ROOT / "docs" / "architecture.md").read_text()[:6000]),
        (CODE, code),
        ("search result with line numbers", search),
        ("JSON tool call (write_file)", call),
        ("Traditional Chinese prose", CHINESE),
        ("Chinese with code (a person's message)", MIXED),
    ]


def conversation(texts: dict[str, str]) -> list[Messages]:
    """An agent session's requests: each is the transcript so far, sent after a message or a tool result."""
    settings = Settings(workspace=ROOT)
    messages: Messages = [
        {
            "role": "system",
            "content": system_prompt(ToolRegistry.builtins().all().values(), workspace=settings.workspace),
        },
        {"role": "user", "content": texts["Chinese with code (a person's message)"]},
    ]
    requests = [list(messages)]
    steps = [
        (tool_call_text("read_file", {"path": "meowgent/reply/splitter.py"}), CODE),
        (tool_call_text("search_files", {"pattern": "def "}), "search result with line numbers"),
        (tool_call_text("read_file", {"path": "docs/architecture.md"}), "English prose (docs/architecture.md)"),
    ]
    for call, result in steps:
        messages += [{"role": "assistant", "content": call}, {"role": "tool", "content": texts[result]}]
        requests.append(list(messages))
    messages += [
        {"role": "assistant", "content": texts["Traditional Chinese prose"]},
        {"role": "user", "content": "Please write the fix to meowgent/toolcall.py."},
    ]
    requests.append(list(messages))
    messages += [
        {"role": "assistant", "content": texts["JSON tool call (write_file)"]},
        {"role": "tool", "content": "Wrote 3,000 characters to meowgent/toolcall.py."},
    ]
    requests.append(list(messages))
    return requests


def scripted_counts(requests: list[Messages]) -> list[int]:
    """prompt_eval_count from the scripted server, over HTTP through the real client."""
    with ScriptedOllama() as server:
        client = OllamaClient(server.url)
        try:
            return [next(c.prompt_tokens for c in client.stream_chat(_request(m)) if c.done) or 0 for m in requests]
        finally:
            client.close()


def _request(messages: Messages) -> ChatRequest:
    """The transcript as qwen3 gets it (its template reads role `tool`), the system prompt first."""
    system, *transcript = messages
    return ChatRequest(
        "qwen3", system["content"], tuple(transcript), None, False, frozenset({"tools"}), 40960, Holding.NONE
    )


# Qwen's pre-tokenizer pattern, as in its tokenizer configuration.
_QWEN_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


def qwen_counter() -> Callable[[list[Messages]], list[int]] | None:
    """Token counts of each request rendered in Qwen's chat format, or None without tiktoken and the vocabulary."""
    spec = importlib.util.find_spec("dashscope")
    if importlib.util.find_spec("tiktoken") is None or spec is None or spec.origin is None:
        return None
    vocabulary = Path(spec.origin).parent / "resources" / "qwen.tiktoken"
    if not vocabulary.is_file():
        return None
    import tiktoken  # only here: an optional reference, not a dependency

    ranks = {
        base64.b64decode(token): int(rank)
        for token, rank in (line.split() for line in vocabulary.read_bytes().splitlines() if line)
    }
    specials = {"<|endoftext|>": len(ranks), "<|im_start|>": len(ranks) + 1, "<|im_end|>": len(ranks) + 2}
    encoding = tiktoken.Encoding("qwen", pat_str=_QWEN_SPLIT, mergeable_ranks=ranks, special_tokens=specials)

    def render(messages: Messages) -> str:
        # As Ollama's qwen3 template renders a transcript without native tool calls.
        parts = []
        for m in messages:
            if m["role"] == "tool":
                parts.append(f"<|im_start|>user\n<tool_response>\n{m['content']}\n</tool_response><|im_end|>\n")
            else:
                parts.append(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n")
        return "".join(parts) + "<|im_start|>assistant\n"

    return lambda requests: [len(encoding.encode(render(m), allowed_special="all")) for m in requests]


def _error(estimate: int, reference: int) -> str:
    return f"{(estimate - reference) / reference:+.0%}"


def compare(title: str, counter: Callable[[list[Messages]], list[int]], texts: list[tuple[str, str]]) -> str:
    """One table: every sample alone, then the conversation, before and after calibrating on its requests."""
    requests = conversation(dict(texts))
    singles = [[{"role": "user", "content": text}] for _, text in texts]
    counts = counter(singles + requests)
    sample_counts, request_counts = counts[: len(singles)], counts[len(singles) :]
    estimator = TokenEstimator()
    for request, count in zip(requests, request_counts, strict=True):
        estimator.calibrate(estimate_messages(request), count)
    rows = []
    named = [(name, single, count) for (name, _), single, count in zip(texts, singles, sample_counts, strict=True)]
    whole = (f"whole conversation ({len(requests)} requests)", requests[-1], request_counts[-1])
    for name, messages, reference in [*named, whole]:
        raw, calibrated = estimate_messages(messages), estimator.estimate(messages)
        chars = sum(len(m["content"]) for m in messages)
        numbers = [f"{chars:,}", f"{reference:,}", f"{raw:,}", _error(raw, reference), f"{calibrated:,}"]
        rows.append([name, *numbers, _error(calibrated, reference)])
    headers = ["sample", "characters", "reference", "estimate", "error", "calibrated", "error"]
    return (
        f"### {title}\n\nCalibrated on the conversation's requests in order: factor {estimator.factor:.3f}. "
        "A positive error is an overestimate (safe: the request is cut a little early).\n\n" + table(headers, rows)
    )


def run() -> str:
    texts = samples()
    reports = [
        compare(
            "Token estimate against the scripted server's count (synthetic: ceil(characters / 4) of the contents)",
            scripted_counts,
            texts,
        )
    ]
    qwen = qwen_counter()
    if qwen is None:
        reports.append(
            "### Token estimate against a real tokenizer: not measured\n\nNo real tokenizer is available offline "
            "in this environment (tiktoken and a Qwen vocabulary are not installed, and nothing can be "
            "downloaded), so the only reference above is synthetic. To measure: `pip install tiktoken` and "
            "`pip install --no-deps dashscope`, which ships Qwen's vocabulary.\n"
        )
    else:
        reports.append(
            compare(
                "Token estimate against Qwen's BPE (qwen.tiktoken, 151,643 tokens, from the dashscope package), "
                "each request rendered in Qwen's chat format",
                qwen,
                texts,
            )
        )
    return "\n".join(reports)


if __name__ == "__main__":
    print(run())
