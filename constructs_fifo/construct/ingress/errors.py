"""Errors of the ingress constructs (a leaf: only the construct's base error)."""

from __future__ import annotations

from constructs_fifo.construct.errors import InvalidPropsError

__all__ = ["InvalidIngressPropsError"]


class InvalidIngressPropsError(InvalidPropsError):
    """One or more props of an ingress construct are invalid; the message lists them all.

    Each problem names the prop, its value, the rule and the fix. A :class:`ValueError`, and an
    :class:`~constructs_fifo.construct.errors.InvalidPropsError` like the queue's own.
    """

    def __init__(self, construct: str, problems: list[str]) -> None:
        super().__init__(problems)
        self.construct = construct
        header = f"{construct}: {len(problems)} invalid prop(s):"
        self.args = ("\n".join([header, *(f"- {p}" for p in problems)]),)
