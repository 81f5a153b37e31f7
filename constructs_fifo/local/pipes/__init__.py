"""The local EventBridge pipe: what ``constructs-fifo pipes run`` runs in place of the Pipes service.

- :mod:`~constructs_fifo.local.pipes.paths`: Pipes' path semantics (dynamic target parameters,
  input templates, the SQS source's event), a pure core;
- :mod:`~constructs_fifo.local.pipes.deployment`: a deployed stack's pipes, read as deployed;
- :mod:`~constructs_fifo.local.pipes.runner`: :class:`PipeRunner`, receive, evaluate, send, delete.

It is to an ``AWS::Pipes::Pipe`` what :mod:`constructs_fifo.local.event_source` is to a Lambda event
source mapping: the emulator deploys the pipe as configuration only, and this runner moves records.
"""

from __future__ import annotations

__all__: list[str] = []
