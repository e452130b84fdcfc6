"""Regenerate the approval screenshots in docs/screenshots/ at 1280x900.

- approval.png: an English page waiting for approval of a shell command;
- approval-zh-TW.png: a Traditional Chinese page waiting for approval of a file edit, shown as a diff.

Run from the repository root: `python -m bench.screenshot` (needs /usr/bin/chromium).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bench.bench_ui import VIEWPORT, chromium, launched_app, send
from tests.scripted_ollama import Text, Turn, tool_call_text

FOLDER = Path(__file__).resolve().parents[1] / "docs" / "screenshots"


@dataclass(frozen=True)
class Shot:
    name: str
    locale: str
    question: str
    sentence: str
    tool: str
    arguments: dict
    files: dict


SHOTS = (
    Shot(
        "approval.png",
        "en-US",
        "How much disk space is free on this computer?",
        "I'll check how much space is left on your disk. This only reads; it changes nothing.",
        "run_shell",
        {"command": "df -h ."},
        {},
    ),
    Shot(
        "approval-zh-TW.png",
        "zh-TW",
        "把晚餐改成七點，地點改成貓咪咖啡廳",
        "好的，我會修改行事曆裡的晚餐時間和地點。",
        "edit_file",
        {"path": "行事曆.md", "old": "晚餐：六點\n地點：家裡", "new": "晚餐：七點\n地點：貓咪咖啡廳"},
        {"行事曆.md": "# 週末\n午餐：十二點\n晚餐：六點\n地點：家裡\n"},
    ),
)


def take(shot: Shot) -> Path:
    with launched_app() as app, chromium() as browser:
        for name, content in shot.files.items():
            (app.workspace / name).write_text(content, encoding="utf-8")
        context = browser.new_context(viewport=VIEWPORT, locale=shot.locale)
        try:
            page = context.new_page()
            page.goto(app.url)
            page.locator("#status").get_by_text("Ollama").wait_for()
            app.ollama.script(
                Turn(Text(shot.sentence + "\n"), Text(tool_call_text(shot.tool, shot.arguments)), chunk_size=12)
            )
            send(page, shot.question)
            page.locator("#approve").wait_for()
            page.locator("#approve").scroll_into_view_if_needed()
            page.wait_for_timeout(300)  # let the last frame paint
            path = FOLDER / shot.name
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path))
        finally:
            context.close()
    return path


def main() -> list[Path]:
    return [take(shot) for shot in SHOTS]


if __name__ == "__main__":
    for path in main():
        print(path)
