"""The simple commands a shell line runs, read from bash's grammar (tree-sitter-bash), and what leaves it open.

`split_command("ls && rm -rf x")` gives `ls` and `rm -rf x`, in the order bash starts them: a substitution's
commands before the command that uses its output, which shows it as `$(...)`.

**Fail closed by construction.** The reader names the node types it reads (`_GROUPS`, `_WORD_PARTS`, ...); any
other node, an `ERROR` or `MISSING` one, a value bash evaluates as code and what `programs.inspect_segment` finds
make the line *hidden*: it may run anything (docs/reliability.md, "Reading bash"). Where the tree groups
differently from bash it reads more, never less: the `> out` that tree-sitter attaches to the list
`a && echo x > out` goes to each of its commands. Linear in the line's length: each node is visited once, and
texts read again spend a budget.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from itertools import pairwise

from tree_sitter import Node

from meowgent.shellsplit.programs import MAX_NESTED, inspect_segment
from meowgent.shellsplit.reading import Starts
from meowgent.shellsplit.syntax import deepest, fields, first_error, node_text, parse, read_word
from meowgent.shellsplit.words import Problem, Redirect, SimpleCommand, SplitResult, Word


@functools.lru_cache(maxsize=8)  # a call is judged, its card drawn and its scopes tried: one reading for all
def split_command(command: str) -> SplitResult:
    """The simple commands in `command`, substitutions included; see the module docstring for the rules."""
    reader = _Reader(budget=len(command) + _NESTED_BUDGET)
    try:
        reader.line(command)
    except RecursionError:  # `_MAX_LEVEL` keeps well below the limit; this is the last guard
        reader.note("too_deep", command)
    return SplitResult(tuple(reader.commands), tuple(reader.problems))


def parse_segment(segment: str) -> SimpleCommand:
    """One simple command taken apart (a scope's prefix); ValueError if the text is not exactly one."""
    root = parse(segment).root_node
    if root.has_error:
        raise ValueError(f"{segment!r} cannot be read as bash")
    statements = [node for node in root.children if node.type != "comment"]
    node = statements[0] if len(statements) == 1 else None
    body = node.child_by_field_name("body") if node is not None and node.type == "redirected_statement" else node
    if node is None or body is None or body.type not in _SIMPLE:
        raise ValueError(f"{segment!r} is more than one simple command")
    reader = _Reader(budget=0)
    reader.statement(node, (), 0)
    return reader.commands[-1]


def forget_readings() -> None:
    """Drop the remembered readings of recent lines, so the next reading is a first one (benchmarks)."""
    split_command.cache_clear()


# A command of plain words only: ASCII letters, digits and marks that bash reads as themselves, and spaces.
_PLAIN_COMMAND = re.compile(r"[\w ./,:%+@^~-]*", re.ASCII)
_JOINED_WORD = re.compile(r"\S\\\n\S")
_NESTED_BUDGET = 4096  # characters that texts and commands handed on may add to the line's length in reading
# Brackets open at once before a line counts as too deep to read, unparsed: tree-sitter's time on nesting grows
# faster than the line (a 20,000-brace group took 60 times a 2,000-brace one), and no real command nests so deep.
_MAX_OPEN = 500
_MAX_LEVEL = 120  # nodes nested in nodes before a line is too deep to read (each level is a few Python frames)

# Statements that only hold statements, and the keywords and separators between them.
_GROUPS = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "do_group", "negated_command"}
    | {"if_statement", "elif_clause", "else_clause", "while_statement", "command_substitution"}
)
_STRUCTURE = frozenset(
    {";", "&", "&&", "||", "|", "|&", "(", ")", "{", "}", "!", "$(", "`", "comment", "ERROR"}
    | {"if", "then", "elif", "else", "fi", "while", "until", "do", "done"}
)
# Nodes (or keywords) the reader does not read, and the kind of problem each is.
_UNREAD = {
    **dict.fromkeys(("case_statement", "select"), "block"),
    **dict.fromkeys(("function_definition", "array"), "defines"),
    **dict.fromkeys(("c_style_for_statement", "(("), "arithmetic"),
    **{"process_substitution": "process", "ansi_c_string": "escapes"},
}
# Command names that bash reads as reserved words and tree-sitter, where they stand alone, as words.
_KEYWORD_COMMANDS = {
    **{"coproc": "block", "function": "defines", "case": "block", "select": "block"},
    **dict.fromkeys(("!", "{", "}", "[[", "]]", "then", "fi", "do", "done", "esac", "else", "elif", "in"), "syntax"),
}

