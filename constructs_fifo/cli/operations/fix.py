"""A refusal's fix, ready to paste: every suggested command carries this invocation's target.

An error of the operations commands names the command to run next between backticks
(```constructs-fifo dlq drop a2```), built by :func:`constructs_fifo.ops.plan.command` from real
values (the job, the group), never a placeholder. What the library cannot know is where the operator
pointed the command: :func:`complete_commands` adds this invocation's own ``--endpoint-url``,
``--region``, ``--stack`` and ``--queue`` to each suggested command that does not name them already, so
a pasted fix talks to the same endpoint, region, stack and queue. ``--region`` is always added (a
region from the environment is not in the next terminal's environment); ``--endpoint-url``,
``--stack`` and ``--queue`` when the invocation had one.
"""

from __future__ import annotations

import argparse
import re
from typing import Final

from constructs_fifo.ops.plan import shell_word

__all__ = ["complete_commands", "target_words"]

_SUGGESTED: Final = re.compile(r"`(constructs-fifo [^`]*)`")


def target_words(args: argparse.Namespace) -> list[tuple[str, str]]:
    """This invocation's target options, as ``(option, value)`` pairs, in the order they are added."""
    options = [
        ("--endpoint-url", getattr(args, "endpoint_url", None)),
        ("--region", getattr(args, "region", None)),
        ("--stack", getattr(args, "stack", None)),
        ("--queue", getattr(args, "queue", None)),
    ]
    return [(option, str(value)) for option, value in options if value]


def complete_commands(text: str, args: argparse.Namespace) -> str:
    """``text`` with each backticked ``constructs-fifo ...`` command completed with the target options."""
    pairs = target_words(args)

    def complete(match: re.Match[str]) -> str:
        line = match.group(1)
        words = line.split()
        extra = [f"{option} {shell_word(value)}" for option, value in pairs if option not in words]
        return f"`{' '.join([line, *extra])}`"

    return _SUGGESTED.sub(complete, text)
