"""The local stand-ins for AWS services, for a laptop or CI: nothing here talks to a deployed stack on AWS.

- :mod:`~constructs_fifo.local.emulator`: moto's server with fidelity patches (the ``local`` extra);
- :mod:`~constructs_fifo.local.event_source`: ``constructs-fifo drain``, Lambda's SQS poller run locally;
- :mod:`~constructs_fifo.local.pipes`: ``constructs-fifo pipes run``, EventBridge Pipes run locally;
- :mod:`~constructs_fifo.local.errors`: their errors, each a
  :class:`~constructs_fifo.stacks.errors.CommandError`.

Reaching an endpoint and a stack is :mod:`constructs_fifo.stacks`; operating one is
:mod:`constructs_fifo.ops`. This package imports nothing itself, so ``import constructs_fifo.local``
never loads moto.
"""

from __future__ import annotations

__all__: list[str] = []
