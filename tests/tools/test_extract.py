"""extract_markdown on small hand-made pages: each test names one thing the cleaning must do."""

from __future__ import annotations

from meowgent.tools.extract import extract_markdown

URL = "https://news.example/story"
PROSE = " ".join(f"Sentence number {n} of the story, with a comma, and some words to score." for n in range(12))


def page(body: str, *, title: str = "A story") -> str:
    return f"<!doctype html><html><head><title>{title}</title></head><body>{body}</body></html>"


def article(*extra: str) -> str:
    paragraphs = "".join(f"<p>{PROSE}</p>" for _ in range(3))
    return page(f"<article><h1>The headline</h1>{paragraphs}{''.join(extra)}</article>")


def test_title_and_paragraphs_as_markdown() -> None:
    title, markdown = extract_markdown(article(), URL)
    assert title == "A story"
    assert markdown.count(PROSE) == 3
    assert "\n\n" in markdown
    assert not markdown.startswith(("\n", " "))


def test_links_keep_their_text_and_lose_their_urls_images_go() -> None:
    link = '<p>Read <a href="https://other.example/deep/path">the report</a> now. <img src="x.png" alt="chart"></p>'
    _, markdown = extract_markdown(article(link), URL)
    assert "Read the report now." in markdown
    assert "other.example" not in markdown
    assert "x.png" not in markdown
    assert "](" not in markdown


def test_lines_are_not_wrapped() -> None:
    _, markdown = extract_markdown(article(), URL)
    assert PROSE in markdown.splitlines()


def test_hidden_elements_and_scripts_are_dropped() -> None:
    hidden = (
        '<p hidden>HIDDENATTR</p><p style="display: none">DISPLAYNONE</p>'
        '<p style="color:red; visibility:hidden">INVISIBLE</p><div aria-hidden="true">ARIAHIDDEN</div>'
        "<script>SCRIPTTEXT()</script><style>.x{}</style><noscript>NOSCRIPT</noscript>"
    )
    _, markdown = extract_markdown(article(hidden), URL)
    for word in ("HIDDENATTR", "DISPLAYNONE", "INVISIBLE", "ARIAHIDDEN", "SCRIPTTEXT", "NOSCRIPT", ".x{}"):
        assert word not in markdown


def test_share_bars_related_posts_and_comments_are_dropped_by_class_name() -> None:
    extras = (
        '<div class="sharedaddy">Share this: Twitter Facebook</div>'
        '<div id="jp-relatedposts"><p>RELATEDPOST one, two, three, four, five, six, seven.</p></div>'
        '<section class="comments-area"><p>COMMENTTEXT from a reader, with, many, commas, in it.</p></section>'
    )
    _, markdown = extract_markdown(article(extras), URL)
    for word in ("Share this", "RELATEDPOST", "COMMENTTEXT"):
        assert word not in markdown


def test_a_link_or_text_inside_a_paragraph_survives_a_boilerplate_class() -> None:
    # readability-lxml alone drops both: `popup` and `menu` are on its list of unlikely names.
    inline = '<p>He said <a class="popup" href="#">KEEPLINK</a> and <span class="menu-term">KEEPSPAN</span>.</p>'
    _, markdown = extract_markdown(article(inline), URL)
    assert "KEEPLINK" in markdown
    assert "KEEPSPAN" in markdown


def test_preformatted_whitespace_is_kept() -> None:
    code = "<pre>def f():\n    return  1\n\n\nprint(f())</pre>"
    _, markdown = extract_markdown(article(code), URL)
    assert "    return  1" in markdown


def test_short_page_whose_text_sits_in_boilerplate_named_elements_is_read_anyway() -> None:
    # Like MathJax's `CtxtMenu` containers: pruning by name leaves almost nothing, so the retry keeps them.
    body = "".join(f'<div class="ContextMenu_{n}">Equation {n} says that energy equals mass.</div>' for n in range(8))
    _, markdown = extract_markdown(page(f"<h1>Equations</h1>{body}"), URL)
    assert "Equation 7 says" in markdown


