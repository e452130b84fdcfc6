"""Regenerate the approval screenshots in docs/screenshots/.

- approval.png: an English page on a laptop (1280x800) waiting for approval of a new file;
- approval-zh-TW.png: a Traditional Chinese page on a phone (390x844) waiting for approval of a file edit;
- docs/images/watch-phone.png and presenter-laptop.png: a chat shared to watch, waiting for approval, as a viewer's
  phone shows it and as the presenter's laptop shows it in presenter mode (the link's QR code in the corner).

Run from the repository root: `python -m bench.screenshot` (needs /usr/bin/chromium and the fonts in `FONTS`).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from bench.bench_ui import chromium, launched_app, send
from bench.load import OWNER_HEADERS
from tests.scripted_ollama import Text, Turn, tool_call_text
from tests.ui.conftest import SCREENS

FOLDER = Path(__file__).resolve().parents[1] / "docs" / "screenshots"
IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"
FONTS = {"Noto Sans CJK TC": "fonts-noto-cjk", "Noto Color Emoji": "fonts-noto-color-emoji"}
"""The font families the pictures need, with their Debian packages: without them Chromium draws 繁體中文 and emoji
as boxes."""


@dataclass(frozen=True)
class Shot:
    name: str
    screen: str
    locale: str
    question: str
    sentence: str
    tool: str
    arguments: dict
    files: dict


POEM = """# Cats

A cat sleeps in the sun all day,
and dreams of mice that run away.
It wakes at dusk, it stretches long,
it hums a low and rumbling song.

It walks along the garden wall,
it does not mind the rain at all,
then jumps inside with muddy feet
and asks politely: "Time to eat?"

At night it guards the kitchen floor,
it listens at the bedroom door,
and when the house is still and deep,
it curls up on your bed to sleep.
"""

SHOTS = (
    Shot(
        "approval.png",
        "laptop",
        "en-US",
        "Write a short poem about cats to poem.md",
        "Here is a poem about cats. I'll save it as poem.md once you approve.",
        "write_file",
        {"path": "poem.md", "content": POEM},
        {},
    ),
    Shot(
        "approval-zh-TW.png",
        "phone",
        "zh-TW",
        "把晚餐改成七點，地點改成貓咪咖啡廳",
        "好的，我會修改行事曆裡的晚餐時間和地點。",
        "edit_file",
        {"path": "行事曆.md", "old": "晚餐：六點\n地點：家裡", "new": "晚餐：七點\n地點：貓咪咖啡廳"},
        {"行事曆.md": "# 週末\n午餐：十二點\n晚餐：六點\n地點：家裡\n"},
    ),
)


def require_fonts() -> None:
    """Stop with a sentence, not a picture full of boxes, when a font in `FONTS` is missing."""
    listed = ""
    if shutil.which("fc-list"):  # fontconfig, which Chromium finds its fonts with
        listed = subprocess.run(["fc-list", ":", "family"], capture_output=True, text=True, check=False).stdout
    installed = {family.strip() for line in listed.splitlines() for family in line.split(",")}
    missing = [package for family, package in FONTS.items() if family not in installed]
    if missing:
        raise SystemExit(f"Install the fonts first (Debian: apt-get install {' '.join(missing)}).")


def take(shot: Shot) -> Path:
    with launched_app() as app, chromium() as browser:
        for name, content in shot.files.items():
            (app.workspace / name).write_text(content, encoding="utf-8")
        context = browser.new_context(locale=shot.locale, extra_http_headers=OWNER_HEADERS, **SCREENS[shot.screen])
        try:
            page = context.new_page()
            page.goto(app.url)
            page.locator("#status").get_by_text("Ollama").wait_for()
            app.ollama.script(
                Turn(Text(shot.sentence + "\n"), Text(tool_call_text(shot.tool, shot.arguments)), chunk_size=12)
            )
            send(page, shot.question)
            page.locator("#approve").wait_for()  # in view as it appears: nothing to scroll
            page.wait_for_timeout(500)  # let the last frame paint
            path = FOLDER / shot.name
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path))
        finally:
            context.close()
    return path


def take_watch() -> list[Path]:
    """The presenter shares the chat, the model writes a file that waits for approval, a phone watches."""
    shot = SHOTS[0]
    with launched_app() as app, chromium() as browser:
        laptop = browser.new_context(locale="en-US", extra_http_headers=OWNER_HEADERS, **SCREENS["laptop"])
        phone = browser.new_context(locale="en-US", extra_http_headers=OWNER_HEADERS, **SCREENS["phone"])
        try:
            page = laptop.new_page()
            page.goto(app.url)
            page.locator("#status").get_by_text("Ollama").wait_for()
            page.locator("#watch_share").click()
            link = page.locator("#watch_link textarea")
            page.wait_for_function("() => document.querySelector('#watch_link textarea')?.value.includes('/watch/')")
            viewer = phone.new_page()
            viewer.goto(link.input_value())
            app.ollama.script(
                Turn(Text(shot.sentence + "\n"), Text(tool_call_text(shot.tool, shot.arguments)), chunk_size=12)
            )
            send(page, shot.question)
            page.locator("#approve").wait_for()
            viewer.locator(".mg-waiting").wait_for()
            page.locator("#presenter").click()
            page.wait_for_timeout(500)  # let the last frames paint
            IMAGES.mkdir(parents=True, exist_ok=True)
            paths = [IMAGES / "watch-phone.png", IMAGES / "presenter-laptop.png"]
            viewer.screenshot(path=str(paths[0]))
            page.screenshot(path=str(paths[1]))
        finally:
            laptop.close()
            phone.close()
    return paths


def main() -> list[Path]:
    require_fonts()
    return [*(take(shot) for shot in SHOTS), *take_watch()]


if __name__ == "__main__":
    for path in main():
        print(path)
