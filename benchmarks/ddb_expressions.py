"""The small part of DynamoDB's expression language the in-memory responder evaluates.

Condition expressions: ``attribute_exists(p)``, ``attribute_not_exists(p)``, ``begins_with(p, :v)`` (on
strings), comparisons ``= <> < <= > >=`` between paths and ``:values``, ``AND``, ``OR``, ``NOT`` and
parentheses (DynamoDB's precedence: comparisons, then NOT, AND, OR). Update expressions: ``SET p =
operand`` where an operand is a value, a path, ``if_not_exists(p, operand)``, ``list_append(a, b)`` (on
lists) or ``a + b`` / ``a - b`` on numbers; ``REMOVE p``; ``ADD p :n`` on numbers. Key condition
expressions of a Query: ``pk = :v``, optionally ``AND`` one sort-key comparison (``begins_with`` included).

Paths are top-level attributes only (``#name`` placeholders or plain names); a nested path, a list
index or any other function raises :class:`UnsupportedExpressionError` naming it, so the benchmark stops
instead of answering wrongly. That covers everything the claim runtime and Powertools' DynamoDB
persistence layer send (checked against their requests), a version-conditioned state write, and the
steering controls' reads of a group's kept records.
Parsed expressions are cached by their text.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping
from decimal import Decimal
from functools import lru_cache
from typing import Any

__all__ = ["UnsupportedExpressionError", "apply_update", "condition_holds", "key_condition"]

Item = dict[str, dict[str, Any]]
Names = Mapping[str, str]
Values = Mapping[str, dict[str, Any]]
# A compiled expression: evaluated against (item, names, values).
_Eval = Callable[[Item, Names, Values], Any]

_TOKEN = re.compile(r"\s*(<>|<=|>=|[=<>(),+\-.\[\]]|[#:]?[A-Za-z_][A-Za-z0-9_]*)")
_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_COMPARATORS = {"=", "<>", *_ORDER}


class UnsupportedExpressionError(ValueError):
    """An expression uses a part of DynamoDB's language the responder does not model."""


def _tokens(text: str) -> list[str]:
    found: list[str] = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None:
            raise UnsupportedExpressionError(f"cannot read {text[position:]!r} in {text!r}")
        found.append(match.group(1))
        position = match.end()
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.upper() != expected):
            raise UnsupportedExpressionError(
                f"expected {expected or 'more'} at token {self.at} of {self.text!r}"
            )
        self.at += 1
        return token

    def done(self) -> None:
        if self.peek() is not None:
            raise UnsupportedExpressionError(f"unexpected {self.peek()!r} in {self.text!r}")

    # condition := or ; or := and (OR and)* ; and := not (AND not)* ; not := NOT not | comparison
    def condition(self) -> _Eval:
        left = self.conjunction()
        while (self.peek() or "").upper() == "OR":
            self.take()
            left = _either(left, self.conjunction())
        return left

    def conjunction(self) -> _Eval:
        left = self.negation()
        while (self.peek() or "").upper() == "AND":
            self.take()
            left = _both(left, self.negation())
        return left

    def negation(self) -> _Eval:
        if (self.peek() or "").upper() == "NOT":
            self.take()
            inner = self.negation()
            return lambda i, n, v: not inner(i, n, v)
        return self.comparison()

    def comparison(self) -> _Eval:
        token = self.peek()
        if token == "(":
            self.take()
            inner = self.condition()
            self.take(")")
            return inner
        if token in ("attribute_exists", "attribute_not_exists"):
            self.take()
            self.take("(")
            path = self.path()
            self.take(")")
            exists = token == "attribute_exists"
            return lambda i, n, v: (_name(path, n) in i) is exists
        if token == "begins_with":
            self.take()
            self.take("(")
            path = self.path()
            self.take(",")
            prefix = self.operand()
            self.take(")")
            return lambda i, n, v: _begins_with(i.get(_name(path, n)), prefix(i, n, v))
        left = self.operand()
        comparator = self.take()
        if comparator not in _COMPARATORS:
            raise UnsupportedExpressionError(f"operator {comparator!r} in {self.text!r}")
        right = self.operand()
        return lambda i, n, v: _compare(left(i, n, v), comparator, right(i, n, v))

    def path(self) -> str:
        token = self.take()
        if token.startswith(":") or not (token[0] == "#" or token[0].isalpha() or token[0] == "_"):
            raise UnsupportedExpressionError(f"{token!r} is not an attribute path in {self.text!r}")
        if self.peek() in (".", "["):
            raise UnsupportedExpressionError(f"nested paths are not modelled: {self.text!r}")
        return token

    def operand(self) -> _Eval:
        token = self.peek()
        if token is None:
            raise UnsupportedExpressionError(f"missing operand in {self.text!r}")
        if token.startswith(":"):
            self.take()
            return lambda i, n, v: v[token]
        if token == "if_not_exists":
            self.take()
            self.take("(")
            path = self.path()
            self.take(",")
            fallback = self.operand()
            self.take(")")
            return lambda i, n, v: i.get(_name(path, n)) or fallback(i, n, v)
        if token == "list_append":
            self.take()
            self.take("(")
            first = self.operand()
            self.take(",")
            second = self.operand()
            self.take(")")
            return lambda i, n, v: _list_append(first(i, n, v), second(i, n, v))
        if self.tokens[self.at + 1 : self.at + 2] == ["("]:
            raise UnsupportedExpressionError(f"function {token!r} is not modelled: {self.text!r}")
        path = self.path()
        return lambda i, n, v: i.get(_name(path, n))

    def value(self) -> _Eval:
        """``operand [(+|-) operand]`` (the right side of SET)."""
        left = self.operand()
        if self.peek() in ("+", "-"):
            sign = self.take()
            right = self.operand()
            return lambda i, n, v: _arithmetic(left(i, n, v), sign, right(i, n, v))
        return left