# The parts of a word the reader knows; the expansions, substitutions and arithmetic are read on their own.
_WORD_PARTS = frozenset(
    {"word", "string", "raw_string", "concatenation", "number", "string_content", "variable_name"}
    | {"special_variable_name", "simple_expansion", "translated_string", "brace_expression", "subscript"}
    | {"variable_assignment", "heredoc_content", "heredoc_body", "regex", "extglob_pattern", "expansion"}
    | {"command_substitution", "process_substitution", "arithmetic_expansion"}
)
_KEYWORD_STATEMENTS = frozenset({"declaration_command", "unset_command", "test_command", "for_statement"})
_SIMPLE = _KEYWORD_STATEMENTS - {"for_statement"} | {"command", "variable_assignment", "variable_assignments"}
_REDIRECTS = frozenset({"file_redirect", "herestring_redirect", "heredoc_redirect"})
_EXPRESSIONS = frozenset({"binary_expression", "unary_expression", "parenthesized_expression"})
_PATTERNS = frozenset({"regex", "extglob_pattern", "test_operator"})

_NAME = r"(?:[A-Za-z_][A-Za-z0-9_]*|[0-9]+|[-@*#?$!])"
# `${x}`, `${#x}`, `${a[@]}` and the operators that only test, cut or replace: none of them evaluates a value.
# Matched whole (fullmatch): the name alternatives cannot overlap an operator, so this never backtracks far.
_PLAIN_EXPANSION = re.compile(
    rf"\$\{{(?:#?{_NAME}(?:\[[@*]\])?|{_NAME}(?:\[[@*]\])?(?::?[-+?]|##?|%%?|/[/#%]?|\^\^?|,,?)[^\0]*)\}}", re.DOTALL
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^]]*\])?\+?=")
_NUMBERS_ONLY = re.compile(r"\$\(\([\s0-9+\-*/%()<>=!&|^~?:,]*\)\)")
_ESCAPED = re.compile(rb"\\.", re.DOTALL)  # a backslash and the character it quotes (a line continuation too)

Redirects = tuple[Redirect, ...]
Part = Word | Redirect


