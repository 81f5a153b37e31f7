"""The local event source mapping: what ``constructs-fifo drain`` runs in place of Lambda's poller.

- :mod:`~constructs_fifo.local.event_source.events`: Lambda's SQS event and batch-response shapes;
- :mod:`~constructs_fifo.local.event_source.deployment`: the deployed settings, and the code fetch;
- :mod:`~constructs_fifo.local.event_source.pool`: one worker process per concurrency slot;
- :mod:`~constructs_fifo.local.event_source.runner`: :class:`EventSourceRunner`, the drain loop;
- :mod:`~constructs_fifo.local.event_source.receipts`: deletes and releases by receipt handle;
- :mod:`~constructs_fifo.local.event_source.reports`: ``InvocationReport`` and the ``DrainStats`` totals;
- ``worker.py``: the standard-library script each worker process runs (never imported).
"""

from __future__ import annotations

__all__: list[str] = []