def _list_append(first: Any, second: Any) -> dict[str, Any]:
    if not (isinstance(first, dict) and "L" in first and isinstance(second, dict) and "L" in second):
        raise UnsupportedExpressionError(f"list_append of {first!r} and {second!r}: both must be lists")
    return {"L": [*first["L"], *second["L"]]}


def _either(first: _Eval, second: _Eval) -> _Eval:
    return lambda i, n, v: bool(first(i, n, v)) or bool(second(i, n, v))


def _both(first: _Eval, second: _Eval) -> _Eval:
    return lambda i, n, v: bool(first(i, n, v)) and bool(second(i, n, v))


def _begins_with(value: dict[str, Any] | None, prefix: dict[str, Any] | None) -> bool:
    if value is None or prefix is None:
        return False
    if "S" not in value or "S" not in prefix:
        raise UnsupportedExpressionError(f"begins_with on {sorted(value)} values is not modelled")
    return str(value["S"]).startswith(str(prefix["S"]))


def _name(path: str, names: Names) -> str:
    if path.startswith("#"):
        if path not in names:
            raise UnsupportedExpressionError(f"placeholder {path} has no ExpressionAttributeNames entry")
        return names[path]
    return path


def _scalar(value: dict[str, Any] | None) -> Any:
    if value is None:
        return None
    if "N" in value:
        return Decimal(value["N"])
    for kind in ("S", "BOOL", "B", "NULL"):
        if kind in value:
            return value[kind]
    raise UnsupportedExpressionError(f"comparing {sorted(value)} values is not modelled")


def _compare(left: dict[str, Any] | None, comparator: str, right: dict[str, Any] | None) -> bool:
    """Compare two attribute values; a missing one or two different types are never equal or ordered."""
    a, b = _scalar(left), _scalar(right)
    if a is None or b is None or type(a) is not type(b):
        return comparator == "<>" and not (a is None and b is None)
    if comparator in ("=", "<>"):
        return (a == b) is (comparator == "=")
    return not isinstance(a, bool) and bool(_ORDER[comparator](a, b))


def _arithmetic(left: dict[str, Any] | None, sign: str, right: dict[str, Any] | None) -> dict[str, Any]:
    if left is None or right is None or "N" not in left or "N" not in right:
        raise UnsupportedExpressionError("arithmetic needs two numbers")
    a, b = Decimal(left["N"]), Decimal(right["N"])
    return {"N": str(a + b if sign == "+" else a - b)}


@lru_cache(maxsize=256)
def _compiled_condition(text: str) -> _Eval:
    parser = _Parser(text)
    compiled = parser.condition()
    parser.done()
    return compiled


def condition_holds(text: str | None, item: Item | None, names: Names, values: Values) -> bool:
    """Whether the condition ``text`` holds for ``item`` (``None`` = no item; no condition holds)."""
    if not text:
        return True
    return bool(_compiled_condition(text)(item or {}, names, values))


@lru_cache(maxsize=256)
def _compiled_update(text: str) -> list[tuple[str, str, _Eval | None]]:
    """``[(action, path, value)]`` with action SET, REMOVE or ADD."""
    parser = _Parser(text)
    actions: list[tuple[str, str, _Eval | None]] = []
    clause = ""
    while parser.peek() is not None:
        token = parser.peek() or ""
        if token.upper() in ("SET", "REMOVE", "ADD", "DELETE"):
            clause = parser.take().upper()
            if clause == "DELETE":
                raise UnsupportedExpressionError(f"DELETE (from a set) is not modelled: {text!r}")
        elif token == ",":
            parser.take()
        elif clause == "SET":
            path = parser.path()
            parser.take("=")
            actions.append(("SET", path, parser.value()))
        elif clause == "ADD":
            actions.append(("ADD", parser.path(), parser.operand()))
        elif clause == "REMOVE":
            actions.append(("REMOVE", parser.path(), None))
        else:
            raise UnsupportedExpressionError(f"cannot read {token!r} in {text!r}")
    return actions


def apply_update(text: str, item: Item, names: Names, values: Values) -> Item:
    """Return a copy of ``item`` with the update expression ``text`` applied."""
    updated = dict(item)
    for action, path, value in _compiled_update(text):
        name = _name(path, names)
        if action == "REMOVE":
            updated.pop(name, None)
            continue
        assert value is not None
        result = value(item, names, values)
        if action == "ADD":
            result = _arithmetic(item.get(name) or {"N": "0"}, "+", result)
        updated[name] = result
    return updated


def key_condition(
    text: str, names: Names, values: Values
) -> tuple[str, dict[str, Any], Callable[[Item], bool]]:
    """Read a Query's key condition: ``(partition key name, its value, sort-key test)``."""
    parser = _Parser(text)
    hash_path = parser.path()
    parser.take("=")
    hash_value = values[parser.take()]
    sort_test: Callable[[Item], bool] = lambda item: True  # noqa: E731
    if parser.peek() is not None:
        parser.take("AND")
        sort = parser.comparison()
        sort_test = lambda item: bool(sort(item, names, values))  # noqa: E731
    parser.done()
    return _name(hash_path, names), hash_value, sort_test
