"""The operations commands' command line: ``status``, ``groups``, ``dlq``, ``claims``, ``state``, ``jobs``.

Parsing (:mod:`~constructs_fifo.cli.operations.parser`), dispatch
(:mod:`~constructs_fifo.cli.operations.commands`), printing (:mod:`~constructs_fifo.cli.operations.output`),
a refusal's fix completed with the invocation's target (:mod:`~constructs_fifo.cli.operations.fix`) and
``jobs`` (:mod:`~constructs_fifo.cli.operations.jobs`); what the commands do is :mod:`constructs_fifo.ops`.
"""

from __future__ import annotations

__all__: list[str] = []
