"""What a file preview shows, from the file's bytes (pure): a page of numbered lines, Markdown, an image, or "binary".

Images are recognised by their first bytes (PNG, JPEG, GIF, WebP), never by their name. Text is read line by line,
so a page of a large file costs one pass and the memory of one page.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

PAGE_LINES = 500
"""Lines on one page of a text preview."""
MAX_LINE_CHARS = 2_000
"""A longer line is cut in the preview (the download has it whole)."""
MAX_MARKDOWN_BYTES = 1_000_000
"""A larger Markdown file is shown as numbered text, in pages."""
MAX_IMAGE_BYTES = 10_000_000
"""A larger image is shown as "binary": the page would carry it whole."""
SNIFF_BYTES = 8192
_MARKDOWN_SUFFIXES = (".md", ".markdown", ".mdown")
_IMAGES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


@dataclass(frozen=True, slots=True)
class TextPage:
    path: str
    lines: tuple[tuple[int, str], ...]
    """(line number from 1, text) for this page's lines."""
    page: int
    """From 1."""
    pages: int
    total_lines: int
    cut: bool = False
    """Some line was longer than MAX_LINE_CHARS and is cut here."""


@dataclass(frozen=True, slots=True)
class MarkdownText:
    path: str
    text: str


@dataclass(frozen=True, slots=True)
class Image:
    path: str
    mime: str
    data: bytes


@dataclass(frozen=True, slots=True)
class Binary:
    path: str
    size: int


Preview = TextPage | MarkdownText | Image | Binary


def image_type(head: bytes) -> str | None:
    """The MIME type of an image by its magic bytes, for the four types every browser shows."""
    for magic, mime in _IMAGES:
        if head.startswith(magic):
            return mime
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def kind_of(path: str, head: bytes, size: int) -> str:
    """ "image", "binary", "markdown" or "text": how a file whose first bytes are `head` is previewed."""
    if image_type(head) is not None:
        return "image" if size <= MAX_IMAGE_BYTES else "binary"
    if b"\0" in head[:SNIFF_BYTES]:
        return "binary"
    if path.lower().endswith(_MARKDOWN_SUFFIXES) and size <= MAX_MARKDOWN_BYTES:
        return "markdown"
    return "text"


def text_page(path: str, lines: Iterable[bytes], *, page: int = 1, page_size: int = PAGE_LINES) -> TextPage:
    """Page `page` of the lines (each as read, line end included), decoded, numbered and cut if long.

    All the lines are counted, so the page knows how many pages there are; a page past the end has no lines.
    """
    first = (max(page, 1) - 1) * page_size
    shown: list[tuple[int, str]] = []
    cut = False
    total = 0
    for total, raw in enumerate(lines, 1):
        if total > first and len(shown) < page_size:
            text = raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", "replace")
            cut = cut or len(text) > MAX_LINE_CHARS
            shown.append((total, text[:MAX_LINE_CHARS]))
    pages = max((total + page_size - 1) // page_size, 1)
    return TextPage(path, tuple(shown), max(page, 1), pages, total, cut)
