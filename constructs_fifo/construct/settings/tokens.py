"""Reading props at synth time with as few round trips to Node as possible.

Every call on a CDK object (``Token.is_unresolved(x)``, ``duration.to_seconds()``) is a request to
jsii's Node process and back: about a millisecond each, and a queue used to make some fifty of them
to check and write its props (figure 7, synth time). Two shortcuts, both exact:

- :func:`is_unresolved` answers in Python for the values that cannot be tokens, with CDK's own rule
  (``encoding.ts``, ``unresolved``): a string is a token only if it holds ``Token[``; a number only
  if its top 16 bits are CDK's marker ``0xFBFF`` (magnitude about 1e289), so no number within
  ±2**53 is one. Anything else (a float that large, a list, an object) asks CDK.
- :func:`seconds` reads a ``Duration`` once per process: CDK durations are immutable, so the
  answer is kept per object (weakly: the object's lifetime decides), and the construct's defaults,
  shared by every queue, are read once. :func:`remember_seconds` records a duration the construct
  made from a number it already knows.
"""

from __future__ import annotations

import weakref

from aws_cdk import Duration, Token

__all__ = ["is_unresolved", "remember_seconds", "seconds"]

#: No number of this magnitude or less carries CDK's token marker bits (0xFBFF in the top 16).
_LARGEST_PLAIN_NUMBER = 2**53
#: CDK's ``ANY_TOKEN_MARKER``: a string without it is never a token.
_STRING_TOKEN_MARKER = "Token["

#: A duration's seconds (``None``: an unresolved token), per Duration object.
_SECONDS: weakref.WeakKeyDictionary[Duration, float | None] = weakref.WeakKeyDictionary()


def is_unresolved(value: object) -> bool:
    """``Token.is_unresolved(value)``, answered in Python when ``value`` cannot be a token."""
    if isinstance(value, str):
        if _STRING_TOKEN_MARKER not in value:
            return False
    elif isinstance(value, int | float) and -_LARGEST_PLAIN_NUMBER <= value <= _LARGEST_PLAIN_NUMBER:
        return False
    return bool(Token.is_unresolved(value))


def seconds(duration: Duration) -> float | None:
    """``duration`` in seconds (fractions kept), or ``None`` when it is an unresolved token."""
    try:
        return _SECONDS[duration]
    except KeyError:
        pass
    value = None if duration.is_unresolved() else float(duration.to_seconds(integral=False))
    _SECONDS[duration] = value
    return value


def remember_seconds(duration: Duration, value: float) -> Duration:
    """Record that ``duration`` (made by the construct from ``value``) is ``value`` seconds."""
    _SECONDS[duration] = float(value)
    return duration
