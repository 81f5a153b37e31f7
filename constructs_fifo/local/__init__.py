"""Operations on a laptop or in CI: the local emulator, deploying, the local event source mapping, the demo.

- :mod:`~constructs_fifo.local.errors`: :class:`~constructs_fifo.local.errors.LocalError`, the one base
  (message and fix) of every error below;
- :mod:`~constructs_fifo.local.aws`: endpoint, region and credentials, decided once per command;
  :mod:`~constructs_fifo.local.aws_errors`: botocore's environment errors as one-line errors;
- :mod:`~constructs_fifo.local.deploy`: the CDK CLI (bootstrap, deploy, outputs);
  :mod:`~constructs_fifo.local.stack`: a deployed stack's queues, and picking one;
  :mod:`~constructs_fifo.local.queues`: a queue's counters;
- :mod:`~constructs_fifo.local.emulator`: moto's server with fidelity patches (the ``local`` extra);
- :mod:`~constructs_fifo.local.event_source`: ``constructs-fifo drain``, Lambda's poller run locally;
- :mod:`~constructs_fifo.local.demo`: the sample app's contract, workload, verifier and scenarios.

This package imports nothing itself, so ``import constructs_fifo.local`` never loads moto.
"""

from __future__ import annotations

__all__: list[str] = []
