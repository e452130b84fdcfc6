"""The model's Markdown as safe HTML: structure kept, nothing that loads, navigates or draws over the page.

Kept: paragraphs, headings, emphasis, lists, quotes, tables, inline code and code blocks. Raw HTML
is shown as the text it is. An image becomes the text `[image: alt — url]` and a link its text with
the address after it, so the page never fetches or opens anything the model wrote.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from meowgent.ui.html.safehtml import Html, escape, escape_prose, tag

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote"}
_TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}
_INLINE_TAGS = {"em", "strong", "s"}
_ALLOWED = _BLOCK_TAGS | _TABLE_TAGS | _INLINE_TAGS


def prose_html(markdown: str) -> Html:
    """Model Markdown rendered with only the tags above, every piece of text escaped."""
    return Html("".join(_render(_PARSER.parse(markdown))))


class LiveProse:
    """Markdown that grows (a streaming answer), rendered without parsing what is already settled again.

    Text up to the last blank line outside a code fence is settled: it is rendered once and kept, so each
    update parses only the paragraph being written. Each part is escaped on its own, so a wrong guess at
    a boundary can change how a list is numbered, never what is safe.
    """

    def __init__(self, text: str = "") -> None:
        self._parts: list[str] = []
        self.length = 0
        self._settled_html: list[str] = []
        self._settled = 0  # characters of the text rendered for good
        self._scanned = 0  # characters of the text looked at for boundaries
        self._in_fence = False
        self.add(text)

    def add(self, piece: str) -> None:
        self._parts.append(piece)
        self.length += len(piece)

    def text(self) -> str:
        if len(self._parts) > 1:
            self._parts = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def html(self) -> Html:
        text = self.text()
        boundary = self._settle(text)
        if boundary > self._settled:
            self._settled_html.append(prose_html(text[self._settled : boundary]))
            self._settled = boundary
        return Html("".join(self._settled_html) + prose_html(text[self._settled :]))

    def _settle(self, text: str) -> int:
        """The end of the last blank line outside a fence among the whole lines not yet scanned."""
        boundary = self._settled
        end = text.rfind("\n") + 1
        at = self._scanned
        for line in text[at:end].splitlines(keepends=True):
            at += len(line)
            stripped = line.strip()
            if stripped.startswith(("```", "~~~")) and len(line) - len(line.lstrip(" ")) < 4:
                self._in_fence = not self._in_fence
            elif not stripped and not self._in_fence:
                boundary = at
        self._scanned = max(self._scanned, end)
        return boundary


def _render(tokens: list[Token]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        if token.type == "inline":
            out.extend(_inline(token.children or []))
        elif token.type in ("code_block", "fence"):
            out.append(tag("pre", tag("code", token.content.removesuffix("\n"))))
        elif token.type == "hr":
            out.append("<hr>")
        elif token.type == "ordered_list_open" and str(token.attrs.get("start", "1")) not in ("1", ""):
            out.append(f'<ol start="{int(token.attrs["start"])}">')  # a number markdown-it parsed, not text
        elif token.tag in _ALLOWED and not token.hidden:  # tight lists hide their paragraphs
            out.append(f"<{token.tag}>" if token.nesting == 1 else f"</{token.tag}>" if token.nesting == -1 else "")
        elif token.content:
            out.append(escape_prose(token.content))
    return out


def _inline(children: list[Token]) -> list[str]:
    out: list[str] = []
    links: list[str] = []  # the addresses of the links we are inside, shown after their text
    for child in children:
        match child.type:
            case "text":
                out.append(escape_prose(child.content))
            case "softbreak" | "hardbreak":
                out.append("<br>")
            case "code_inline":
                out.append(tag("code", child.content))
            case "image":
                alt = "".join(c.content for c in child.children or []) or child.content
                out.append(escape(f"[image: {alt} — {child.attrs.get('src', '')}]"))
            case "link_open":
                links.append("" if child.markup == "autolink" else str(child.attrs.get("href", "")))
            case "link_close":
                address = links.pop() if links else ""
                out.append(escape(f" ({address})") if address else "")
            case _ if child.tag in _INLINE_TAGS:
                out.append(f"<{child.tag}>" if child.nesting == 1 else f"</{child.tag}>")
            case _:
                out.append(escape_prose(child.content))
    return out
