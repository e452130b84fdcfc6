"""Presenter mode: the page made for a room (larger text, no sidebar, the card large, the watch link's QR code in a
corner of a wide screen). A class on the page's body, toggled in the browser: no request, nothing on the server."""

from __future__ import annotations

PRESENTER_CLASS = "mg-presenter"
WIDE = "(min-width: 1024px)"
"""A screen wide enough for the QR code in a corner beside the chat."""
WIDE_CLASS = "mg-wide"
"""Set with presenter mode on a wide screen: Gradio rewrites the rules inside a page's @media blocks to apply
only under `.gradio-container .contain`, so a rule there could not read a class on the body."""

PRESENTER_KEY = "meowgent-presenter"
"""The browser's localStorage entry that keeps presenter mode on across reloads of the presenter's page (the
presenter's own browser: a watch page never reads it)."""

_SHOW = f"""(on) => {{
  document.body.classList.toggle("{PRESENTER_CLASS}", on);
  document.body.classList.toggle("{WIDE_CLASS}", window.matchMedia("{WIDE}").matches);
  const mark = () => {{
    const button = document.getElementById("presenter");
    if (!button) return requestAnimationFrame(mark);
    button.setAttribute("aria-pressed", String(on));
  }};
  mark();
}}"""
"""Presenter mode on or off on the page; the top bar's button may not be drawn yet when a reload restores it."""

TOGGLE_PRESENTER = f"""() => {{
  const on = !document.body.classList.contains("{PRESENTER_CLASS}");
  ({_SHOW})(on);
  try {{ localStorage.setItem("{PRESENTER_KEY}", on ? "1" : ""); }} catch {{}}  // storage off: this page only
  if (on) document.querySelector(".sidebar.open .toggle-button")?.click();
}}"""

RESTORE_PRESENTER = f"""() => {{
  let on = false;
  try {{ on = localStorage.getItem("{PRESENTER_KEY}") === "1"; }} catch {{}}
  if (on) ({_SHOW})(true);
  return on;
}}"""
"""Run as the page loads: presenter mode back on if it was on when the page was left; true if it is."""

PRESENTER_CSS = f"""
#presenter {{ flex: none; white-space: nowrap; margin-left: auto; }}
#presenter[aria-pressed="true"] {{ background: var(--color-accent); color: white; }}
#presenter_qr {{ display: none !important; }}
body.{PRESENTER_CLASS} .sidebar, body.{PRESENTER_CLASS} #menu {{ display: none !important; }}
body.{PRESENTER_CLASS} .gradio-container {{
  --text-xxs: 13px; --text-xs: 15px; --text-sm: 17px; --text-md: 21px; --text-lg: 24px; --text-xl: 28px;
  --text-xxl: 32px; --chatbot-text-size: 22px; --body-text-size: 21px; --input-text-size: 21px;
  --button-large-text-size: 22px; --button-small-text-size: 18px; --block-label-text-size: 17px;
}}
body.{PRESENTER_CLASS} #approval {{ max-height: 85%; border-width: 4px; padding: 16px; }}
body.{PRESENTER_CLASS} #card_text {{ font-size: 24px; }}
body.{PRESENTER_CLASS} #card_actions button {{ padding-top: 14px; padding-bottom: 14px; }}
body.{PRESENTER_CLASS}.{WIDE_CLASS}:has(#presenter_qr svg) .gradio-container .contain {{
  padding-right: 248px !important;
}}
body.{PRESENTER_CLASS}.{WIDE_CLASS} .gradio-container #presenter_qr:has(svg) {{
  display: block !important; position: fixed; top: 64px; right: 12px; width: 224px; z-index: 20;
  background: #fff; padding: 6px; border-radius: 8px; box-shadow: 0 2px 12px rgb(0 0 0 / 25%);
}}
"""
"""Added to the page's CSS: nothing changes until the class is on the body."""
