"""Regenerate the Files panel's screenshot, docs/images/files.png: a laptop page (1280x800) after the agent wrote
poem.md, the panel open with poem.md marked "new +16 −0" and previewed.

Run from the repository root: `python -m bench.screenshot_files` (needs /usr/bin/chromium and the fonts in
`bench.screenshot.FONTS`).
"""

from __future__ import annotations

from pathlib import Path

from bench.bench_ui import chromium, launched_app, send
from bench.load import OWNER_HEADERS
from bench.screenshot import POEM, require_fonts
from tests.scripted_ollama import Text, Turn, reply, tool_call_text
from tests.ui.conftest import SCREENS

PATH = Path(__file__).resolve().parents[1] / "docs" / "images" / "files.png"


def main() -> Path:
    require_fonts()
    with launched_app() as app, chromium() as browser:
        (app.workspace / "notes").mkdir()
        (app.workspace / "notes" / "shopping.txt").write_text("cat food\nmilk\n")
        context = browser.new_context(locale="en-US", extra_http_headers=OWNER_HEADERS, **SCREENS["laptop"])
        try:
            page = context.new_page()
            page.goto(app.url)
            page.locator("#status").get_by_text("Ollama").wait_for()
            app.ollama.script(
                Turn(Text(tool_call_text("write_file", {"path": "poem.md", "content": POEM}))),
                reply("I saved the poem as poem.md."),
            )
            send(page, "Write a short poem about cats to poem.md")
            page.locator("#approve").click()
            page.locator("#chat").get_by_text("I saved the poem").wait_for()
            page.locator("#files").get_by_text("Your files").first.click()
            page.locator("#file_list").get_by_text("poem.md").first.click()
            page.locator("#file_preview").get_by_text("A cat sleeps").wait_for()
            page.wait_for_timeout(500)  # let the last frame paint
            PATH.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(PATH))
        finally:
            context.close()
    return PATH


if __name__ == "__main__":
    print(main())
