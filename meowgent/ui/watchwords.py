"""The watch page's sentences, in English and Traditional Chinese (to be folded into the i18n catalogs)."""

from __future__ import annotations

from meowgent.ui.i18n import CHINESE, ENGLISH

en = {
    "watch_title": "Watching a Meowgent chat",
    "watch_heading": "🐱 Meowgent · watching live",
    "watch_connecting": "Connecting…",
    "watch_waiting": "Waiting for the presenter to approve: {action}",
    "watch_ended": "This link has ended.",
    "watch_language": "Language",
}
zh_tw = {
    "watch_title": "觀看 Meowgent 對話",
    "watch_heading": "🐱 Meowgent · 即時觀看",
    "watch_connecting": "連線中…",
    "watch_waiting": "等待簡報者核准：{action}",
    "watch_ended": "這個連結已經結束。",
    "watch_language": "語言",
}
WORDS = {ENGLISH: en, CHINESE: zh_tw}


def word(language: str, key: str) -> str:
    """The sentence `key` in `language` (English if the language is unknown); fill fields with safehtml.fill."""
    return WORDS.get(language, en)[key]
