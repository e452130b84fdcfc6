"""How programs read their options, getopt style: `env -iu HOME rm x` is `-i`, `-u HOME` and the operands `rm x`
(a naive reading takes `HOME` for the command). Linear in the number of words.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from meowgent.shellsplit.words import Word

Effect = Literal["runs", "shell", "later", "env", "names", "writes", "appends", "edits", "deletes", "sets", "stops"]
"""What an option does: runs code; its value is a shell line; or code bash runs later (`mapfile -C`); its value is
NAME=value for the environment, or names a variable a builtin sets (`read -a NAME`); it writes, appends to, edits or
deletes files (its value, when it takes one); it sets the system's state; or no command runs after it (`sudo -l`)."""

ValueCheck = Callable[[Word | None], Effect | None]
"""An effect that depends on the option's value (`git -c user.name=x` is harmless, `-c alias.x=!rm` runs)."""


@dataclass(frozen=True, slots=True)
class Program:
    """A program's option table: how it reads its options (long names without their dashes), what they do."""

    flags: str = ""  # short options without a value, which may be combined: `-iu` is `-i -u`
    values: str = ""  # short options that take a value: the rest of the word, or else the next word
    optional: str = ""  # short options whose value, if any, is the rest of the word: `-i.bak`
    digits: str = ""  # short options followed by an optional number only: perl's `-l0`
    long_flags: frozenset[str] = frozenset()
    long_values: frozenset[str] = frozenset()  # `--name=value`, or else the next word
    long_optional: frozenset[str] = frozenset()  # their value, if any, follows `=`
    numbers: bool = False  # a dash and a number is an option: nice's `-5`
    lone_dash: bool = False  # a lone `-` is an option (env's `-` is `-i`)
    permute: bool = False  # options may follow operands, as GNU programs allow; else they end at the first operand
    ends: frozenset[str] = frozenset()  # options after which the rest are operands: python's `-c` and `-m`
    lenient_long: bool = False  # an unknown long option is a flag (too many to list; values after `=`)
    strict: bool = False  # an unknown option is a problem even where options may follow operands (su, sed)
    bundled: bool = False  # the first word may be short options without their dash: tar's old style, `tar xzf a`
    effects: Mapping[str, Effect | ValueCheck] = field(default_factory=dict)
    wraps: bool = False  # its operands (after `operands` of them) are a command it runs: sudo, env, timeout
    operands: int = 0  # words it takes before the command: timeout's DURATION
    assignments: bool = False  # `NAME=value` words may come before the command (env, sudo)
    input: bool = False  # without a file operand (or with `-`) it runs code from the input (python, perl)


@dataclass(frozen=True, slots=True)
class Option:
    """One option as read: `name` is `-u` or `--unset` (an abbreviation resolved), `word` as it was written."""

    name: str
    value: Word | None
    word: Word

    @property
    def spelling(self) -> str:
        """The option as written, without its value: `-o` in `-ofile`, `-no` in `-no out`, `--out` in `--out=x`."""
        text = self.word.value
        if text.startswith("--"):
            return text.partition("=")[0]
        letter = self.name[1:]
        return text[: text.index(letter) + 1] if letter and letter in text[1:] else text


@dataclass(frozen=True, slots=True)
class Parsed:
    """A command's arguments taken apart by its option table."""

    options: tuple[Option, ...]
    operands: tuple[Word, ...]
    unknown: tuple[Word, ...] = ()  # option words the table does not know
    unread: tuple[Word, ...] = ()  # words only running the line would tell, where an option could stand
    words: tuple[Word, ...] = ()  # all of them, as written

    def has(self, *names: str) -> bool:
        return any(option.name in names for option in self.options)

    def values(self, *names: str) -> list[Word | None]:
        return [option.value for option in self.options if option.name in names]