def test_a_page_without_one_article_falls_back_to_its_main_region() -> None:
    teasers = "".join(f"<section><h2>Headline {n}</h2><p>Teaser {n} in a few words.</p></section>" for n in range(40))
    html = page(f"<header><p>SITE HEADER</p></header><main>{teasers}</main>")
    _, markdown = extract_markdown(html, URL)
    assert "Headline 0" in markdown
    assert "Teaser 39" in markdown
    assert "SITE HEADER" not in markdown


def test_a_listing_with_thumbnails_keeps_every_item_and_loses_its_link_lists() -> None:
    # Each item scores alone, so the "article" is one item: a sliver. Its main region is then cleaned as an
    # article is: two thumbnails an item must not read as a gallery to drop (they outnumber the paragraphs),
    # and a byline does not keep a list of linked headlines around it, as it keeps an article's own byline block.
    items = "".join(
        f'<li><article><a href="/story/{n}"><img src="wide{n}.jpg"><img src="narrow{n}.jpg"></a>'
        f'<div><h2><a href="/story/{n}">Headline {n}</a></h2><p>Summary {n} says what happened and why it matters '
        f'to the people who read it. <span class="byline">By Reporter {n}</span></p></div></article></li>'
        for n in range(12)
    )
    sections = "".join(f'<li><a href="/section/{n}">Section number {n}</a></li>' for n in range(12))
    more = f"<div><h2>More sections</h2><ul>{sections}</ul></div>"
    popular = "".join(
        f'<li><a href="/story/{n}">Most read story number {n} of the day</a> <span class="byline">By Ann</span></li>'
        for n in range(5)
    )
    most_read = f"<div><h2>Most read</h2><ul>{popular}</ul></div>"
    _, markdown = extract_markdown(page(f"<main><div><ol>{items}</ol></div>{more}{most_read}</main>"), URL)
    assert all(f"## Headline {n}" in markdown for n in range(12))
    assert all(f"Summary {n} says" in markdown and f"By Reporter {n}" in markdown for n in range(12))
    assert "Section number" not in markdown
    assert "Most read story" not in markdown


def test_title_falls_back_to_the_first_heading_then_to_the_url() -> None:
    assert extract_markdown("<html><body><h1> Only   a heading </h1><p>x</p></body></html>", URL)[0] == "Only a heading"
    assert extract_markdown("<html><body><p>No title at all.</p></body></html>", URL)[0] == URL


def test_empty_and_degenerate_pages() -> None:
    assert extract_markdown("", URL) == ("", "")
    assert extract_markdown("   \n", URL) == ("", "")
    assert extract_markdown("<html></html>", URL) == (URL, "")
    assert extract_markdown("just some text, no tags", URL)[1] == "just some text, no tags"


def test_an_xhtml_page_with_an_xml_declaration() -> None:
    xhtml = '<?xml version="1.0" encoding="utf-8"?>\n' + article().replace(
        "<html>", '<html xmlns="http://www.w3.org/1999/xhtml">'
    )
    title, markdown = extract_markdown(xhtml, URL)
    assert title == "A story"
    assert PROSE in markdown


def test_a_long_run_of_spaces_in_pre_is_trimmed_at_ten_times_the_size_that_took_seconds() -> None:
    """40 KB of spaces in a <pre> took 3.3 s (a regex rescanning the run from each space); here 400 KB."""
    _, markdown = extract_markdown(article(f"<pre>{' ' * 400_000}x{' ' * 400_000}\ny  </pre>"), URL)
    assert markdown.count(PROSE) == 3
    # html2text indents code by four spaces; the spaces before x stay, those that end a line go.
    assert markdown.endswith("\n\n" + " " * 400_004 + "x\n    y")


def test_an_unclosed_xml_declaration_is_dropped_at_any_length() -> None:
    """libxml2 took 10 s on `<?xml` and 40 KB of spaces at the start of a page; here 400 KB, and the variants."""
    for start in ("<?xml", "<?xml version='1.0'", "<?xml-stylesheet", "<?xml?><?xml"):
        assert extract_markdown(start + " " * 400_000, URL) == ("", "")
    title, markdown = extract_markdown("<?xml version='1.0' encoding='utf-8'?>\n" + article(), URL)
    assert title == "A story"
    assert markdown.count(PROSE) == 3