class _Reader:
    """A walk over a line's tree: every simple command it finds goes to `commands`, with what it hands on."""

    def __init__(self, *, budget: int) -> None:
        self.commands: list[SimpleCommand] = []
        self.problems: dict[Problem, None] = {}  # each once, in the order found
        self.budget = budget  # characters left to read again in texts and commands handed on (see `_nested`)
        self.depth = 0  # texts run inside texts, and commands handed on inside commands, around this one
        self.substitutions = 0  # `$( … )`s around the node being read: bash reads their text twice

    def note(self, kind: str, snippet: str) -> None:
        self.problems[Problem(kind, snippet)] = None

    def line(self, text: str) -> None:
        if deepest(text, _MAX_OPEN) > _MAX_OPEN:
            self.note("too_deep", text)
            return
        joined = _JOINED_WORD.search(text)
        if joined:  # bash joins `r\<new line>m` into `rm`; tree-sitter reads two words
            self.note("quoting", joined.group())
        root = parse(text).root_node
        if root.has_error:
            self.note("syntax", first_error(root))
        self.statement(root, (), 0)

    def _deep(self, node: Node, level: int) -> bool:
        if level > _MAX_LEVEL:
            self.note("too_deep", node_text(node))
        return level > _MAX_LEVEL

    # ---- statements ----

    def statement(self, node: Node, redirects: Redirects, level: int, *, piped: bool = False) -> None:
        """Read a statement; `piped`: it does not start a pipeline, so a `time` there is a program, not a keyword."""
        kind = node.type
        if self._deep(node, level) or kind in _STRUCTURE:
            return  # an ERROR node made the line hidden already; what it holds is not read as commands
        if kind in _GROUPS:
            first = True
            for child in node.children:
                inner = kind == "negated_command" or (kind == "pipeline" and not first)
                self.statement(child, redirects, level + 1, piped=inner)
                first = first and not child.is_named
        elif kind == "redirected_statement":
            found: list[Redirect] = []
            arguments: list[Word] = []
            for child in node.children_by_field_name("redirect"):
                self._redirect(child, level, found, arguments)
            body, outer = node.child_by_field_name("body"), (*redirects, *found)
            if arguments and (body is None or body.type != "command"):
                self.note("grammar", node_text(node))  # words after a redirection that no command takes
            if body is None:  # `> out` alone still truncates the file
                self._add((), (), outer)
            elif body.type == "command":
                self._command(body, outer, level + 1, arguments, piped=piped)
            else:
                self.statement(body, outer, level + 1)
        elif kind == "command":
            self._command(node, redirects, level, piped=piped)
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else node.named_children
            self._add([self._word(child, level) for child in assignments], (), redirects)
        elif kind in _KEYWORD_STATEMENTS:  # `export`/`declare`/`unset`, `[[ ... ]]`, `for NAME in ...`
            self._add((), self._words(node, level), redirects)
            for body in node.children_by_field_name("body"):
                self.statement(body, redirects, level + 1)
        else:
            self.note(_UNREAD.get(kind, "grammar"), node_text(node) or kind)

    def _command(self, node: Node, redirects: Redirects, level: int, more: Sequence[Word] = (), *, piped: bool) -> None:
        """A simple command; `more` are its words that tree-sitter read as a later redirection's."""
        written = node_text(node)
        # `a | b | c <new line> d && e`: tree-sitter reads `c d`, bash runs c, then d
        if _past_a_line_end(node, more):
            root = parse(written).root_node
            again = root.named_child_count == 1 and root.named_children[0].type == "command"  # read as before
            if root.has_error or more or again:
                self.note("syntax", written)
            if not again:
                self.statement(root, redirects, level + 1)
                return
        assignments: list[Word] = []
        words: list[Word] = []
        parts: list[Part] = []  # as written, for the command's text
        own: list[Redirect] = []
        plain = _PLAIN_COMMAND.fullmatch(written)
        if plain:  # no quote, expansion or operator: its words are its blank-separated text (fast on long lines)
            words = [Word(text, text) for text in plain.group().split()]
            parts = list(words)
        for field, child in () if plain else fields(node):
            if child.type in _REDIRECTS:
                count = len(own), len(words)
                self._redirect(child, level, own, words)
                parts += [*own[count[0] :], *words[count[1] :]]
            elif field == "name" and child.named_child_count == 1:
                words.append(self._word(child.named_children[0], level))
                parts.append(words[-1])
            elif field == "argument" or (child.type == "variable_assignment" and not words):
                parts.append(self._word(child, level))
                (words if field == "argument" else assignments).append(parts[-1])
            elif child.type != "comment":
                self.note(_UNREAD.get(child.type, "grammar"), node_text(child))
        words += more
        parts += more
        dropped = _keyword_words(words) if not assignments and not piped else 0
        while dropped and words[dropped:] and _ASSIGNMENT.match(words[dropped].text):
            assignments.append(words.pop(dropped))  # `time FOO=1 ls`: bash reads assignments after `time`
        if words[dropped:] and words[dropped].text in _KEYWORD_COMMANDS:
            self.note(_KEYWORD_COMMANDS[words[dropped].text], written)
        if dropped:  # `time` is bash's keyword, not a word of the command
            parts = [part for part in parts if not any(part is word for word in words[:dropped])]
        if assignments or words[dropped:] or own or redirects:
            self._add(assignments, words[dropped:], (*own, *redirects), [*parts, *redirects])

    def _words(self, node: Node, level: int) -> list[Word]:
        """The words of a keyword command in order, keywords included; a test's expressions flattened."""
        words: list[Word] = []
        for child in node.children:
            if child.type == "do_group":
                continue
            if child.type in _EXPRESSIONS and level <= _MAX_LEVEL:
                words += self._words(child, level + 1)
            elif not child.is_named:
                if child.type in _UNREAD:
                    self.note(_UNREAD[child.type], node_text(node))
                if child.type != ";":
                    words.append(Word(child.type, child.type))
            elif child.type in _PATTERNS:
                words.append(Word(node_text(child), node_text(child) if child.type == "test_operator" else None))
            else:
                words.append(self._word(child, level))
        return words

    # ---- words and redirections ----

    def _word(self, node: Node, level: int) -> Word:
        return read_word(node, self._look, level)

    def _look(self, node: Node, quoted: bool, level: int) -> bool:
        """Note what in a word is not read, and read its substitutions' commands; whether to look inside `node`."""
        kind, text = node.type, node_text(node)
        if self._deep(node, level) or kind == "ERROR":
            return False  # the line is hidden already (see `line`)
        if kind == "command_substitution" and text.startswith("`") and "\\" in text:
            self.note("quoting", text)
        if kind in _UNREAD or (kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(text)):
            self.note(_UNREAD.get(kind, "expansion"), text)
        elif kind == "arithmetic_expansion" and not _NUMBERS_ONLY.fullmatch(text):
            self.note("arithmetic", text)
        elif kind == "raw_string" and quoted:
            # In `"${x:-'$(rm x)'}"` bash reads the quotes as characters and runs the substitution;
            # tree-sitter reads a single-quoted string.
            self.note("quoting", text)
        elif node.is_named and kind not in _WORD_PARTS:
            self.note("grammar", text or kind)
            return False
        if kind == "command_substitution":
            self.substitutions += 1
            try:
                self.statement(node, (), level + 1)
            finally:
                self.substitutions -= 1
        elif kind == "process_substitution":
            for child in node.named_children:
                self.statement(child, (), level + 1)
        return True

    def _redirect(self, node: Node, level: int, redirects: list[Redirect], spilled: list[Word]) -> None:
        """Add a redirection to `redirects`, then those a here-document holds, and the words after its target to
        `spilled`: tree-sitter reads `> out c` as one redirection to two targets; bash gives `c` to the command."""
        operator, target, at = "", None, len(redirects)
        for child in node.children:
            if not child.is_named or child.type == "file_descriptor":
                operator += node_text(child)
            elif child.type == "heredoc_start":
                target = Word(node_text(child), node_text(child))
            elif child.type == "heredoc_body":
                # In `$( … )` bash reads the body again, quoted or not: bash-as-oracle ran `touch` from
                # `v=$( if cat <<'E'\n$(touch af)\nE …`.
                if self.substitutions or any(part.type != "heredoc_content" for part in child.named_children):
                    self.note("heredoc", f"{operator} {target.text if target else ''}")
                read_word(child, self._look, level + 1)
            elif child.type in _REDIRECTS:
                self._redirect(child, level, redirects, spilled)
            elif child.type != "heredoc_end" and node.type == "heredoc_redirect":
                # tree-sitter puts the rest of the line (`| wc`, `&& ls`) inside the here-document
                self.note("heredoc", node_text(node).partition("\n")[0])
            elif child.type != "heredoc_end":
                word = self._word(child, level)
                if target is None:
                    target = word
                else:
                    spilled.append(word)
        redirects.insert(at, Redirect(operator, target or Word("", "")))

    # ---- what a command hands on ----

    def _add(
        self, assignments: Sequence[Word], words: Sequence[Word], redirects: Redirects, parts: Sequence[Part] = ()
    ) -> None:
        """A command found (`parts`: as written, by default its words then its redirections), and what
        `inspect_segment` finds it runs besides itself."""
        parts = parts or [*assignments, *words, *redirects]
        command = SimpleCommand(tuple(assignments), tuple(words), tuple(redirects), " ".join(p.text for p in parts))
        self.commands.append(command)
        for finding in inspect_segment(command):
            if isinstance(finding, Problem):
                self.problems[finding] = None
            elif isinstance(finding, Starts):  # what `xargs` or `find -exec` runs, as a command of its own
                text = " ".join(word.text for word in finding.words)
                self._nested(text, text, finding.words)
            elif any(word.literal is None for word in finding.words):
                self.note("unknown_text", f"{finding.who} {' '.join(word.text for word in finding.words)}")
            elif finding.words:  # a text run as a command line (eval joins its arguments with spaces)
                self._nested(" ".join(word.value for word in finding.words), finding.who)

    def _nested(self, text: str, snippet: str, command: Sequence[Word] = ()) -> None:
        """Read the `command` another starts, or else the `text` it runs, one level deeper; past `MAX_NESTED` levels
        or the budget, a problem. A text run inside a text run inside ... (`eval eval eval ...`) is read once per
        level; the budget (the line's length and a little more) keeps the whole reading linear in its length."""
        if self.depth >= MAX_NESTED:
            self.note("too_many", snippet)
            return
        self.budget -= len(text)
        if self.budget < 0:
            self.note("too_many", text)
            return
        self.depth += 1
        try:
            if command:
                self._add((), command, ())
            else:
                self.line(text)
        finally:
            self.depth -= 1


def _past_a_line_end(node: Node, more: Sequence[Word]) -> bool:
    """Whether a line break that bash ends a command at lies between two of the command's children, or in one of
    its words: tree-sitter reads `! echo *<new line>\\touch b` as one command, the break inside the word `\\touch`,
    and in `cat f >> g<new line>\\touch b` gives that word to the redirection (`more`)."""
    source, at = node.text or b"", node.start_byte
    if b"\n" not in source and not any("\n" in word.text for word in more):
        return False  # most commands
    pieces = [source[left.end_byte - at : right.start_byte - at] for left, right in pairwise(node.children)]
    names = [
        child.named_children[0] for child in node.children if child.type == "command_name" and child.named_children
    ]
    pieces += [child.text or b"" for child in (*node.children, *names) if child.type == "word"]
    pieces += [word.text.encode() for word in more]
    return any(b"\n" in _ESCAPED.sub(b"", piece) for piece in pieces)


def _keyword_words(words: Sequence[Word]) -> int:
    """How many words at the start are bash's `time` keyword and its `-p`: the command after them is what runs."""
    if not words or words[0].text != "time":
        return 0
    count = 1
    for option in ("-p", "--"):
        if len(words) > count and words[count].text == option:
            count += 1
    return count
