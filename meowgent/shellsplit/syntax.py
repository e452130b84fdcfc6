"""Bash's grammar, from tree-sitter-bash: a line's syntax tree, and what a node is as a `Word`.

A word as shown has each substitution as the placeholder `$(...)`: its commands are read as commands of their own.
Nothing here decides what a line runs; `reader` does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import accumulate

import tree_sitter_bash
from tree_sitter import Language, Node, Parser, Tree

from meowgent.shellsplit.words import Word

_PARSER = Parser(Language(tree_sitter_bash.language()))


def parse(text: str) -> Tree:
    """The syntax tree of a command line (tree-sitter never fails: what it cannot read is an ERROR node)."""
    return _PARSER.parse(text.encode())


def node_text(node: Node) -> str:
    return (node.text or b"").decode(errors="replace")


def deepest(text: str, limit: int) -> int:
    """About how many `(` and `{` are open at most, quotes ignored; one pass. It guards time, not meaning."""
    if text.count("(") + text.count("{") <= limit:
        return 0  # the count is bound to be small: no need to walk the text
    brackets = _NOT_BRACKETS.sub("", text)
    return max(accumulate(map(_STEPS.__getitem__, brackets)), default=0)


_NOT_BRACKETS = re.compile(r"[^(){}]+")
_STEPS = {"(": 1, "{": 1, ")": -1, "}": -1}


def fields(node: Node) -> Iterator[tuple[str | None, Node]]:
    """The node's children with their field names, in one pass (asking per index walks the children each time)."""
    cursor = node.walk()
    if cursor.goto_first_child():
        yield cursor.field_name, cursor.node
        while cursor.goto_next_sibling():
            yield cursor.field_name, cursor.node


def first_error(root: Node) -> str:
    """The text of the first ERROR node, or the token found MISSING, for the problem's snippet."""
    parent, node = root, root
    while node is not None and node.type != "ERROR" and not node.is_missing:
        parent, node = node, next((child for child in node.children if child.has_error or child.is_missing), None)
    if node is None:
        return node_text(parent)
    return node.type if node.is_missing else node_text(node) or node.type


Look = Callable[[Node, bool, int], bool]
"""Sees a node of a word before it is read, inside double quotes or not, at its depth; says whether to look inside."""


def _everything(node: Node, quoted: bool, level: int) -> bool:
    return True


def read_word(node: Node, look: Look = _everything, level: int = 0) -> Word:
    """The node as a word, in one walk: its text with each substitution as a placeholder (`echo $(...)`), and its value
    where its text alone tells it. `look` sees each node on the way (the reader notes there what it does not read)."""
    if node.child_count == 0 and node.type in _BARE:
        text = node_text(node)
        if _SPECIAL.search(text) is None:  # most words: their text is their value
            return Word(text, text)
    shown, runs = _walk(node, look, level, quoted=False)
    if runs is None:
        return Word(shown, None)
    unquoted = "".join("\0" * len(text) if quoted else text for text, quoted in runs)
    return Word(shown, None if has_glob(unquoted) else "".join(text for text, _ in runs))


def word_of(text: str) -> Word:
    """The word written as `text`, read as bash reads one argument; its value is None unless it is one plain word."""
    tree = parse(": " + text)  # an argument of `:`, so `x=1` or `-x` is read as a word, not as syntax
    command = tree.root_node.children[0] if tree.root_node.child_count == 1 else None
    arguments = command.children_by_field_name("argument") if command is not None else []
    if tree.root_node.has_error or command is None or command.type != "command" or len(arguments) != 1:
        return Word(text, None)
    value = read_word(arguments[0])
    return Word(text, value.literal if node_text(arguments[0]) == text else None)


# Nodes shown as a placeholder in a command's text: their commands are segments of their own.
_PLACEHOLDERS = {"command_substitution": "$(...)", "arithmetic_expansion": "$((...))"}
# Nodes whose text is its value after the unquoted backslashes are taken out.
_BARE = frozenset({"word", "number", "variable_name"})
# Nodes whose value is the values of their children, and of the text between them, in order.
_JOINED = frozenset({"concatenation", "variable_assignment"})
Runs = list[tuple[str, bool]]  # a value as runs of text, each quoted or not; None where only running it would tell


