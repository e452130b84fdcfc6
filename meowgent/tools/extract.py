"""Readable Markdown from an HTML page: pure functions, no I/O.

readability-lxml finds the article; html2text turns it into Markdown. Around them we add
what Mozilla's Readability (Firefox Reader View) does and readability-lxml lacks: drop
what a reader never sees, prune boilerplate by class name with Mozilla's exemptions,
retry without that pruning when it leaves too little, and fall back to the page's main
region, cleaned as an article is, when the "article" is a sliver of the page (a home page
or a listing). Its last cleaning keeps what Mozilla keeps and it would drop: captions,
bylines, credits, reference lists, data tables, linked headings, and short blocks on pages
in Chinese, Japanese or Korean.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable

import html2text
import lxml.etree
import lxml.html
from readability import Document
from readability.readability import Unparseable, text_length

_NEVER_SHOWN = frozenset({"script", "style", "noscript", "template", "link", "meta", "dialog"})
_CONTROLS_AND_EMBEDS = frozenset(
    {"button", "select", "textarea", "input", "iframe", "object", "embed", "svg", "canvas"}
)
_PAGE_CHROME = frozenset({"nav", "aside", "footer"})
_INVISIBLE_TAGS = _NEVER_SHOWN | _CONTROLS_AND_EMBEDS | _PAGE_CHROME
_BOILERPLATE_ROLES = frozenset({"menu", "menubar", "complementary", "navigation", "alert", "alertdialog", "dialog"})
_HIDDEN_STYLE = re.compile(r"(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)", re.I)
# HTML's own whitespace (not U+00A0): outside <pre>, a run of it, or one line break or tab, shows as one space.
_HTML_SPACES = re.compile(r"[ \t\n\r\f]{2,}|[\t\n\r\f]")
# What a browser does not show and lxml refuses to store: C0 control characters but tab, line feed and return.
_CONTROLS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f]")

# Mozilla Readability's lists (Readability.js REGEXPS.unlikelyCandidates, okMaybeItsACandidate, shareElements).
_UNLIKELY = re.compile(
    r"-ad-|ai2html|banner|breadcrumbs|combx|comment|community|cover-wrap|disqus|extra|footer|gdpr|header|legends|menu"
    r"|related|remark|replies|rss|shoutbox|sidebar|skyscraper|social|sponsor|supplemental|ad-break|agegate|pagination"
    r"|pager|popup|yom-remote",
    re.I,
)
_MAYBE_CONTENT = re.compile(r"and|article|body|column|content|main|shadow", re.I)
_SHARE = re.compile(r"(?:\b|_)(?:share|sharedaddy)(?:\b|_)", re.I)
_SHARE_MAX_CHARS = 500
# Text inside these is content whatever its class says: prose, code and data.
_PROTECTING_TAGS = frozenset({"p", "pre", "code", "table"})
_NEVER_PRUNED = frozenset({"html", "body", "a", "main", "article"})

# Below this many characters the class-name pruning probably cut the article itself (Mozilla retries at 500).
_SHORT_ARTICLE_CHARS = 1000
# The article's other parts must add this much text, and be prose rather than link lists, to be taken whole.
_ARTICLE_GROWTH = 1.3
_ARTICLE_MAX_LINK_DENSITY = 0.15
# An article under this share of the page's visible text means the page has no single article.
_SLIVER_SHARE = 0.15

# readability-lxml's last step cleans away short or link-heavy blocks; these names mark the article's own matter
# there (who wrote it, when, the photo's caption and credit, its references), which a reader keeps.
_ARTICLE_MATTER = re.compile(
    r"byline|author|dateline|caption|credit|reference|reflist|footnote|citation|published|pubdate|timestamp", re.I
)
_HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
# Mozilla's signs that a table holds data rather than lays out the page: many rows, many columns, or many cells.
_DATA_TABLE_MIN_ROWS = 10
_DATA_TABLE_MIN_COLUMNS = 5
_DATA_TABLE_MIN_CELLS = 11

# readability-lxml scores and keeps a block only from 25 characters, about five English words. A CJK character is
# about a word, so on a page mostly in CJK a short titled item would go; there the bar is about as many words.
_SHORTEST_TEXT = 25
_SHORTEST_CJK_TEXT = 8
_CJK_PAGE_SHARE = 0.5
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")

# lxml refuses a str that declares its own encoding (XHTML pages start with one), and libxml2 takes time
# cubic in the length of an unclosed `<?xml` at the very start. A browser shows neither, so leading
# processing instructions go, closed or not.
_LEADING_INSTRUCTIONS = re.compile(r"(?:\s*<\?[^>]*>?)*")
_EXTRA_BLANK_LINES = re.compile(r"\n{3,}")
# html2text keeps the space that starts a heading's text: "##  Title".
_HEADING_GAP = re.compile(r"^(#{1,6})  +", re.M)


class _Readability(Document):
    """readability-lxml, with two of its steps changed to behave like Mozilla's Readability."""

    keeps_blocks_around_matter = True

    def remove_unlikely_candidates(self) -> None:
        """Skipped: `_drop_unlikely` prunes by class name with Mozilla's exemptions.

        readability-lxml would also drop links (`<a class="popup">` around a sentence) and embedded
        tweets, which Mozilla keeps.
        """

    def get_semantic_main_candidate(self, candidates: dict, best_candidate: dict) -> dict:
        """Like readability-lxml's step for <main>, also for <article>: take the whole article when it has more text.

        Sites that split a story into <section>s (Medium) otherwise lose every section but one.
        """
        best = best_candidate["elem"]
        article = next((ancestor for ancestor in best.iterancestors() if ancestor.tag == "article"), None)
        if (
            article is not None
            and text_length(article) >= _ARTICLE_GROWTH * text_length(best)
            and self.get_link_density(article) <= _ARTICLE_MAX_LINK_DENSITY
        ):
            candidates[article] = self.score_node(article)
            return candidates[article]
        return super().get_semantic_main_candidate(candidates, best_candidate)

    def get_preserved_elements(self, node: lxml.html.HtmlElement) -> dict:
        """What the last cleaning keeps: readability-lxml's choice, and the article's own matter.

        That is figures and captions, blocks named as bylines, credits or references, the blocks around
        them, and data tables. What else those blocks hold is still judged on its own.
        """
        preserved = super().get_preserved_elements(node)
        matter = [*node.iter("figure", "figcaption"), *(found for found in node.iter() if _is_named_matter(found))]
        holds_table = _holders(node, node.iter("table"))
        data_tables = [table for table in node.iter("table") if table not in holds_table and _is_data_table(table)]
        around = _holders(node, matter) if self.keeps_blocks_around_matter else set()
        for element in (*matter, *around, *data_tables):
            preserved[element] = True
        return preserved

    def get_link_density(self, elem: lxml.html.HtmlElement) -> float:
        """As readability-lxml's, but none for a heading: a titled item's heading links to the item itself."""
        return 0.0 if elem.tag in _HEADINGS else super().get_link_density(elem)


