"""The watch page: one chat as its owner sees it, for people who only watch.

The same escaped renderer as the owner's page (`ChatView`, `safehtml`), with the owner's controls left out:
no message box, no buttons, no sidebar, no workspace path. A waiting call is one sentence, "Waiting for the
presenter to approve: Run `ls`". The page itself is a small static shell; the chat arrives as items of HTML
over Server-Sent Events (`meowgent.ui.routes.watchroutes`), and a script of our own (served from our origin, so the
app's CSP holds) puts them in place.
"""

from __future__ import annotations

from typing import Any

import gradio as gr

from meowgent.events import AgentEvent, ToolCall
from meowgent.ui.html.actions import action, lookup
from meowgent.ui.html.safehtml import Html, escape, fill, join, tag
from meowgent.ui.i18n import CHINESE, ENGLISH, LANGUAGES, pick_language, t
from meowgent.ui.state.render import CHAT_CSS, ChatView

SCRIPT_PATH = "script.js"
"""The page's script, beside the pages under the watch mount (relative, so it works under any prefix)."""
_HTML_LANG = {ENGLISH: "en", CHINESE: "zh-Hant-TW"}

WATCH_CSS = """
* { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Noto Sans TC", sans-serif; color: #1f2328;
  background: #f6f8fa; }
header { position: sticky; top: 0; display: flex; flex-wrap: wrap; gap: 4px 12px; align-items: center;
  justify-content: space-between; padding: 8px 12px; background: #fff; border-bottom: 1px solid #d0d7de; }
header h1 { font-size: 1rem; margin: 0; }
nav a { margin-left: 8px; color: inherit; }
nav a[aria-current] { font-weight: 600; text-decoration: none; }
#chat { max-width: 52rem; margin: 0 auto; padding: 12px; display: flex; flex-direction: column; gap: 10px; }
.mg-msg { padding: 8px 12px; border-radius: 12px; background: #fff; border: 1px solid #d0d7de;
  overflow-wrap: anywhere; min-width: 0; }
.mg-user { align-self: flex-end; max-width: 85%; background: #ddf4ff; }
.mg-panel summary { font-weight: 500; }
.mg-panel .mg-log, .mg-panel .mg-duration { opacity: 0.7; font-weight: 400; margin-left: 6px; }
.mg-waiting { border: 2px solid #bf8700; background: #fff8c5; font-weight: 500; }
.mg code, .mg-waiting code { font-size: 0.9em; overflow-wrap: anywhere; }
.mg-ended { text-align: center; padding: 2rem 1rem; }
@media (max-width: 600px) { body { font-size: 15px; } #chat { padding: 8px; } .mg-user { max-width: 95%; } }
"""

WATCH_SCRIPT = """
"use strict";
// Frames come as Server-Sent Events: "patch" carries the item count and the items that changed; "ended"
// carries the sentence that replaces the chat. Items are HTML built from escaped text on the server.
const chat = document.getElementById("chat");
const events = new EventSource(location.pathname.replace(/\\/+$/, "") + "/events" + location.search);
events.addEventListener("patch", (message) => {
  const [count, changed] = JSON.parse(message.data);
  const atBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 40;
  if (chat.dataset.live !== "1") { chat.replaceChildren(); chat.dataset.live = "1"; }
  while (chat.children.length > count) chat.lastElementChild.remove();
  for (const [index, html] of changed) {
    const item = document.createElement("div");
    item.className = "mg-item";
    item.innerHTML = html;
    const old = chat.children[index];
    if (old) old.replaceWith(item); else chat.append(item);
  }
  if (atBottom) window.scrollTo(0, document.body.scrollHeight);
});
events.addEventListener("ended", (message) => {
  events.close();
  const sentence = document.createElement("p");
  sentence.className = "mg-ended";
  sentence.textContent = message.data;
  chat.replaceChildren(sentence);
});
"""


