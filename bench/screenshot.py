"""Regenerate docs/screenshots/approval.png: the page waiting for approval of a run_shell call, at 1280x900.

Run from the repository root: `python -m bench.screenshot` (needs /usr/bin/chromium).
"""

from __future__ import annotations

from pathlib import Path

from bench.bench_ui import chromium, launched_app, open_page, send
from tests.scripted_ollama import Text, Turn, tool_call_text

OUT = Path(__file__).resolve().parents[1] / "docs" / "screenshots" / "approval.png"
QUESTION = "How much disk space is free on this computer?"
SENTENCE = "I'll check how much space is left on your disk. This only reads; it changes nothing."


def main() -> Path:
    with launched_app() as app, chromium() as browser:
        context, page = open_page(browser, app.url)
        try:
            app.ollama.script(
                Turn(
                    Text(SENTENCE + "\n"),
                    Text(tool_call_text("run_shell", {"command": "df -h ."})),
                    chunk_size=12,
                    delay=0.005,
                )
            )
            send(page, QUESTION)
            page.locator("#approve").wait_for()
            page.locator("#approve").scroll_into_view_if_needed()
            page.wait_for_timeout(300)  # let the last frame paint
            sentence = page.get_by_text(SENTENCE).bounding_box()
            if sentence is None or sentence["y"] < 0:
                print("warning: the card and the sentence before it no longer fit in one 1280x900 view")
            OUT.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(OUT))
        finally:
            context.close()
    return OUT


if __name__ == "__main__":
    print(main())
