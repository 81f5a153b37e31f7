"""Reaching a deployed stack from an operator's machine or CI: AWS or the emulator alike.

What every command that talks to a deployed ``OrderedAgentQueue`` shares, and nothing that runs in
production (the function, a container worker) imports:

- :mod:`~constructs_fifo.stacks.errors`: :class:`~constructs_fifo.stacks.errors.CommandError`, the one
  base (message and fix) of every command's errors, and those of reaching AWS and a stack;
- :mod:`~constructs_fifo.stacks.aws`: endpoint, region and credentials, decided once per command;
  :mod:`~constructs_fifo.stacks.aws_errors`: botocore's environment errors as one-line errors;
- :mod:`~constructs_fifo.stacks.deployed`: a deployed stack's queues, and picking one (``--queue``);
  :mod:`~constructs_fifo.stacks.status`: the stack states the commands accept;
- :mod:`~constructs_fifo.stacks.app_stack`: the app's own stack when no ``--stack`` is given;
- :mod:`~constructs_fifo.stacks.describe`: what ``describe`` reads; :mod:`~constructs_fifo.stacks.counters`:
  a queue's counters; :mod:`~constructs_fifo.stacks.node_env`: a quiet environment for Node children;
  :mod:`~constructs_fifo.stacks.extras`: whether the ``local`` extra is installed.

The rooms above it: :mod:`constructs_fifo.deploy` (preflight and the CDK CLI), :mod:`constructs_fifo.ops`
(operations on a deployed stack), :mod:`constructs_fifo.local` (the local stand-ins for AWS services),
:mod:`constructs_fifo.demo` and the CLI.
"""

from __future__ import annotations

__all__: list[str] = []
