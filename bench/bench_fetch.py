"""web_fetch's extraction against Mozilla Readability on the saved pages: word-level F1 and time.

Run from the repository root: `python -m bench.bench_fetch`. The pages are in shared/corpus/web-pages
beside the repository. F1 compares bags of lowercase words (each CJK character counts as a word)
of our Markdown with the text of Mozilla's article (expected.html).
"""

from __future__ import annotations

import re
import statistics
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import html2text
import lxml.html
from readability import Document

from meowgent.tools.extract import extract_markdown

_IN_SHARED = Path("shared") / "corpus" / "web-pages"
# The repository may be a worktree nested deeper than the main checkout; the nearest ancestor's copy wins.
CORPUS = next(
    (folder / _IN_SHARED for folder in Path(__file__).resolve().parents if (folder / _IN_SHARED).is_dir()),
    Path(__file__).resolve().parents[2] / _IN_SHARED,
)

# Chinese, Japanese and Korean do not put spaces between words; a character is the usual unit there.
_CJK = re.compile(r"([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af])")
_WORD = re.compile(r"[^\W_]+")  # letters and digits; Markdown's `_` and `*` are not words


def words(text: str) -> Counter[str]:
    """The bag of lowercase words in text."""
    return Counter(_WORD.findall(_CJK.sub(r" \1 ", text.lower())))


def word_f1(candidate: str, reference: str) -> float:
    """Harmonic mean of word precision and recall of candidate against reference, over word bags."""
    ours, theirs = words(candidate), words(reference)
    common = sum((ours & theirs).values())
    if not common:
        return 0.0
    precision = common / sum(ours.values())
    recall = common / sum(theirs.values())
    return 2 * precision * recall / (precision + recall)


def corpus_pages() -> list[Path]:
    """The page folders, each with source.html and expected.html; empty when the corpus is absent."""
    if not CORPUS.is_dir():
        return []
    return sorted(path for path in CORPUS.iterdir() if (path / "source.html").is_file())


def expected_text(page: Path) -> str:
    """The text of Mozilla Readability's article for a page."""
    return lxml.html.fromstring((page / "expected.html").read_text(encoding="utf-8")).text_content()


def bare_pipeline(html: str) -> str:
    """The baseline: readability-lxml's summary through html2text, defaults but for line wrapping."""
    converter = html2text.HTML2Text()
    converter.body_width = 0
    return converter.handle(Document(html).summary())


def _readability_alone(html: str) -> str:
    return Document(html).summary()


def _ours(html: str) -> str:
    return extract_markdown(html, "http://fakehost/")[1]


def _best_ms(function: Callable[[str], str], html: str, repeat: int) -> tuple[str, float]:
    best = float("inf")
    for _ in range(repeat):
        started = time.perf_counter()
        result = function(html)
        best = min(best, time.perf_counter() - started)
    return result, best * 1000


@dataclass(frozen=True)
class Row:
    page: str
    f1_bare: float
    f1_ours: float
    ms_bare: float
    ms_ours: float
    ms_readability: float


def measure(page: Path, *, repeat: int = 3) -> Row:
    """F1 and best-of-`repeat` time of the bare pipeline and of ours on one page."""
    html = (page / "source.html").read_text(encoding="utf-8")
    reference = expected_text(page)
    bare, ms_bare = _best_ms(bare_pipeline, html, repeat)
    ours, ms_ours = _best_ms(_ours, html, repeat)
    _, ms_readability = _best_ms(_readability_alone, html, repeat)
    return Row(page.name, word_f1(bare, reference), word_f1(ours, reference), ms_bare, ms_ours, ms_readability)


@dataclass(frozen=True)
class Scores:
    """The spread of F1 over the pages; p10 is the score nine pages in ten reach."""

    mean: float
    median: float
    p10: float
    minimum: float


def scores(f1s: list[float]) -> Scores:
    """Mean, median, tenth percentile and minimum of per-page F1 (at least two pages)."""
    return Scores(statistics.mean(f1s), statistics.median(f1s), statistics.quantiles(f1s, n=10)[0], min(f1s))


_WORST_SHOWN = 5


def run() -> str:
    """A Markdown table, one row per page, then the spread of F1, the time ratios and the worst pages."""
    rows = [measure(page) for page in corpus_pages()]
    if len(rows) < 2:
        return f"Too few pages found in {CORPUS}."
    lines = ["| page | F1 bare | F1 ours | ms bare | ms ours |", "| --- | ---: | ---: | ---: | ---: |"]
    lines += [f"| {r.page} | {r.f1_bare:.3f} | {r.f1_ours:.3f} | {r.ms_bare:.1f} | {r.ms_ours:.1f} |" for r in rows]
    bare, ours = scores([r.f1_bare for r in rows]), scores([r.f1_ours for r in rows])
    lines += [
        f"| **{name}** | {getattr(bare, field):.3f} | {getattr(ours, field):.3f} | | |"
        for name, field in (("mean", "mean"), ("median", "median"), ("p10", "p10"), ("min", "minimum"))
    ]
    bare_ms = sum(r.ms_bare for r in rows)
    ours_ms = sum(r.ms_ours for r in rows)
    readability_ms = sum(r.ms_readability for r in rows)
    worst = sorted(rows, key=lambda r: r.f1_ours)[:_WORST_SHOWN]
    lines += [
        "",
        f"Time ratio, ours / bare pipeline: {ours_ms / bare_ms:.2f} ({ours_ms:.0f} / {bare_ms:.0f} ms). "
        f"Ours / readability-lxml's summary() alone ({readability_ms:.0f} ms): {ours_ms / readability_ms:.2f}.",
        "",
        "Worst pages, ours: " + ", ".join(f"{r.page} {r.f1_ours:.3f}" for r in worst) + ".",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    print(run())