def _walk(node: Node, look: Look, level: int, *, quoted: bool) -> tuple[str, Runs | None]:
    """The node's text as shown, and its value as runs."""
    kind = node.type
    if not look(node, quoted, level):
        look = _everything  # what the reader does not look inside is still shown
    if kind in _PLACEHOLDERS or kind == "process_substitution":
        return _PLACEHOLDERS.get(kind) or node_text(node)[:1] + "(...)", None
    runs = _value(node)
    if node.child_count == 0:
        return node_text(node), runs
    shown: list[str] = []
    joined: Runs | None = [] if kind in _JOINED else None
    source, start, at = node.text or b"", node.start_byte, node.start_byte
    for child in node.children:
        gap = source[at - start : child.start_byte - start].decode(errors="replace")
        child_shown, child_runs = _walk(child, look, level + 1, quoted=quoted or kind == "string")
        shown += (gap, child_shown)
        if joined is not None and not gap and child_runs is not None:
            joined += child_runs
        else:
            joined = None  # text between children is never expected; not reading it is the safe side
        at = child.end_byte
    shown.append(source[at - start :].decode(errors="replace"))
    if kind in _JOINED:
        runs = joined if at == node.end_byte else None
    return "".join(shown), runs


def _value(node: Node) -> Runs | None:
    """The value of a node that its text alone tells: unquoted text, a quoted string."""
    if not node.is_named or node.type in _BARE:
        return _bare(node_text(node))
    if node.type == "raw_string":
        return [(node_text(node)[1:-1], True)]
    if node.type == "ansi_c_string":
        return [(ansi_c_value(node_text(node)[2:-1]), True)]
    if node.type != "string" or any(child.is_named and child.type != "string_content" for child in node.children):
        return None  # without decoding its text: for each node of a nested expansion, that is quadratic
    text = node_text(node)
    body = text[text.index('"') + 1 : -1]  # after the `$` of a translated string too
    # an escaped character stands for itself, and an escaped line break (a continuation) disappears
    return [(_DOUBLE_QUOTED_ESCAPE.sub(lambda escape: escape.group(1).strip("\n"), body), True)]


# Characters that quote, expand or glob; a word without them is its own value.
_SPECIAL = re.compile(r"[\\'\"$`*?\[\]{}]")
_BARE_ESCAPE = re.compile(r"\\(\n|.)?", re.DOTALL)
_DOUBLE_QUOTED_ESCAPE = re.compile(r"\\([$`\"\\\n])")


def _bare(text: str) -> Runs | None:
    """Unquoted text: a backslash quotes the next character, and a line continuation disappears."""
    if "$" in text or "`" in text:
        return None
    runs, at = [], 0
    for escape in _BARE_ESCAPE.finditer(text):
        runs += [(text[at : escape.start()], False), ("" if escape.group(1) in ("\n", None) else escape.group(1), True)]
        at = escape.end()
    runs.append((text[at:], False))
    return runs


def has_glob(unquoted: str) -> bool:
    """Whether bash would expand the word: `*`, `?`, `[...]` or a brace list `{a,b}` / range `{1..3}`.

    `unquoted` has its quoted characters replaced by NUL, which no pattern may span. One pass, no
    backtracking: a regex such as `\\{[^\\0]*(,|\\.\\.)[^\\0]*\\}` takes quadratic time on `{{{{...`.
    It over-approximates (`}{,` counts as a brace list), which only makes a word's value unknown.
    """
    bracket = brace = listed = False  # seen, since the last NUL: `[`; `{`; `{` then `,` or `..`
    previous = ""
    for char in unquoted:
        if char in "*?" or (char == "]" and bracket) or (char == "}" and listed):
            return True
        if char == "\0":
            bracket = brace = listed = False
        elif char == "[":
            bracket = True
        elif char == "{":
            brace = True
        elif brace and (char == "," or (char == "." and previous == ".")):
            listed = True
        previous = char
    return False


_ANSI_C_ESCAPE = re.compile(
    r"\\(?:x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|([0-7]{1,3})|c(.)|(.))", re.DOTALL
)
_ANSI_C_SIMPLE = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def ansi_c_value(body: str) -> str:
    """The value of a `$'...'` body, as bash decodes it (`\\x72m` is `rm`)."""

    def decode(match: re.Match[str]) -> str:
        hexa, short_unicode, long_unicode, octal, control, other = match.groups()
        number = hexa or short_unicode or long_unicode
        if number:
            return chr(min(int(number, 16), 0x10FFFF))
        if octal:
            return chr(int(octal, 8) & 0xFF)
        if control:
            return chr(ord(control.upper()) & 0x1F)
        return _ANSI_C_SIMPLE.get(other, other)  # \\ \' \" \? stand for themselves

    return _ANSI_C_ESCAPE.sub(decode, body)