class _RegionReadability(_Readability):
    """Takes the page's main region whole as the article, so that only readability-lxml's last cleaning judges it."""

    # On a page of many items each has its own byline and photo credit: keeping the blocks around them would keep
    # every teaser, link-heavy or not. Here such a block stays only if the cleaning keeps it.
    keeps_blocks_around_matter = False

    def select_best_candidate(self, candidates: dict) -> dict:
        region = _main_region(self.html)
        if region not in candidates:
            candidates[region] = self.score_node(region)
        return candidates[region]


def _holders(node: lxml.html.HtmlElement, found: Iterable[lxml.html.HtmlElement]) -> set[lxml.html.HtmlElement]:
    """The elements under node around any of found, in time linear in the tree: each climb stops at a known one."""
    holders: set[lxml.html.HtmlElement] = set()
    for element in found:
        for ancestor in element.iterancestors():
            if ancestor in holders:
                break
            holders.add(ancestor)
            if ancestor is node:
                break
    return holders


def _is_named_matter(element: lxml.html.HtmlElement) -> bool:
    return isinstance(element.tag, str) and bool(
        _ARTICLE_MATTER.search(" ".join(element.get(name) or "" for name in ("class", "id", "itemprop", "rel")))
    )


def _is_data_table(table: lxml.html.HtmlElement) -> bool:
    """Whether a table (holding no other table) shows data, by Mozilla's signs: headers, a caption, or its size."""
    if table.get("role") == "presentation":
        return False
    if any(True for _ in table.iter("th", "thead", "caption")):
        return True
    rows = list(table.iter("tr"))
    columns = max((len(row) for row in rows), default=0)
    return (
        len(rows) >= _DATA_TABLE_MIN_ROWS
        or columns >= _DATA_TABLE_MIN_COLUMNS
        or len(rows) * columns >= _DATA_TABLE_MIN_CELLS
    )


def extract_markdown(html: str, url: str) -> tuple[str, str]:
    """The page's title (else url) and its main text as Markdown; links become their text, images are dropped."""
    try:
        doc = lxml.html.document_fromstring(html[_LEADING_INSTRUCTIONS.match(html).end() :])
    except lxml.etree.ParserError:  # nothing but whitespace
        return "", ""
    title = _title(doc) or url
    _drop_invisible(doc)
    page_text = doc.text_content()
    page_chars = _visible_chars(page_text)
    shortest = _shortest_text(page_text)
    pruned = copy.deepcopy(doc)
    _drop_unlikely(pruned)
    markdown = _article(pruned, shortest)
    if _visible_chars(markdown) < _SHORT_ARTICLE_CHARS:
        unpruned = _article(doc, shortest)
        if _visible_chars(unpruned) > _visible_chars(markdown):
            markdown = unpruned
    if _visible_chars(markdown) < _SLIVER_SHARE * page_chars:
        markdown = max(markdown, _cleaned_region(pruned, shortest), key=_visible_chars)
    return title, _tidy(markdown)


