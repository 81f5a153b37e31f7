"""What a mutating operations command will do, shown before it is done (``--dry-run``, confirmation).

Every command that changes something first builds a :class:`Plan`: it reads what it needs, refuses
what the rules forbid (:class:`~constructs_fifo.local.errors.OperationRefusedError`, before anything
changed), and lists its steps in the order they will run. ``--dry-run`` prints the plan and stops;
otherwise the CLI asks on a terminal (unless ``--yes``), then :meth:`Plan.apply` runs the steps in
order and records what each did. A step that fails stops the plan: the steps before it are done and
reported, the rest are not (every step is safe to run again: see each command's docstring).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["Plan", "PlanStep", "command", "shell_word"]

#: A word pasted unquoted (``ws#42`` is one shell word: ``#`` starts a comment only at a word's start).
_BARE: Final = re.compile(r"[\w@%+=:,./#-]+")


def shell_word(word: object) -> str:
    """``word`` as a shell reads it back: bare when it can be, quoted otherwise."""
    text = str(word)
    return text if _BARE.fullmatch(text) and not text.startswith("#") else shlex.quote(text)


def command(*words: object) -> str:
    """A command to suggest, between backticks: ```constructs-fifo dlq drop a2```, each value quoted
    for a shell where it must be. The CLI adds the invocation's ``--endpoint-url``, ``--region``,
    ``--stack`` and ``--queue`` (:mod:`constructs_fifo.cli.operations.fix`), so a fix is ready to paste."""
    return "`" + " ".join(["constructs-fifo", *(shell_word(word) for word in words)]) + "`"


@dataclass(frozen=True)
class PlanStep:
    """One change: what it is (``describe``) and the call that makes it (returns what it did)."""

    describe: str
    run: Callable[[], str | None]


@dataclass
class Plan:
    """The steps of one command, the notes an operator should read first, and what was done.

    Attributes
    ----------
    command
        The command's words, e.g. ``dlq redrive``.
    argv
        The whole command as it was asked for, with its values (``groups resume ws#42 --skip-dead``),
        for a fix that repeats it (e.g. with ``--yes``); ``command`` when left empty.
    steps
        The changes, in order. An empty plan changes nothing (the command says so).
    notes
        Warnings about the consequences (e.g. order already broken for a group).
    details
        Command-specific facts for ``--json`` (e.g. the jobs a redrive moves).
    done
        What each applied step did, filled by :meth:`apply`.
    """

    command: str
    argv: list[str] = field(default_factory=list)
    steps: list[PlanStep] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    on_close: list[Callable[[], None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.argv:
            self.argv = self.command.split()

    def close(self) -> None:
        """Let go of what planning holds (e.g. DLQ messages received to be checked); idempotent."""
        while self.on_close:
            self.on_close.pop()()

    def add(self, describe: str, run: Callable[[], str | None]) -> None:
        self.steps.append(PlanStep(describe, run))

    def apply(self) -> list[str]:
        """Run every step in order; return (and keep in ``done``) what each did."""
        for step in self.steps:
            said = step.run()
            self.done.append(said or step.describe)
        return self.done

    def to_dict(self, *, dry_run: bool) -> dict[str, Any]:
        """The command's JSON document: ``{"command", "dryRun", "planned", "done", "notes", ...details}``."""
        return {
            "command": self.command,
            "dryRun": dry_run,
            "planned": [step.describe for step in self.steps],
            "done": list(self.done),
            "notes": list(self.notes),
            **self.details,
        }
