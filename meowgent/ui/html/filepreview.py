"""A file preview as safe HTML (pure): numbered lines, Markdown from escaped text, an image as a data: URL, or a note.

Nothing here loads a URL: Markdown goes through `prose_html` (images and links become text), and an image is its
own bytes in a `data:` URL, which the page's CSP allows for `img-src` (see `ui/guard.py`). Every piece of text is
escaped by `safehtml`; the only markup is ours.
"""

from __future__ import annotations

import base64

from meowgent.files.preview import Binary, Image, MarkdownText, Preview, TextPage
from meowgent.files.sizes import human_size
from meowgent.ui.html.prose import prose_html
from meowgent.ui.html.safehtml import Html, block, escape, fill, join, tag
from meowgent.ui.i18n import CATALOGS, ENGLISH


def preview_html(preview: Preview, *, language: str) -> Html:
    """The preview's HTML, in `language` ("en" or "zh-TW")."""
    if isinstance(preview, Binary):
        return block(_say(language, "files_binary", size=human_size(preview.size)), cls="mg file-preview binary")
    if isinstance(preview, Image):
        return block(_image(preview, language), cls="mg file-preview image")
    if isinstance(preview, MarkdownText):
        return block(prose_html(preview.text), cls="mg file-preview markdown")
    return block(*_text(preview, language), cls="mg file-preview text")


def _image(preview: Image, language: str) -> Html:
    url = f"data:{preview.mime};base64,{base64.b64encode(preview.data).decode('ascii')}"
    alt = escape(_say(language, "files_image_alt", name=preview.path))
    return Html(f'<img alt="{alt}" src="{escape(url)}">')


def _text(page: TextPage, language: str) -> list[Html]:
    if page.total_lines == 0:
        return [tag("p", _say(language, "files_empty"))]
    if not page.lines:
        return [tag("p", _say(language, "files_page_past_end", page=page.page, pages=page.pages))]
    first, last = page.lines[0][0], page.lines[-1][0]
    header = _say(
        language, "files_page", first=first, last=last, total=page.total_lines, page=page.page, pages=page.pages
    )
    rows = [tag("span", tag("span", str(number), cls="ln"), text, cls="line") for number, text in page.lines]
    parts = [tag("p", header, cls="file-page"), tag("pre", join(rows, Html("&#10;")))]
    if page.cut:
        parts.append(tag("p", _say(language, "files_line_cut"), cls="file-cut"))
    return parts


def _say(language: str, key: str, **values: object) -> Html:
    """A sentence of the catalogs with its values, escaped (`t` would format before escaping)."""
    template = CATALOGS.get(language, CATALOGS[ENGLISH]).get(key) or CATALOGS[ENGLISH][key]
    return fill(
        template, **{name: f"{value:,}" if isinstance(value, int) else str(value) for name, value in values.items()}
    )