def parse_options(grammar: Program, words: Sequence[Word]) -> Parsed:
    """Take `words` apart as `grammar` reads them.

    A program whose options end at its first operand stops at the first word it cannot read (an unknown
    option, or a word only known when it runs that could be an option); the words after it are not read.
    """
    options: list[Option] = []
    operands: list[Word] = []
    unknown: list[Word] = []
    unread: list[Word] = []
    index, stops = 0, not grammar.permute
    while index < len(words) and not (stops and (unknown or unread)):
        word = words[index]
        index += 1
        text = word.literal
        if grammar.bundled and index == 1 and text and text.isalpha():
            text = "-" + text
        read = None if text in (None, "--") else _read_option(grammar, text, word, words, index)
        if word.literal is None and may_be_option(word):
            unread.append(word)
        elif word.literal == "--":
            operands.extend(words[index:])
            break
        elif read is None:  # an operand; where options end at the first one, the rest are operands too
            operands.extend(words[index - 1 :] if stops else (word,))
            if stops:
                break
        else:
            found, index, failed = read
            options.extend(found)
            unknown += [word] if failed else []
            if any(option.name in grammar.ends for option in found):
                operands.extend(words[index:])
                break
    if stops and (unknown or unread):
        operands.clear()  # what follows an unreadable option is not known to be the operands
    return Parsed(tuple(options), tuple(operands), tuple(unknown), tuple(unread), tuple(words))


# The first characters of a word that can never become an option, whatever its expansions give.
_NOT_AN_OPTION_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=:,+%@^")


def may_be_option(word: Word) -> bool:
    """Whether a word only known when it runs could turn out to be an option (`"$x"` could be `-c...`)."""
    return not word.text or word.text[0] not in _NOT_AN_OPTION_START


def _read_option(
    grammar: Program, text: str, word: Word, words: Sequence[Word], index: int
) -> tuple[list[Option], int, bool] | None:
    """The options in one word, the index past the value it took, and whether it failed; None for an operand."""
    if text == "-" and grammar.lone_dash:
        return [Option("-", None, word)], index, False
    if text == "-" or not text.startswith("-"):
        return None
    if grammar.numbers and text.lstrip("-").isdigit() and len(text) - len(text.lstrip("-")) <= 2:
        return [Option("-N", _plain(text.lstrip("-")), word)], index, False
    if text.startswith("--"):
        return _read_long(grammar, text, word, words, index)
    found: list[Option] = []
    failed, position = False, 1
    while position < len(text):
        letter, rest = text[position], text[position + 1 :]
        name = "-" + letter
        if letter in grammar.values and not rest:
            if index >= len(words):
                return [*found, Option(name, None, word)], index, True  # the value is missing
            return [*found, Option(name, words[index], word)], index + 1, failed
        if letter in grammar.values or letter in grammar.optional:
            return [*found, Option(name, _plain(rest) if rest else None, word)], index, failed
        if letter not in grammar.flags + grammar.digits:
            # Read on past a letter the table does not know: a letter after it that runs code or writes a file is
            # still seen, with its value (`git rebase -ix CMD`). A program whose options end at an operand stops.
            failed, position = True, position + 1
            continue
        digits = len(rest) - len(rest.lstrip("0123456789xX")) if letter in grammar.digits else 0
        found.append(Option(name, _plain(rest[:digits]) if digits else None, word))  # perl's `-l0ne`: `-l0 -n -e`
        position += 1 + digits
    return found, index, failed


def _read_long(
    grammar: Program, text: str, word: Word, words: Sequence[Word], index: int
) -> tuple[list[Option], int, bool]:
    written, has_value, value = text[2:].partition("=")
    name = _resolve(grammar.long_flags | grammar.long_values | grammar.long_optional, written)
    if name is None:
        return [], index, not grammar.lenient_long
    option = "--" + name
    if name in grammar.long_values and not has_value:
        if index >= len(words):
            return [Option(option, None, word)], index, True
        return [Option(option, words[index], word)], index + 1, False
    if name in grammar.long_values or name in grammar.long_optional:
        return [Option(option, _plain(value) if has_value else None, word)], index, False
    return [Option(option, None, word)], index, has_value  # a flag given a value is not the flag


def _resolve(names: frozenset[str], written: str) -> str | None:
    """The long option `written` names: itself, or the one option it is an abbreviation of (getopt_long's rule)."""
    if written in names:
        return written
    matches = [name for name in names if name.startswith(written)] if written else []
    return matches[0] if len(matches) == 1 else None


def _plain(text: str) -> Word:  # an option's value cut from a word whose value is known
    return Word(text, text)
