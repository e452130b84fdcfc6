"""The model's Markdown as safe HTML: structure kept, nothing that loads, navigates or draws over the page.

Kept: paragraphs, headings, emphasis, lists, quotes, tables, inline code and code blocks. Raw HTML
is shown as the text it is. An image becomes the text `[image: alt — url]` and a link its text with
the address after it, so the page never fetches or opens anything the model wrote.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from meowgent.ui.safehtml import Html, escape, escape_prose, tag

_PARSER = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
_BLOCK_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote"}
_TABLE_TAGS = {"table", "thead", "tbody", "tr", "th", "td"}
_INLINE_TAGS = {"em", "strong", "s"}
_ALLOWED = _BLOCK_TAGS | _TABLE_TAGS | _INLINE_TAGS


def prose_html(markdown: str) -> Html:
    """Model Markdown rendered with only the tags above, every piece of text escaped."""
    return Html("".join(_render(_PARSER.parse(markdown))))


def _render(tokens: list[Token]) -> list[str]:
    out: list[str] = []
    for token in tokens:
        if token.type == "inline":
            out.extend(_inline(token.children or []))
        elif token.type in ("code_block", "fence"):
            out.append(tag("pre", tag("code", token.content.removesuffix("\n"))))
        elif token.type == "hr":
            out.append("<hr>")
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
