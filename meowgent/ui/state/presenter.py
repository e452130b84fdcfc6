"""Presenter mode: the page made for a room (larger text, no sidebar, the card large, the watch link's QR code in a
corner of a wide screen). A class on the page's body, toggled in the browser: no request, nothing on the server."""

from __future__ import annotations

PRESENTER_CLASS = "mg-presenter"
WIDE = "(min-width: 1024px)"
"""A screen wide enough for the QR code in a corner beside the chat."""
WIDE_CLASS = "mg-wide"
"""Set with presenter mode on a wide screen: Gradio rewrites the rules inside a page's @media blocks to apply
only under `.gradio-container .contain`, so a rule there could not read a class on the body."""

TOGGLE_PRESENTER = f"""() => {{
  const on = document.body.classList.toggle("{PRESENTER_CLASS}");
  document.body.classList.toggle("{WIDE_CLASS}", window.matchMedia("{WIDE}").matches);
  document.getElementById("presenter")?.setAttribute("aria-pressed", String(on));
  if (on) document.querySelector(".sidebar.open .toggle-button")?.click();
}}"""

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
