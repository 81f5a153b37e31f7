"""One row of the settings spec (:mod:`constructs_fifo.runtime.settings.spec`): its fields and its limits
as words, for errors and docs.

Standard library only: the runtime ships alone in the function's asset.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Final, Literal, TypeVar

__all__ = ["SECONDS", "Setting", "human_seconds"]

_T = TypeVar("_T")

#: The unit of every duration setting: whole seconds (a prop takes a CDK ``Duration``).
SECONDS: Final = "seconds"


@dataclass(frozen=True)
class Setting:
    """One setting: where it is given, where it travels, what it defaults to and what it allows.

    Attributes
    ----------
    name : str
        The setting's name: its prop's name when it has one, else the runtime's.
    doc : str
        One line: what it does (the docs' "what" column).
    type : str
        The prop's Python type as the docs show it (the runtime's type when there is no prop).
    default : object
        The default in the row's ``unit`` (seconds for a duration; an enum's value): what the
        construct passes when the prop is omitted, and what the runtime uses without its variable.
        ``None``: required, none, or computed from other props (``default_doc`` says which).
    default_doc : str
        The default as the docs show it.
    prop : str or None
        The construct's keyword; ``None`` for a setting the construct derives or the runtime owns.
    env : str or None
        The environment variable the construct writes and the runtime reads; ``None``: construct
        only (or the runtime's own).
    field : str or None
        The runtime's name for it (a ``RuntimeConfig`` field, a processor's keyword), with its unit.
    low, high : int or None
        Inclusive limits in ``unit``; ``None``: unbounded on that side.
    unit : str
        ``seconds``, ``jobs``, ``attempts``, ``MB``, ... (for messages and docs).
    choices : tuple of str
        The allowed values of an enum setting.
    why : str
        The reason for the limits, as the validation error states it.
    example : str
        A valid value, as the error's fix shows it (``Duration.minutes(5)``).
    rule : str
        More of the rule for the docs (dependent limits, warnings), after the limits.
    state_only : bool
        A state-mode setting: rejected in claim mode, written only in state mode.
    claim_only : bool
        A claim-mode setting: written only where there is a claim table (accepted in state mode,
        where it does nothing).
    not_above : str or None
        Another prop (same unit) this one may not pass, e.g. ``timeout``; ``not_above_why`` says why.
        When that prop is ``lambda_only``, the rule holds only with the Lambda consumer.
    not_above_why : str
        The reason, as the validation error states it.
    lambda_only : bool
        A setting of the Lambda function: refused with the container consumer (``consumer``).
    container_only : bool
        A setting of the container consumer's workers: refused with the Lambda consumer, written only
        for the container.
    container_env : bool
        A setting of both consumers whose variable only the container's workers read (the Lambda
        function's event source mapping carries it): written for the container only.
    """

    name: str
    doc: str
    type: str
    default: object = None
    default_doc: str = ""
    prop: str | None = None
    env: str | None = None
    field: str | None = None
    low: int | None = None
    high: int | None = None
    unit: str = ""
    choices: tuple[str, ...] = ()
    why: str = ""
    example: str = ""
    rule: str = ""
    state_only: bool = False
    claim_only: bool = False
    not_above: str | None = None
    not_above_why: str = ""
    lambda_only: bool = False
    container_only: bool = False
    container_env: bool = False

    def variable(self) -> str:
        """The environment variable, for a row that must have one.

        Raises
        ------
        LookupError
            The row has no variable (a construct-only prop, or the runtime's own setting).
        """
        if self.env is None:
            raise LookupError(f"setting {self.name!r} has no environment variable; give its row an env")
        return self.env

    def default_as(self, kind: builtins.type[_T]) -> _T:
        """The default, for a row whose default must be a ``kind``.

        >>> Setting("max_attempts", "runs of a job", "int", default=5).default_as(int)
        5

        Raises
        ------
        TypeError
            The default is not a ``kind`` (``None``: the row has none).
        """
        value = self.default
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise TypeError(
                f"setting {self.name!r} defaults to {value!r}, not a {kind.__name__}; fix its row"
            )
        return value

    def limit(self, side: Literal["low", "high"]) -> int:
        """The ``low`` or ``high`` limit, for a row that must have it.

        Raises
        ------
        TypeError
            The row has no limit on that side.
        """
        value = self.low if side == "low" else self.high
        if value is None:
            raise TypeError(f"setting {self.name!r} has no {side} limit; fix its row")
        return value

    def violation(self, value: float) -> str | None:
        """The rule ``value`` breaks (``'a whole number from 1 to 1000'``), or ``None`` when it is allowed.

        >>> ttl = Setting("claim_ttl", "how long a claim lives", "Duration", low=1, unit=SECONDS)
        >>> ttl.violation(0)
        'a whole number >= 1'
        >>> ttl.violation(60) is None
        True
        """
        if (self.low is None or value >= self.low) and (self.high is None or value <= self.high):
            return None
        return self.rule_text()

    def rule_text(self) -> str:
        """The limits as words: ``a whole number from 1 to 1000``, ``a whole number >= 1``."""
        if self.low is not None and self.high is not None:
            return f"a whole number from {self.low} to {self.high}"
        if self.low is not None:
            return f"a whole number >= {self.low}"
        if self.high is not None:
            return f"a whole number <= {self.high}"
        return "a whole number"

    def limits_doc(self) -> str:
        """The limits as the docs show them: ``1–10``, ``≥ 1 s``, ``1 s – 15 min``, ``WAIT or SKIP_GAP``."""
        if self.choices:
            return " or ".join(f"`{choice}`" for choice in self.choices)
        low, high = self.low, self.high
        if self.unit == SECONDS:
            low_text = _short_seconds(low) if low is not None else None
            high_text = _short_seconds(high) if high is not None else None
            if low_text and high_text:
                return f"{low_text} – {high_text}" if low else f"≤ {high_text}"
            return f"≥ {low_text}" if low_text else (f"≤ {high_text}" if high_text else "")
        suffix = " MB" if self.unit == "MB" else ""
        if low is not None and high is not None:
            return f"{low}–{high}{suffix}"
        if low is not None:
            return f"≥ {low}{suffix}"
        return f"≤ {high}{suffix}" if high is not None else ""


def human_seconds(seconds: float) -> str:
    """``seconds`` in the largest whole unit, for messages: ``1 second``, ``15 minutes``, ``12 hours``.

    >>> human_seconds(900), human_seconds(43200), human_seconds(1), human_seconds(90)
    ('15 minutes', '12 hours', '1 second', '90 seconds')
    """
    for size, unit in ((86_400, "day"), (3_600, "hour"), (60, "minute"), (1, "second")):
        if seconds >= size and seconds % size == 0:
            count = int(seconds // size)
            return f"{count} {unit}" if count == 1 else f"{count} {unit}s"
    return f"{seconds:g} seconds"


def _short_seconds(seconds: int) -> str:
    """``seconds`` for a docs table cell: ``1 s``, ``15 min``, ``12 h``, ``7 days``."""
    for size, unit in ((86_400, " days"), (3_600, " h"), (60, " min"), (1, " s")):
        if seconds >= size and seconds % size == 0:
            count = seconds // size
            return f"{count}{' day' if unit == ' days' and count == 1 else unit}"
    return f"{seconds} s"
