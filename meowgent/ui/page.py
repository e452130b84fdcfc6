"""The page's look and manners: CSS, the browser script, the examples.

The main view is one screen tall and never scrolls as a whole: a status line, the chat (which gives up
room), the approval card and the message box. So the card's buttons are in view the moment it shows,
on a laptop and on a phone, and a long file scrolls inside its own box.
"""

from __future__ import annotations

from meowgent.ui.i18n import CHINESE, ENGLISH
from meowgent.ui.state.presenter import RESTORE_PRESENTER

NARROW = "(max-width: 767px)"
"""Below this width the sidebar covers the chat, so it starts closed (Gradio's own breakpoint is 768px)."""

EXAMPLES = {
    ENGLISH: [
        "What files are in my workspace?",
        "Write a short poem about cats to poem.md",
        "How much disk space is free on this computer?",
    ],
    CHINESE: ["我的工作資料夾裡有哪些檔案？", "寫一首關於貓的短詩，存成 poem.md", "這台電腦還剩多少磁碟空間？"],
}

CSS = """
/* One screen, no page scroll: the chat takes what the status line, card and message box leave. */
html, body { height: 100%; overflow: hidden; }
.gradio-container { padding: 0 !important; max-width: none !important; }
.gradio-container > .main { padding: 0 !important; height: 100dvh; }
.gradio-container .wrap.sidebar-parent { height: 100dvh; }
.gradio-container .contain { height: 100dvh; padding: 8px 12px !important; box-sizing: border-box; }
.gradio-container .contain > .column {
  height: 100%; flex-wrap: nowrap !important; gap: 8px !important; overflow: hidden;
}
/* The menu button opens the sidebar; Gradio's own arrow stays only as its close button. */
.sidebar:not(.open) > .toggle-button { display: none; }
#topbar { flex: none; align-items: center; flex-wrap: nowrap; gap: 8px; }
#menu { flex: none; }
#status { min-width: 0; }
#status p { margin: 0; font-size: var(--text-sm); }
#chat { flex: 1 1 0 !important; min-height: 6rem; height: auto !important; }
#approval {
  flex: 0 1 auto; min-height: 0; max-height: 72%; overflow: hidden; flex-wrap: nowrap !important;
  border: 2px solid var(--color-accent); border-radius: 12px; padding: 8px; gap: 8px !important;
  background: var(--background-fill-secondary);
}
#card_body { flex: 0 1 auto; min-height: 0; overflow-y: auto; flex-wrap: nowrap !important; gap: 6px !important; }
#card_body > * { flex-shrink: 0; }
#card_text p, #card_text h3 { margin: 2px 0; }
#card_details textarea, #edit_args textarea, #edit_old textarea { max-height: 30dvh; overflow-y: auto !important; }
#card_actions { flex: none; gap: 6px; flex-wrap: wrap; }
#card_actions button { flex: 1 1 8rem; min-width: 0; }
#retry { flex: none; align-self: flex-end; width: auto; }
#composer { flex: none; align-items: flex-end; flex-wrap: nowrap; gap: 6px; }
#composer button { flex: none; min-width: 4.5rem; }
/* An event's busy border stays, without Gradio's endless pulse: drawing it 60 times a second for a whole answer took
   about 0.1 of a core in Chromium (docs/benchmarks.md), from a model answering on the same CPU. */
.generating { animation: none !important; }
/* Gradio puts `.gradio-container .contain` before each selector in here: only what is inside it (HEAD_CSS). */
@media (max-width: 767px) {
  #approval { max-height: 78%; padding: 6px; }
  #card_details textarea, #edit_args textarea, #edit_old textarea { max-height: 22dvh; }
  #card_actions button { flex: 1 1 40%; }
  #composer button { min-width: 3.5rem; padding-left: 8px; padding-right: 8px; }
}
"""

HEAD_CSS = f"""
/* The phone's tighter frame, around the container itself. */
@media {NARROW} {{
  body .gradio-container .contain {{ padding: 6px !important; }}
}}
"""
"""Rules Gradio must not rewrite: in the `css` option it makes every selector inside an @media block a descendant of
`.gradio-container .contain`, so a rule there for the container (or the body) never matches. The page's head keeps
them as written; it comes before the `css` option's style, so each selector starts with `body` to outweigh it."""
HEAD = f"<style>{HEAD_CSS}</style>"
"""The page's head (Gradio's `head` launch option)."""

TOGGLE_SIDEBAR = "() => { document.querySelector('.sidebar .toggle-button')?.click(); }"
"""Open or close the sidebar right in the browser (Gradio's own toggle keeps its state in step)."""

CLOSE_ON_PHONE = f"""() => {{
  if (window.matchMedia("{NARROW}").matches) document.querySelector(".sidebar.open .toggle-button")?.click();
}}"""
"""After picking a chat on a phone, the sidebar gets out of the way of that chat."""

ON_LOAD = f"""
() => {{
  // Presenter mode survives a reload; it hides the sidebar, so the sidebar stays closed then.
  if (({RESTORE_PRESENTER})()) return;
  // The sidebar starts closed so a phone opens on the chat; a wide screen opens it once it is drawn.
  if (window.matchMedia("{NARROW}").matches) return;
  const open = () => {{
    const toggle = document.querySelector(".sidebar .toggle-button");
    if (!toggle) return requestAnimationFrame(open);
    if (!document.querySelector(".sidebar.open")) toggle.click();
  }};
  open();
}}
"""
"""Run once when the page loads (Gradio's `js` launch option)."""


def examples_for(language: str) -> list[dict[str, str]]:
    """The chat's examples in `language`; Gradio shows them only while the chat is empty."""
    return [{"text": example} for example in EXAMPLES[language]]
