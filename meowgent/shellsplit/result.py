"""What reading a shell line gives: its simple commands, and the problems that leave its meaning open."""

from __future__ import annotations

from dataclasses import dataclass

from meowgent.shellsplit.words import Problem, SimpleCommand, short

__all__ = ["Findings", "SplitResult"]


@dataclass(frozen=True, slots=True)
class SplitResult:
    """The simple commands of a command line, and why its meaning is not pinned down (none: it is)."""

    commands: tuple[SimpleCommand, ...]
    problems: tuple[Problem, ...] = ()

    @property
    def segments(self) -> tuple[str, ...]:
        """Each command as shown and matched by rules (`SimpleCommand.text`)."""
        return tuple(command.text for command in self.commands)

    @property
    def hidden(self) -> bool:
        """Whether the line may run code that its commands do not show; see the module docstring."""
        return bool(self.problems)

    @property
    def problem(self) -> str:
        """The first few problems as an English sentence fragment, for the verdict's reason; empty if none."""
        shown_problems = "; ".join(map(str, self.problems[:_SHOWN_PROBLEMS]))
        more = len(self.problems) - _SHOWN_PROBLEMS
        return f"{shown_problems}; and {more} more" if more > 0 else shown_problems


_SHOWN_PROBLEMS = 3


class Findings:
    """What makes a line's meaning not pinned down by its text, gathered while it is read (each once)."""

    def __init__(self, *, budget: int = 0) -> None:
        self._problems: dict[Problem, None] = {}
        self.budget = budget  # characters left to read again in texts and commands handed on (see `spend`)

    @property
    def problems(self) -> list[Problem]:
        return list(self._problems)

    def note(self, kind: str, snippet: str) -> None:
        self.add(Problem(kind, short(snippet)))

    def add(self, problem: Problem) -> None:
        self._problems[problem] = None

    def spend(self, text: str) -> bool:
        """Take `text` from the budget for reading text again; False (and a problem) when it is spent.

        A text run inside a text run inside ... (`eval eval eval ...`) is read once per level; the budget
        (the line's length and a little more) keeps the whole reading linear in the line's length.
        """
        self.budget -= len(text)
        if self.budget < 0:
            self.note("too_many", text)
        return self.budget >= 0