def test_line_breaks_between_no_break_spaces_read_in_linear_time() -> None:
    """20 KB of them took 9 s: html2text's escaping rescanned from every line start. Here 400 KB; a browser
    shows a line break outside <pre> as a space, and so do we."""
    _, markdown = extract_markdown(article("<p>one" + "\n\u00a0" * 200_000 + "two</p>"), URL)
    assert markdown.count(PROSE) == 3
    assert markdown.endswith("\n\none two")  # html2text runs the no-break spaces together too


def test_control_characters_in_a_page_do_not_break_the_reading() -> None:
    for control in ("\f", "\v", "\x01", "\x1c"):
        _, markdown = extract_markdown(article(f"<p>cat{control}nap</p><pre>a{control}b</pre>"), URL)
        assert "cat nap" in markdown if control == "\f" else "catnap" in markdown  # a form feed is HTML whitespace
        assert f"a{control}b" in markdown  # <pre> keeps its text as it is


def test_emphasis_is_marked_with_stars_not_glued_to_words() -> None:
    _, markdown = extract_markdown(article("<p>We watched <em>The Groundhog Day</em> and <i>Heat</i> twice.</p>"), URL)
    assert "We watched *The Groundhog Day* and *Heat* twice." in markdown
    assert "_" not in markdown


def test_a_linked_author_and_a_linked_reference_list_are_kept() -> None:
    byline = (
        '<div class="article-meta"><div class="author"><a href="/people/jd">Jane Doe</a></div><div>May 5</div></div>'
    )
    references = '<section class="references"><ol><li><a href="/cite/1">Smith 2001, Nature</a></li></ol></section>'
    _, markdown = extract_markdown(article(byline, references), URL)
    assert "Jane Doe" in markdown
    assert "Smith 2001, Nature" in markdown


def test_a_caption_and_its_linked_credit_are_kept() -> None:
    figure = (
        '<div class="media"><figure><img src="harbour.jpg"><figcaption>The harbour at dawn. Photo: '
        '<a href="/people/ann">Ann Lee</a></figcaption></figure></div>'
    )
    _, markdown = extract_markdown(article(figure), URL)
    assert "The harbour at dawn. Photo: Ann Lee" in markdown


def test_headings_that_link_to_their_item_are_kept() -> None:
    items = "".join(f'<h3><a href="/films/{n}">{n}) Film number {n}</a></h3><p>{PROSE}</p>' for n in range(3))
    _, markdown = extract_markdown(article(items), URL)
    assert all(f"### {n}) Film number {n}" in markdown for n in range(3))


def test_a_small_data_table_is_kept() -> None:
    table = "<table><tr><th>Year</th><th>Users</th></tr><tr><td>1998</td><td>12</td></tr></table>"
    _, markdown = extract_markdown(article(table), URL)
    assert "Year" in markdown
    assert "1998" in markdown


def test_short_titled_items_on_a_cjk_page_are_kept() -> None:
    # Nine characters are a short sentence in Japanese, and under the 25 that five English words take.
    prose = "東京の新しい駅は来月開業する予定で、周辺の商店街も準備を進めている。多くの住民が期待を寄せている。" * 3
    items = "".join(f'<div class="item"><h3>見出し{n}</h3><div>新駅の開業日が決定</div></div>' for n in range(3))
    html = page(f"<article><h1>新駅</h1><p>{prose}</p><p>{prose}</p>{items}<p>{prose}</p></article>")
    _, markdown = extract_markdown(html, URL)
    assert markdown.count("新駅の開業日が決定") == 3
    assert all(f"### 見出し{n}" in markdown for n in range(3))


def test_a_short_latin_block_still_goes() -> None:
    _, markdown = extract_markdown(article('<div class="item"><div>Opens soon</div></div>'), URL)
    assert "Opens soon" not in markdown