def _title(doc: lxml.html.HtmlElement) -> str:
    for path in (".//title", ".//h1"):
        found = doc.find(path)
        if found is not None:
            text = " ".join(found.text_content().split())
            if text:
                return text
    return ""


def _drop_invisible(doc: lxml.html.HtmlElement) -> None:
    """Drop what a reader never sees, and lay out the text outside <pre> as a browser shows it (see `_as_shown`)."""
    preformatted = {inner for pre in doc.iter("pre", "textarea") for inner in pre.iter()}
    doomed = []
    for element in doc.iter():
        if element.tail and element.getparent() not in preformatted:  # a tail is its parent's text
            element.tail = _as_shown(element.tail)
        if (
            not isinstance(element.tag, str)  # comments and processing instructions
            or element.tag in _INVISIBLE_TAGS
            or element.get("hidden") is not None
            or element.get("aria-hidden") == "true"
            or element.get("role") in _BOILERPLATE_ROLES
            or _HIDDEN_STYLE.search(element.get("style") or "")
        ):
            doomed.append(element)
        elif element.text and element not in preformatted:
            element.text = _as_shown(element.text)
    _drop_all(doomed)


def _as_shown(text: str) -> str:
    """Each run of HTML whitespace as one space, control characters gone.

    Whitespace runs make readability-lxml's regexes slow, and a line break must go even alone: html2text's
    Markdown escaping rescans from every line start (quadratic on line breaks between no-break spaces).
    lxml refuses to store control characters.
    """
    return _HTML_SPACES.sub(" ", _CONTROLS.sub("", text))


def _drop_unlikely(doc: lxml.html.HtmlElement) -> None:
    """Drop boilerplate recognized by its class or id (comments, share bars, related posts), as Mozilla does."""
    holds_article = {ancestor for found in doc.iter("main", "article") for ancestor in found.iterancestors()}
    doomed = []
    stack = [(doc, False)]
    while stack:
        element, protected = stack.pop()
        if not protected and element.tag not in _NEVER_PRUNED and element not in holds_article:
            names = f"{element.get('class') or ''} {element.get('id') or ''}"
            if (_UNLIKELY.search(names) and not _MAYBE_CONTENT.search(names)) or (
                _SHARE.search(names) and len(element.text_content()) < _SHARE_MAX_CHARS
            ):
                doomed.append(element)
                continue
        protected = protected or element.tag in _PROTECTING_TAGS
        stack.extend((child, protected) for child in element if isinstance(child.tag, str))
    _drop_all(doomed)


def _drop_all(elements: list[lxml.html.HtmlElement]) -> None:
    for element in elements:
        if element.getparent() is not None:  # the root cannot go, and it keeps what it holds
            element.drop_tree()


def _shortest_text(page_text: str) -> int:
    """The fewest characters a paragraph or block needs to count: fewer on a page written mostly in CJK."""
    characters = len("".join(page_text.split()))
    if characters and len(_CJK.findall(page_text)) > _CJK_PAGE_SHARE * characters:
        return _SHORTEST_CJK_TEXT
    return _SHORTEST_TEXT


def _article(doc: lxml.html.HtmlElement, shortest_text: int, *, reader: type[_Readability] = _Readability) -> str:
    try:
        summary = reader(doc, min_text_length=shortest_text).summary(html_partial=True)
    except Unparseable:
        return ""
    return _to_markdown(summary)


def _cleaned_region(doc: lxml.html.HtmlElement, shortest_text: int) -> str:
    """The main region of a page of many items, cleaned as an article is: teasers made mostly of links go.

    Its images go first, from doc itself (the Markdown shows none): each item of a listing has thumbnails, and
    readability-lxml's rule against galleries, more images than paragraphs, would take the whole listing with them.
    """
    _drop_all(list(doc.iter("img")))
    return _article(doc, shortest_text, reader=_RegionReadability)


def _main_region(doc: lxml.html.HtmlElement) -> lxml.html.HtmlElement:
    for path in (".//main", ".//*[@role='main']", ".//body"):
        found = doc.find(path)
        if found is not None:
            return found
    return doc


def _to_markdown(html: str) -> str:
    converter = html2text.HTML2Text()
    converter.body_width = 0  # the model reads long lines fine; wrapping would break its quotes
    converter.unicode_snob = True
    # URLs would be most of the text on link-heavy pages and cost the model context it needs for the words.
    converter.ignore_links = True
    converter.ignore_images = True
    # html2text's `_` is a word character: `_The Groundhog Day_` would be searched and tokenized as `_the`.
    converter.emphasis_mark = "*"
    return converter.handle(html)


def _visible_chars(text: str) -> int:
    return len(" ".join(text.split()))


def _tidy(markdown: str) -> str:
    # Line by line, not with the regex `[ \t]+$` (re.M): that one rescans a run of spaces from each of its
    # characters when no line end follows, quadratic in a long <pre>.
    markdown = "\n".join(line.rstrip(" \t") for line in markdown.split("\n"))
    markdown = _HEADING_GAP.sub(r"\1 ", markdown)
    return _EXTRA_BLANK_LINES.sub("\n\n", markdown).strip("\n")
