"""Count the API calls of boto3 clients with botocore event hooks (never by patching code)."""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

__all__ = ["CallCounter"]


class CallCounter:
    """Counts the API calls of boto3 clients by operation (botocore ``before-call`` hooks)."""

    def __init__(self, *clients: Any) -> None:
        self.by_operation: Counter[str] = Counter()
        self._clients = clients
        self._id = f"bench-counter-{uuid.uuid4()}"
        for client in clients:
            client.meta.events.register("before-call", self._count, unique_id=self._id)

    def _count(self, model: Any, **_: Any) -> None:
        self.by_operation[model.name] += 1

    @property
    def total(self) -> int:
        return sum(self.by_operation.values())

    def reset(self) -> None:
        self.by_operation.clear()

    def close(self) -> None:
        for client in self._clients:
            client.meta.events.unregister("before-call", unique_id=self._id)
