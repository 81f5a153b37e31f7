"""Each prop against the type its row of the settings spec names, before any rule reads its value.

A prop's row (:data:`constructs_fifo.runtime.settings.SETTINGS`) says its type as the docs show it
(``Duration | None``, ``int``, ``JobMode``); the construct's keyword carries the same annotation (a test
pins both). A value of another type (``timeout=60``, ``batch_size="10"``) would otherwise fail deep in
a comparison or in CDK with a message naming neither the prop nor the fix: here it is a problem like
any other, and the rules by value skip it (a prop has one problem, its type).

The types checked here are the ones Python can check at synth time: numbers, strings, booleans,
``Duration``, the public enums (or their values) and ``RemovalPolicy``. A CDK interface (``sns.ITopic``,
``kms.IKey``) cannot be checked by ``isinstance``, and the props whose own rule checks their type
(``code``, ``dashboard``, ``tracing``, ``bundling``...) are left to that rule:
:data:`OWN_TYPE_RULE` and :func:`checked_type` say which.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Final

from aws_cdk import Duration, RemovalPolicy

from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.spec import SECONDS, Setting

__all__ = ["OWN_TYPE_RULE", "check_choice", "check_type", "checked_type"]

#: The types a value is checked against, by the name a row's ``type`` gives them.
_TYPES: Final[Mapping[str, type | tuple[type, ...]]] = {
    "int": (int, float),  # a number token is a float; bool is refused below
    "str": str,
    "bool": bool,
    "Duration": Duration,
    "RemovalPolicy": RemovalPolicy,
    **{kind.__name__: kind for kind in (JobMode, DeadJobPolicy, GapPolicy, OutcomeLines)},
}
#: What each type's problem asks for.
_WORDS: Final = {"int": "a whole number", "str": "a string", "bool": "a bool", "Duration": "a CDK Duration"}
#: Props whose type their own rule checks, with its own message.
OWN_TYPE_RULE: Final = frozenset({"code", "dashboard", "tracing", "architecture", "bundling", "environment"})


def checked_type(row: Setting) -> tuple[str, bool] | None:
    """The type name :func:`check_type` checks ``row``'s prop against and whether ``None`` is allowed;
    ``None`` when its type is not checked here (a CDK interface, a sequence, a prop with its own rule).

    >>> from constructs_fifo.runtime.settings.spec import SETTINGS
    >>> checked_type(SETTINGS["visibility_timeout"]), checked_type(SETTINGS["alarm_topic"])
    (('Duration', True), None)
    """
    names = [part.strip() for part in row.type.split("|")]
    optional = "None" in names
    names = [name for name in names if name != "None"]
    if row.prop in OWN_TYPE_RULE or len(names) != 1 or names[0] not in _TYPES:
        return None
    return names[0], optional


def check_type(row: Setting, value: object) -> list[str]:
    """The problem of ``value`` for ``row``'s prop when it is not of the row's type (an enum's value as
    a string counts as the enum)."""
    checked = checked_type(row)
    if checked is None:
        return []
    name, optional = checked
    kind = _TYPES[name]
    if optional and value is None:
        return []
    if isinstance(value, kind) and not (kind == (int, float) and isinstance(value, bool)):
        return []
    if isinstance(kind, type) and issubclass(kind, enum.StrEnum) and isinstance(value, str):
        return []  # a value as a string: check_choice says whether it is one
    wanted = _WORDS.get(name, f"a {name}") + (" or None" if optional else "")
    given = type(value).__name__
    return [
        f"{row.prop}={value!r} is {_article(given)} {given}: {row.prop} must be {wanted}; pass "
        f"{row.prop}={_example(row, value)}."
    ]


def check_choice(row: Setting, value: object) -> list[str]:
    """The problem of an enum prop given as a string that is none of the row's choices."""
    checked = checked_type(row)
    if checked is None or value is None or not row.choices:
        return []
    if str(value) in row.choices:
        return []
    name = checked[0]
    return [
        f"{row.prop}={value!r} is not {_article(name)} {name}: it must be "
        f"{' or '.join(f'{name}.{choice}' for choice in row.choices)}; pass e.g. "
        f"{row.prop}={name}.{row.default or row.choices[0]}."
    ]


def _example(row: Setting, value: object) -> str:
    """A valid value of ``row``'s prop, near the wrong one when it can be (``60`` as a timeout:
    ``Duration.seconds(60)``)."""
    if row.unit == SECONDS:
        if isinstance(value, int | float) and not isinstance(value, bool) and value > 0:
            return f"Duration.seconds({value:g})"
        return row.example or f"Duration.seconds({row.default})"
    if row.choices:
        return f"{row.type.split('|')[0].strip()}.{row.default or row.choices[0]}"
    if row.type.startswith("int") and isinstance(value, str) and value.strip().isdigit():
        return value.strip()
    if row.type.startswith("RemovalPolicy"):
        return f"RemovalPolicy.{row.default}"
    return row.example or repr(row.default)


def _article(noun: str) -> str:
    return "an" if noun[0].lower() in "aeiou" else "a"