class WatchView:
    """A chat folded from its events, as items of HTML in either language (a `FrameSource` for a Broadcast)."""

    def __init__(self) -> None:
        # One view per language: a ChatView caches its rendered messages for one language at a time.
        self._views = {language: ChatView(language, undo=False) for language in LANGUAGES}
        self._cache: dict[str, dict[int, tuple[Any, Html]]] = {language: {} for language in LANGUAGES}

    def apply(self, event: AgentEvent) -> None:
        for view in self._views.values():
            view.apply(event)

    def items(self, language: str) -> tuple[str, ...]:
        """One item per message, then one per waiting call; an unchanged item is the same object as last time."""
        view = self._views.get(language) or self._views[ENGLISH]
        cache, fresh = self._cache[view.language], {}
        for message in [*view.messages(), *view.waiting]:
            hit = cache.get(id(message))
            item = hit[1] if hit is not None and hit[0] is message else _item(message, view.language)
            fresh[id(message)] = (message, item)  # the object is kept, so its id is not reused while cached
        self._cache[view.language] = fresh
        return tuple(item for _, item in fresh.values())


def _item(shown: gr.ChatMessage | ToolCall, language: str) -> Html:
    return waiting_html(shown, language) if isinstance(shown, ToolCall) else message_html(shown)


def message_html(message: gr.ChatMessage) -> Html:
    """A chat message as the owner's chatbot shows it: a bubble, or a titled panel open while it is pending."""
    role = "user" if message.role == "user" else "assistant"
    content = message.content if isinstance(message.content, str) else ""
    metadata = message.metadata if isinstance(message.metadata, dict) else {}
    if not metadata.get("title"):
        return tag("div", content, cls=f"mg-msg mg-{role}")
    pending = metadata.get("status") == "pending"
    summary = [("⏳ " if pending else ""), metadata["title"]]
    if metadata.get("log"):
        summary.append(tag("span", str(metadata["log"]), cls="mg-log"))
    if isinstance(metadata.get("duration"), int | float):
        summary.append(tag("span", f"{metadata['duration']} s", cls="mg-duration"))
    return tag("details", tag("summary", *summary), content, cls="mg-msg mg-panel", open_=pending)


def waiting_html(call: ToolCall, language: str) -> Html:
    """The approval card as watchers see it: one sentence naming the call in plain words, and nothing to click."""
    what = action(call.name, lookup(call.arguments), language)
    return tag("div", fill(t(language, "watch_waiting"), action=what), cls="mg-msg mg-waiting")


def watch_language(asked: str | None, accept_language: str | None) -> str:
    """The page's language: the viewer's own pick (`?lang=`), else their browser's; never the owner's."""
    return asked if asked in LANGUAGES else pick_language(accept_language)


def page_html(language: str, *, ended: str | None = None) -> str:
    """The page's shell: a header with the language switch, and the chat the script fills, or (and no script)
    the one sentence `ended` says instead: the link has ended, or there are too many viewers now."""
    links = join(
        [
            Html(f'<a href="?lang={code}"{" aria-current" if code == language else ""}>{escape(name)}</a>')
            for code, name in LANGUAGES.items()
        ]
    )
    body = tag("p", t(language, "watch_connecting")) if ended is None else tag("p", ended, cls="mg-ended")
    script = f'<script src="{SCRIPT_PATH}"></script>' if ended is None else ""
    return (
        f'<!doctype html><html lang="{_HTML_LANG.get(language, "en")}"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="referrer" content="no-referrer">'
        '<meta name="robots" content="noindex">'
        f"<title>{escape(t(language, 'watch_title'))}</title><style>{CHAT_CSS}{WATCH_CSS}</style></head>"
        f"<body><header><h1>{escape(t(language, 'watch_heading'))}</h1>"
        f'<nav aria-label="{escape(t(language, "watch_language"))}">{links}</nav></header>'
        f'<main id="chat" class="mg" aria-live="polite">{body}</main>{script}</body></html>'
    )
