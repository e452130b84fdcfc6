"""HTML for the page built only from escaped text: what the model writes is data, never markup.

Everything the chat, the card and the log show is one line of HTML made here. Text is escaped
so that neither the browser's HTML parser nor Gradio's Markdown pass can find structure in it:
`<`, `&` and quotes become entities, and so does every other ASCII punctuation mark, since a
Markdown parser treats `&#42;` as a literal `*` but `*` as emphasis. No raw newline is left, so
Gradio's Markdown sees a single HTML block and passes it through untouched.
"""

from __future__ import annotations

import html
import re
import string

_LINE = "&#10;"  # a real line break inside <pre>, whitespace elsewhere
_ESCAPES = {ord(c): f"&#{ord(c)};" for c in string.punctuation} | {ord("\n"): _LINE, ord("\r"): "&#13;"}

# Characters that change how text around them looks without being seen: bidi controls can make
# `touch x` read as a comment, zero-width ones hide differences, tag characters carry hidden ASCII, and
# line separators break a line where no line break is. Shown as ⟨U+202E⟩ where it matters.
_BIDI = "\u202a-\u202e\u2066-\u2069"
_ZERO_WIDTH = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180e\u200b-\u200f\u2028\u2029\u2060-\u2064\u206a-\u206f"
    "\u3164\ufeff\uffa0\ufff9-\ufffb\U000e0000-\U000e007f"
)
_INVISIBLE = re.compile(f"[{_BIDI}{_ZERO_WIDTH}]")
_BIDI_ONLY = re.compile(f"[{_BIDI}]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")

# In a command, what looks like nothing, or like something else: a run of blank lines (line breaks with
# only blank space between) that pushes the next command below the fold, a run of blank space that
# pushes it out to the right or out of a title, a carriage return, and a space that is not the one bash
# splits words at.
_FOLDED_LINE_BREAKS = 3
_BLANK_LINES = re.compile(f"\\n(?:[^\\S\\n]*\\n){{{_FOLDED_LINE_BREAKS - 1},}}")
_OTHER_SPACES = "\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000"
_FOLDED_BLANKS = 16
_BLANK_RUN = re.compile(f"[ \t{_OTHER_SPACES}]{{{_FOLDED_BLANKS},}}")
_LOOKALIKE = re.compile(f"[\r{_OTHER_SPACES}]")


class Html(str):
    """A string that is already safe markup; plain `str` values are escaped wherever they meet one."""

    __slots__ = ()


def show_invisible(text: str, *, all_invisible: bool = True) -> str:
    """`⟨U+202E⟩` in place of each bidi control (and zero-width character, unless `all_invisible` is False)."""
    pattern = _INVISIBLE if all_invisible else _BIDI_ONLY
    text = pattern.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)
    return _CONTROL.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def escape(text: str | Html) -> Html:
    """`text` as inert HTML text (Html passes through as it is); invisible characters made visible."""
    if isinstance(text, Html):
        return text
    safe = show_invisible(text).encode("utf-8", "backslashreplace").decode("utf-8")  # lone surrogates
    return Html(safe.translate(_ESCAPES))


def escape_prose(text: str) -> Html:
    """Like escape() for running prose: bidi controls are shown, zero-width joiners (emoji, Persian) kept."""
    safe = show_invisible(text, all_invisible=False).encode("utf-8", "backslashreplace").decode("utf-8")
    return Html(safe.translate(_ESCAPES))


def tag(name: str, *children: str | Html, cls: str = "", open_: bool = False) -> Html:
    """`<name class="cls">children</name>`; `name` and `cls` are ours, children are escaped unless Html."""
    attributes = (f' class="{cls}"' if cls else "") + (" open" if open_ else "")
    return Html(f"<{name}{attributes}>{join(children)}</{name}>")


def join(parts: tuple[str | Html, ...] | list[str | Html], separator: str = "") -> Html:
    return Html(separator.join(escape(part) for part in parts))


def fill(template: str, **values: str | Html) -> Html:
    """A catalog sentence with its `{fields}` filled: the sentence and plain values escaped, Html kept."""
    out = []
    for literal, field, _, _ in string.Formatter().parse(template):
        out.append(escape(literal))
        if field is not None:
            out.append(escape(values[field]))
    return Html("".join(out))


def block(*children: str | Html, cls: str = "mg") -> Html:
    """A whole chat message or card: one `<div>`, so Markdown renderers leave it alone."""
    return tag("div", *children, cls=cls)


def visible_lines(text: str) -> str:
    """A command as it must be shown for every part of it to be seen: leading blank lines as one `⟨↵×40⟩` mark
    before the first real line, any later run of two or more blank lines as such a mark at the start of the
    line after it, 16 or more blank characters in a row as `⟨␣×200⟩`, and carriage returns and spaces other
    than the plain one as `⟨U+000D⟩`."""
    stripped = text.lstrip("\n\r \t")
    if leading := text[: len(text) - len(stripped)].count("\n"):
        text = f"⟨↵×{leading}⟩ {stripped}"
    text = _BLANK_LINES.sub(_fold_line_breaks, text)
    text = _BLANK_RUN.sub(lambda run: f"⟨␣×{len(run.group())}⟩", text)
    return _LOOKALIKE.sub(lambda m: f"⟨U+{ord(m.group()):04X}⟩", text)


def _fold_line_breaks(run: re.Match[str]) -> str:
    breaks = run.group().count("\n")
    return f"\n⟨↵×{breaks}⟩" + ("" if run.end() == len(run.string) else " ")


def shown_text(markup: str) -> str:
    """The text a browser shows for HTML made here, for scripts that read the chat through the API."""
    lines = re.sub(r"<br>|</(?:p|li|pre|h\d|summary|span|div)>", "\n", markup)
    return html.unescape(re.sub(r"<[^>]*>", "", lines))
