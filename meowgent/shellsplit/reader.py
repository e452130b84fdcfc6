"""The simple commands a shell line runs, read from bash's grammar (tree-sitter-bash), and what leaves it open.

`split_command("ls && rm -rf x")` gives the commands `ls` and `rm -rf x`. Lists, pipelines, subshells,
groups, `if`, `while`/`until`, `for NAME in` and `!` only hold commands; a command substitution's
commands are commands of their own, and the outer command shows the placeholder `$(...)`. Commands come
in the order bash starts them: a substitution before the command that uses its output.

**Fail closed by construction.** The reader names the nodes of the grammar it understands; any other
node makes the line *hidden*, and so does an `ERROR` or `MISSING` node (tree-sitter's reading of what is
not bash it knows). A caller must treat a hidden line as possibly running anything: never allowed by a
rule or a chat scope, and denied while any deny rule exists, since that rule could match what it runs.
`SplitResult.problems` says why, as `Problem`s. Hidden, at least:
- syntax it does not read: arithmetic (`$((x))`, `((x))`, `for ((;;))`; `$((1 + 2))`, numbers only,
  is read), process substitution, a here-document whose body expands or whose line goes on after it,
  `case`, `select`, `coproc`, function definitions, arrays, a backquoted substitution holding a
  backslash (bash takes escapes out before reading it, tree-sitter does not);
- values bash evaluates as code: `${x:=...}`, `${x@P}`, `${!x}`, `${a[i]}`, `${x:1}`, `let`,
  `[[ x -eq 1 ]]`, array subscripts, `declare -i`/`-n`, `$'...'` words;
- and what the meaning layer finds (`inspect`, `programs`): texts run as command lines (`eval`,
  `bash -c`, `trap`, `ssh host cmd`; a literal text is read too, its commands included), variables
  whose value runs, rebound names, commands only known when they run, options that run code.

Where the tree groups differently from bash it reads more, never less: tree-sitter attaches the `> out`
of `a && echo x > out` to the whole list, so each command of the list gets it. Linear in the length of
the line: tree-sitter is, each node is visited once, and texts read again spend a budget of the line's
length (`Findings.spend`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from itertools import pairwise

from tree_sitter import Node

from meowgent.shellsplit.inspect import RunsText, inspect_segment
from meowgent.shellsplit.programs import MAX_NESTED
from meowgent.shellsplit.syntax import deepest, fields, first_error, node_text, parse, word_value
from meowgent.shellsplit.words import Findings, Problem, Redirect, SimpleCommand, SplitResult, Word


@functools.lru_cache(maxsize=8)  # a call is judged, its card drawn and its scopes tried: one reading for all
def split_command(command: str) -> SplitResult:
    """The simple commands in `command`, substitutions included; see the module docstring for the rules."""
    reader = _Reader(Findings(budget=len(command) + _NESTED_BUDGET))
    try:
        reader.line(command)
    except RecursionError:  # `_MAX_LEVEL` keeps well below the limit; this is the last guard
        reader.findings.note("too_deep", command)
    return SplitResult(tuple(reader.commands), tuple(reader.findings.problems))


def parse_segment(segment: str) -> SimpleCommand:
    """One simple command taken apart (a scope's prefix); ValueError if the text is not exactly one."""
    tree = parse(segment)
    statements = [node for node in tree.root_node.children if node.type != "comment"]
    if tree.root_node.has_error:
        raise ValueError(f"{segment!r} cannot be read as bash")
    reader = _Reader(Findings())
    if len(statements) != 1 or not reader.simple(statements[0]):
        raise ValueError(f"{segment!r} is more than one simple command")
    return reader.commands[-1]


def command_word(segment: str) -> str | None:
    """The command a segment runs (`FOO=1 "rm" x 2>&1` gives `rm`); None if none, or only known when it runs."""
    try:
        words = parse_segment(segment).words
    except ValueError:
        return None
    return words[0].literal if words else None


def forget_readings() -> None:
    """Drop the remembered readings of recent lines, so the next reading is a first one (benchmarks)."""
    split_command.cache_clear()


# A command of plain words only: ASCII letters, digits and marks that bash reads as themselves, and spaces.
_PLAIN_COMMAND = re.compile(r"[\w ./,:%+@^~-]*", re.ASCII)
_JOINED_WORD = re.compile(r"\S\\\n\S")
_NESTED_BUDGET = 4096
"""Characters that texts and commands handed on may add to the line's length in reading (see `Findings.spend`)."""
_MAX_OPEN = 500
"""Brackets open at once before a line counts as too deep to read, unparsed: tree-sitter's time on nesting grows
faster than the line (a 20,000-brace group took 60 times a 2,000-brace one), and no real command nests so deep."""
_MAX_LEVEL = 120
"""Nodes nested in nodes before a line counts as too deep to read (each level is a few Python frames)."""

# Statements that only hold statements, and the keywords and separators between them.
_GROUPS = frozenset(
    {"program", "list", "pipeline", "subshell", "compound_statement", "do_group", "negated_command"}
    | {"if_statement", "elif_clause", "else_clause", "while_statement", "command_substitution"}
)
_STRUCTURE = frozenset(
    {";", "&", "&&", "||", "|", "|&", "(", ")", "{", "}", "!", "$(", "`"}
    | {"if", "then", "elif", "else", "fi", "while", "until", "do", "done"}
)
# Nodes (or keywords) the reader does not read, and the kind of problem each is.
_UNREAD = {
    "case_statement": "block",
    "select": "block",
    "function_definition": "defines",
    "c_style_for_statement": "arithmetic",
    "((": "arithmetic",
}
# Command names that bash reads as reserved words and tree-sitter, where they stand alone, as words.
_KEYWORD_COMMANDS = {
    **{"coproc": "block", "function": "defines", "case": "block", "select": "block"},
    **dict.fromkeys(("!", "{", "}", "[[", "]]", "then", "fi", "do", "done", "esac", "else", "elif", "in"), "syntax"),
}

# The parts of a word the reader knows; `expansion`, the substitutions and arithmetic are read on their own.
_WORD_PARTS = frozenset(
    {"word", "string", "raw_string", "concatenation", "number", "string_content", "variable_name"}
    | {"special_variable_name", "simple_expansion", "translated_string", "brace_expression", "subscript"}
    | {"variable_assignment", "heredoc_content", "heredoc_body", "regex", "extglob_pattern"}
)
_SIMPLE = frozenset(
    {"command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command", "test_command"}
)
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


class _Reader:
    """A walk over a line's tree: every simple command it finds goes to `commands`, with what it hands on."""

    def __init__(self, findings: Findings) -> None:
        self.commands: list[SimpleCommand] = []
        self.findings = findings
        self.depth = 0  # texts run inside texts, and commands handed on inside commands, around this one

    def line(self, text: str) -> None:
        if deepest(text, _MAX_OPEN) > _MAX_OPEN:
            self.findings.note("too_deep", text)
            return
        joined = _JOINED_WORD.search(text)
        if joined:  # bash joins `r\<new line>m` into `rm`; tree-sitter reads two words
            self.findings.note("quoting", joined.group())
        root = parse(text).root_node
        if root.has_error:
            self.findings.note("syntax", first_error(root))
        self._statement(root, (), 0)

    def simple(self, node: Node) -> bool:
        """Read `node` if it is one simple command (a prefix, a segment); False if it is anything else."""
        body = node.child_by_field_name("body") if node.type == "redirected_statement" else node
        if body is None or body.type not in _SIMPLE:
            return False
        self._statement(node, (), 0)
        return True

    # ---- statements ----

    def _statement(
        self, node: Node, redirects: tuple[tuple[Redirect, str], ...], level: int, *, piped: bool = False
    ) -> None:
        """Read a statement; `piped`: it does not start a pipeline, so a `time` there is a program, not a keyword."""
        if level > _MAX_LEVEL:
            self.findings.note("too_deep", node_text(node))
            return
        kind = node.type
        if kind in _STRUCTURE or kind == "comment" or node.type == "ERROR":
            return  # an ERROR node made the line hidden already; what it holds is not read as commands
        if kind in _GROUPS:
            first = True
            for child in node.children:
                inner = kind == "negated_command" or (kind == "pipeline" and not first)
                self._statement(child, redirects, level + 1, piped=inner)
                first = first and not child.is_named
        elif kind == "redirected_statement":
            self._redirected(node, redirects, level, piped=piped)
        elif kind == "command":
            self._command(node, redirects, level, piped=piped)
        elif kind in ("variable_assignment", "variable_assignments"):
            assignments = [node] if kind == "variable_assignment" else node.named_children
            words = tuple(self._word(child, level) for child in assignments)
            self._add(SimpleCommand(words, (), tuple(r for r, _ in redirects), _join(words, redirects)))
        elif kind in ("declaration_command", "unset_command", "test_command", "for_statement"):
            self._keyword_command(node, redirects, level)
        else:
            self.findings.note(_UNREAD.get(kind, "grammar"), node_text(node) or kind)

    def _redirected(
        self, node: Node, redirects: tuple[tuple[Redirect, str], ...], level: int, *, piped: bool = False
    ) -> None:
        found, arguments = self._redirects(node, level)
        outer = redirects + found
        body = node.child_by_field_name("body")
        if arguments and (body is None or body.type != "command"):
            self.findings.note("grammar", node_text(node))  # words after a redirection that no command takes
        if body is None:  # `> out` alone still truncates the file
            self._add(SimpleCommand((), (), tuple(r for r, _ in outer), _join([], outer)))
        elif body.type == "command":
            self._command(body, outer, level + 1, arguments, piped=piped)
        else:
            self._statement(body, outer, level + 1)

    def _command(
        self,
        node: Node,
        redirects: tuple[tuple[Redirect, str], ...],
        level: int,
        more: Sequence[Word] = (),
        *,
        piped: bool = False,
    ) -> None:
        """A simple command; `more` are its words that tree-sitter read as a later redirection's."""
        written = node_text(node)
        # `a | b | c <new line> d && e`: tree-sitter reads `c d`, bash runs c, then d
        if "\n" in written and _past_a_line_end(node):
            root = parse(written).root_node
            again = root.named_child_count == 1 and root.named_children[0].type == "command"  # read as before
            if root.has_error or more or again:
                self.findings.note("syntax", written)
            if not again:
                self._statement(root, redirects, level + 1)
                return
        assignments: list[Word] = []
        words: list[Word] = []
        parts: list[str | Word] = []  # as written; a redirection as its text
        own: list[tuple[Redirect, str]] = []
        plain = _PLAIN_COMMAND.fullmatch(written)
        if plain:  # no quote, expansion or operator: its words are its blank-separated text (fast on long lines)
            words = [Word(text, text) for text in plain.group().split()]
            parts = list(words)
        for field, child in () if plain else fields(node):
            if child.type in _REDIRECTS:
                found, spilled = self._redirect(child, level)
                own += found
                parts += [text for _, text in found]
                words += spilled
                parts += spilled
            elif field == "name" and child.named_child_count == 1:
                words.append(self._word(child.named_children[0], level))
                parts.append(words[-1])
            elif field == "argument" or (child.type == "variable_assignment" and not words):
                word = self._word(child, level)
                (words if field == "argument" else assignments).append(word)
                parts.append(word)
            elif child.type != "comment":
                self.findings.note(_UNREAD.get(child.type, "grammar"), node_text(child))
        words += more
        parts += more
        dropped = _keyword_words(words) if not assignments and not piped else 0
        while dropped and words[dropped:] and _ASSIGNMENT.match(words[dropped].text):
            assignments.append(words.pop(dropped))  # `time FOO=1 ls`: bash reads assignments after `time`
        if words[dropped:] and words[dropped].text in _KEYWORD_COMMANDS:
            self.findings.note(_KEYWORD_COMMANDS[words[dropped].text], node_text(node))
        if dropped:
            parts = [part for part in parts if not any(part is word for word in words[:dropped])]
        text = " ".join([part if isinstance(part, str) else part.text for part in parts] + [t for _, t in redirects])
        every = tuple(r for r, _ in (*own, *redirects))
        if assignments or words[dropped:] or every:
            self._add(SimpleCommand(tuple(assignments), tuple(words[dropped:]), every, text))

    def _keyword_command(self, node: Node, redirects: tuple[tuple[Redirect, str], ...], level: int) -> None:
        """`export`/`declare`/`local`/`unset`, `[[ ... ]]`, `for NAME in ...`: a command of their words."""
        words = self._words(node, level)
        self._add(SimpleCommand((), tuple(words), tuple(r for r, _ in redirects), _join(words, redirects)))
        for body in node.children_by_field_name("body"):
            self._statement(body, redirects, level + 1)

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
                    self.findings.note(_UNREAD[child.type], node_text(node))
                if child.type != ";":
                    words.append(Word(child.type, child.type))
            elif child.type in _PATTERNS:
                words.append(Word(node_text(child), node_text(child) if child.type == "test_operator" else None))
            else:
                words.append(self._word(child, level))
        return words

    # ---- words and redirections ----

    def _word(self, node: Node, level: int) -> Word:
        """The node as a word, once its substitutions are read as commands and its unread parts noted."""
        if node.child_count or node.type != "word":  # a plain word (most of them) holds nothing to scan
            self._scan(node, level)
        return word_value(node)

    def _scan(self, node: Node, level: int, *, quoted: bool = False) -> None:
        """Note what in a word is not read, and read its substitutions; `quoted`: inside double quotes."""
        if level > _MAX_LEVEL:
            self.findings.note("too_deep", node_text(node))
            return
        kind = node.type
        if kind == "ERROR":
            return  # the line is hidden already (see `line`)
        if kind == "command_substitution":
            if node_text(node).startswith("`") and "\\" in node_text(node):
                self.findings.note("quoting", node_text(node))
            self._statement(node, (), level + 1)
            return
        if kind == "process_substitution":
            self.findings.note("process", node_text(node))
            for child in node.named_children:
                self._statement(child, (), level + 1)
            return
        if kind == "arithmetic_expansion":
            if not _NUMBERS_ONLY.fullmatch(node_text(node)):
                self.findings.note("arithmetic", node_text(node))
            return
        if kind == "expansion" and not _PLAIN_EXPANSION.fullmatch(node_text(node)):
            self.findings.note("expansion", node_text(node))
        elif kind == "ansi_c_string":
            self.findings.note("escapes", node_text(node))
        elif kind == "raw_string" and quoted:
            # In `"${x:-'$(rm x)'}"` bash reads the quotes as characters and runs the substitution;
            # tree-sitter reads a single-quoted string.
            self.findings.note("quoting", node_text(node))
        elif kind == "array":
            self.findings.note("defines", node_text(node))
        elif node.is_named and kind not in _WORD_PARTS and kind != "expansion":
            self.findings.note(_UNREAD.get(kind, "grammar"), node_text(node) or kind)
            return
        for child in node.children:
            self._scan(child, level + 1, quoted=quoted or kind == "string")

    def _redirects(self, node: Node, level: int) -> tuple[tuple[tuple[Redirect, str], ...], list[Word]]:
        found: list[tuple[Redirect, str]] = []
        arguments: list[Word] = []
        for child in node.children_by_field_name("redirect"):
            redirects, spilled = self._redirect(child, level)
            found += redirects
            arguments += spilled
        return tuple(found), arguments

    def _redirect(self, node: Node, level: int) -> tuple[list[tuple[Redirect, str]], list[Word]]:
        """A redirection and its text as shown (`2>&1`, `> out`), and the words after its target.

        A here-document may hold more redirections. tree-sitter reads `> out c` as one redirection to two
        targets; bash gives `c` to the command as an argument.
        """
        operator, target, more, spilled = "", None, [], []
        for child in node.children:
            if not child.is_named or child.type == "file_descriptor":
                operator += node_text(child)
            elif child.type == "heredoc_start":
                target = Word(node_text(child), node_text(child))
            elif child.type == "heredoc_body":
                if any(part.type != "heredoc_content" for part in child.named_children):
                    self.findings.note("heredoc", f"{operator} {target.text}")
                self._scan(child, level + 1)
            elif child.type in _REDIRECTS:
                redirects, words = self._redirect(child, level)
                more += redirects
                spilled += words
            elif child.type != "heredoc_end" and node.type == "heredoc_redirect":
                # tree-sitter puts the rest of the line (`| wc`, `&& ls`) inside the here-document
                self.findings.note("heredoc", node_text(node).partition("\n")[0])
            elif child.type != "heredoc_end" and target is None:
                target = self._word(child, level)
            elif child.type != "heredoc_end":
                spilled.append(self._word(child, level))
        target = target or Word("", "")
        joiner = "" if operator.endswith("&") else " "
        return [(Redirect(operator, target), f"{operator}{joiner}{target.text}".rstrip()), *more], spilled

    # ---- what a command hands on ----

    def _add(self, command: SimpleCommand) -> None:
        """A command found, and what it runs besides itself, read by the meaning layer (`inspect`)."""
        self.commands.append(command)
        for finding in inspect_segment(command):
            if isinstance(finding, Problem):
                self.findings.add(finding)
            elif isinstance(finding, RunsText):
                self._run_text(finding.words, finding.who)
            else:
                self._started(finding.words, finding.tail)

    def _started(self, words: Sequence[Word], tail: str) -> None:
        """A command started by another (what `xargs` or `find -exec` runs), as a command of its own."""
        text = " ".join(word.text for word in words) + tail
        marker = (Word(tail.strip(), tail.strip()),) if tail else ()  # xargs: `rm -f ...` for the words it reads
        self._nested(text, text, lambda: self._add(SimpleCommand((), (*words, *marker), (), text)))

    def _run_text(self, words: Sequence[Word], who: str) -> None:
        """Read a text a command runs as a command line (eval joins its arguments with spaces)."""
        if any(word.literal is None for word in words):
            self.findings.note("unknown_text", f"{who} {' '.join(word.text for word in words)}")
        elif words:
            text = " ".join(word.value for word in words)
            self._nested(text, who, lambda: self.line(text))

    def _nested(self, text: str, snippet: str, read: Callable[[], None]) -> None:
        """Read what a command hands on one level deeper; past `MAX_NESTED` levels or the budget, a problem."""
        if self.depth >= MAX_NESTED:
            self.findings.note("too_many", snippet)
        elif self.findings.spend(text):
            self.depth += 1
            try:
                read()
            finally:
                self.depth -= 1


def _past_a_line_end(node: Node) -> bool:
    """Whether a line break that bash ends a command at lies between two of the command's children, or in a word
    (tree-sitter reads `! echo *<new line>\\touch b` as one command, the break inside the word `\\touch`)."""
    source, at = node.text or b"", node.start_byte
    pieces = [source[left.end_byte - at : right.start_byte - at] for left, right in pairwise(node.children)]
    names = [
        child.named_children[0] for child in node.children if child.type == "command_name" and child.named_children
    ]
    pieces += [child.text or b"" for child in (*node.children, *names) if child.type == "word"]
    return any(b"\n" in _ESCAPED.sub(b"", piece) for piece in pieces)


_ESCAPED = re.compile(rb"\\.", re.DOTALL)  # a backslash and the character it quotes (a line continuation too)


def _keyword_words(words: Sequence[Word]) -> int:
    """How many words at the start are bash's `time` keyword and its `-p`: the command after them is what runs."""
    if not words or words[0].text != "time":
        return 0
    count = 1
    for option in ("-p", "--"):
        if len(words) > count and words[count].text == option:
            count += 1
    return count


def _join(words: Sequence[Word], redirects: Sequence[tuple[Redirect, str]]) -> str:
    return " ".join([word.text for word in words] + [text for _, text in redirects])
