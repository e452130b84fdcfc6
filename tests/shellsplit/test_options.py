"""shelloptions: words read by an option table as getopt reads them."""

from __future__ import annotations

from meowgent.shellsplit.options import Program, parse_options
from meowgent.shellsplit.syntax import word_of
from meowgent.shellsplit.words import Word

ENV = Program(flags="i0v", values="uCS", long_flags=frozenset({"ignore-environment"}),
              long_values=frozenset({"unset", "chdir"}), lone_dash=True)  # fmt: skip


def parse(options: Program, line: str):
    return parse_options(options, [word_of(text) for text in line.split()])


def names(parsed) -> list[tuple[str, str | None]]:
    return [(option.name, option.value.value if option.value else None) for option in parsed.options]


def test_short_flags_combine_and_a_value_letter_takes_the_rest_or_the_next_word() -> None:
    parsed = parse(ENV, "-iu HOME -uPATH -0 rm -rf x")
    assert names(parsed) == [("-i", None), ("-u", "HOME"), ("-u", "PATH"), ("-0", None)]
    assert [word.value for word in parsed.operands] == ["rm", "-rf", "x"]


def test_long_options_take_values_after_an_equals_sign_or_in_the_next_word_and_may_be_abbreviated() -> None:
    parsed = parse(ENV, "--unset=HOME --ch /tmp --ignore rm")
    assert names(parsed) == [("--unset", "HOME"), ("--chdir", "/tmp"), ("--ignore-environment", None)]
    assert [word.value for word in parsed.operands] == ["rm"]


def test_an_unknown_option_stops_a_program_whose_options_end_at_its_operands() -> None:
    parsed = parse(ENV, "-i -Z rm x")
    assert [word.value for word in parsed.unknown] == ["-Z"]
    assert parsed.operands == ()


def test_a_word_only_known_when_it_runs_could_be_an_option() -> None:
    parsed = parse_options(ENV, [Word('"$X"', None), word_of("rm")])
    assert [word.text for word in parsed.unread] == ['"$X"']
    assert parsed.operands == ()
    value = parse_options(ENV, [Word("FOO=$x", None), word_of("rm")])
    assert value.unread == ()  # a word that starts with a letter never becomes an option
    assert [word.text for word in value.operands] == ["FOO=$x", "rm"]


def test_gnu_programs_take_options_after_operands_and_stop_at_a_double_dash() -> None:
    sort = Program(flags="n", values="o", permute=True)
    parsed = parse(sort, "in.txt -n -o out -- -o")
    assert names(parsed) == [("-n", None), ("-o", "out")]
    assert [word.value for word in parsed.operands] == ["in.txt", "-o"]


def test_digits_after_a_letter_and_options_that_end_the_options() -> None:
    perl = Program(flags="an", values="e", digits="l")
    assert names(parse(perl, "-l0ane code")) == [("-l", "0"), ("-a", None), ("-n", None), ("-e", "code")]
    python = Program(values="cm", ends=frozenset({"-m"}))
    parsed = parse(python, "-m pytest -c x")
    assert names(parsed) == [("-m", "pytest")]
    assert [word.value for word in parsed.operands] == ["-c", "x"]
