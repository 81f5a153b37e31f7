"""Errors of the CDK side: one base class, narrow subclasses (a leaf module: imports nothing)."""

from __future__ import annotations

__all__ = ["ConstructsFifoError", "DependencyBundlingError", "InvalidPropsError", "PropsTableMissingError"]


class ConstructsFifoError(Exception):
    """Base class of every error the constructs-fifo construct raises."""


class InvalidPropsError(ConstructsFifoError, ValueError):
    """One or more props of an :class:`OrderedAgentQueue` are invalid; the message lists them all.

    Each problem names the prop, its value, the rule and the fix.
    """

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        header = f"OrderedAgentQueue: {len(problems)} invalid prop(s):"
        super().__init__("\n".join([header, *(f"- {p}" for p in problems)]))


class DependencyBundlingError(ConstructsFifoError):
    """The job code's dependencies could not be installed for the function's platform at synth.

    The message names the package, the platform and the fixes (vendor it, a layer, Docker bundling).
    """


class PropsTableMissingError(ConstructsFifoError, ValueError):
    """A doc has no generated props table to rewrite (its marker lines are missing)."""
