"""Safe HTML: escaped text stays text for the browser and for a Markdown parser; the model's Markdown keeps
its shape but loses everything that loads or navigates; the approval log reads as a list."""

import html
import re
from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from meowgent.persist.calls import AuditRow
from meowgent.ui.html.auditlog import audit_html
from meowgent.ui.html.prose import LiveProse, prose_html
from meowgent.ui.html.safehtml import Html, block, escape, fill, show_invisible, tag, visible_lines
from meowgent.ui.i18n import CHINESE
from tests.ui.conftest import html_text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_escaped_text_reads_back_as_itself_and_has_no_markup(text):
    escaped = escape(text)
    assert not re.search(r"[<>\"'`*_\[\]()!\n]", escaped)
    assert html.unescape(escaped) == show_invisible(text).encode("utf-8", "backslashreplace").decode()


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from("<>&`*_[]()!#-+.:/\\$ \nab"), max_size=60))
def test_a_markdown_parser_finds_one_html_block_and_nothing_else(text):
    tokens = MarkdownIt("commonmark").parse(block(tag("p", text)))
    assert [token.type for token in tokens] == ["html_block"]


def test_fill_escapes_the_sentence_and_plain_values_but_keeps_html():
    filled = fill("Write {path} <now>", path=tag("code", "a<b>.md"))
    assert filled == "Write <code>a&#60;b&#62;&#46;md</code> &#60;now&#62;"
    assert fill("{x}", x="<img>") == "&#60;img&#62;"
    assert isinstance(filled, Html)


def test_invisible_characters_are_named():
    assert show_invisible("a\u202eb\u200bc\u2066d\ufeff") == "a⟨U+202E⟩b⟨U+200B⟩c⟨U+2066⟩d⟨U+FEFF⟩"
    assert show_invisible("👨\u200d👩", all_invisible=False) == "👨\u200d👩"  # an emoji family stays whole in prose
    assert show_invisible("bell\x07") == "bell⟨U+0007⟩"


def test_leading_blank_lines_become_one_mark():
    assert visible_lines("\n\n\n  ls") == "⟨↵×3⟩ ls"
    assert visible_lines("ls\n\n") == "ls\n\n"


def test_more_invisible_characters_are_named():
    hidden = "a\u00adb\u061cc\u2028d\u3164e\U000e0041f\x85g"
    assert show_invisible(hidden) == "a⟨U+00AD⟩b⟨U+061C⟩c⟨U+2028⟩d⟨U+3164⟩e⟨U+E0041⟩f⟨U+0085⟩g"


def test_a_run_of_blank_lines_anywhere_becomes_one_mark():
    assert visible_lines("echo safe" + "\n" * 40 + "touch x") == "echo safe\n⟨↵×40⟩ touch x"
    assert visible_lines("a\n \n\t\r\n  b") == "a\n⟨↵×3⟩   b"  # blank lines may hold spaces; b keeps its indent
    assert visible_lines("a\n\nb\n") == "a\n\nb\n"  # one blank line between commands is ordinary
    assert visible_lines("ls" + "\n" * 5) == "ls\n⟨↵×5⟩"


def test_runs_of_blank_space_and_look_alike_characters_are_marked_in_a_command():
    assert visible_lines("echo safe" + " " * 200 + "; rm -rf ~") == "echo safe⟨␣×200⟩; rm -rf ~"
    assert visible_lines("    indented  twice") == "    indented  twice"
    assert visible_lines("rm\u00a0-rf x\rls") == "rm⟨U+00A0⟩-rf x⟨U+000D⟩ls"


COMMAND_TEXT = st.text(alphabet=st.sampled_from([" ", "\t", "\n", "\r", "\u00a0", "\u3000", "a", "b", ";"]))


@settings(max_examples=500, deadline=None)
@given(COMMAND_TEXT)
def test_a_shown_command_keeps_every_visible_character_in_order_and_no_long_blank_run(text):
    shown = visible_lines(text)
    assert re.sub(r"⟨[^⟩]*⟩|\s", "", shown) == re.sub(r"\s", "", text)
    assert not re.search(r"\n(?:[ \t]*\n){2}", shown)
    assert not re.search(r"[ \t]{16}", shown)
    assert "\r" not in shown
    assert "\u00a0" not in shown


def test_a_command_ten_times_the_issues_size_is_folded_whole():
    """The issue's command had 40 blank lines; here 10,000 runs of 400 blank lines and blank space."""
    text = ("echo safe" + "\n" * 400 + "touch x" + " " * 400) * 10_000
    shown = visible_lines(text)
    assert shown.count("⟨↵×400⟩ touch x⟨␣×400⟩") == 10_000


def test_prose_keeps_structure_and_neutralizes_images_links_and_html():
    markup = prose_html(
        "Hi **there**\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n> quoted\n\n1. one\n2. two\n\n"
        "![alt](http://x/i.png) [text](http://x/l) <b onclick=x>raw</b> <http://x/auto>\n\n---"
    )
    assert set(re.findall(r"<(\w+)", markup)) == {"p", "strong", "table", "thead", "tr", "th", "tbody", "td"} | {
        "blockquote",
        "ol",
        "li",
        "hr",
    }
    shown = html_text(markup)
    assert "[image: alt — http://x/i.png]" in shown
    assert "text (http://x/l)" in shown
    assert "<b onclick=x>raw</b>" in shown
    assert "http://x/auto" in shown
    assert "http://x/auto (http://x/auto)" not in shown


AUDIT = AuditRow(
    time=0.0,
    tool="run_shell",
    proposed={"command": "rm -rf <img src=http://x/y> notes"},
    run=None,
    decision="rejected",
    scope="once",
    decided_by="owner_browser",
    outcome="rejected",
    reason="not <b>today</b>",
)


def test_the_approval_log_is_a_list_that_says_who_why_and_how_it_ended():
    shown = html_text(audit_html([AUDIT, replace(AUDIT, run={"command": "ls"}, decision="approved", outcome="done")]))
    assert shown.count("Run rm -rf <img src=http://x/y> notes") == 2
    assert "Decision: rejected (this time only), by you, in this browser" in shown
    assert "Reason: not <b>today</b>" in shown
    assert "What ran: nothing ran" in shown
    assert "What ran: Run ls" in shown
    assert "How it ended: it did not run" in shown
    assert "How it ended: it ran" in shown
    assert "<img" not in audit_html([AUDIT])


def test_the_approval_log_reads_in_chinese():
    shown = html_text(audit_html([AUDIT], CHINESE))
    assert "決定：已拒絕（只限這一次），由你（在這個瀏覽器）決定" in shown
    assert "原因：not <b>today</b>" in shown
    assert "結果：沒有執行" in shown
    assert html_text(audit_html([], CHINESE)).strip() == "這個對話還沒有核准紀錄。"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab `#_~>\n"), max_size=120), st.lists(st.integers(1, 15), max_size=20))
def test_a_growing_answer_renders_as_the_whole_would(text, pieces):
    live, at = LiveProse(), 0
    for size in pieces:
        live.add(text[at : at + size])
        at += size
        live.html()  # a frame: settles what it can
    live.add(text[at:])
    assert live.html() == prose_html(text)


def test_a_long_answer_rendered_frame_by_frame_reads_as_the_whole():
    paragraph = "A sentence with **bold** and `code`.\n\n"
    live = LiveProse()
    for _ in range(2_000):
        live.add(paragraph)
        live.html()
    assert live.html() == prose_html(paragraph * 2_000)
