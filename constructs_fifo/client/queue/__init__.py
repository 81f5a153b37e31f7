"""One client for one queue, found by name: :class:`QueueClient` and the addresses it reads."""

from __future__ import annotations

from constructs_fifo.client.queue.addresses import QueueAddress
from constructs_fifo.client.queue.client import QueueClient

__all__ = ["QueueAddress", "QueueClient"]
