"""Fidelity patch of moto's DynamoDB backend: one request at a time (``moto/dynamodb/models/__init__.py``).

moto's server answers every request on its own thread, and moto 5.2.5's DynamoDB backend has no lock.
``DynamoDBBackend.transact_write_items`` starts by taking a backup of every table it writes,
``copy.deepcopy(self.tables[name])``, which walks the table's item dict; a PutItem or UpdateItem of
another thread that adds an item to that dict meanwhile makes the copy fail with ``RuntimeError:
dictionary changed size during iteration``, which the server answers with HTTP 500 (seen: 0-5
TransactWriteItems per drain with the workers in parallel). Worse, a transaction that is cancelled
restores those backups whole, so any write another thread made to the same tables between the
backup and the rollback is silently undone. A query or scan walking a table while an item is added
can fail the same way.

AWS: API_TransactWriteItems ("an all-or-nothing operation"; other writes are never lost to a
cancelled transaction) and the DynamoDB read consistency pages: a request never fails because
another one runs. :func:`patch` makes every backend method that reads or writes items hold one lock
(:data:`DYNAMODB_LOCK`), so a transaction, its backup and its rollback see no other write. DynamoDB
is far from the bottleneck of a local run (figure 8 of ``make bench``: the emulator's CPU per job is
moto's request handling, not the item dicts), so one lock costs nothing measurable.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Final

from moto.dynamodb.models import DynamoDBBackend

from constructs_fifo.local.emulator.patches.registry import replace

__all__ = ["DYNAMODB_LOCK", "LOCKED_METHODS", "patch"]

#: One lock for every DynamoDB backend call that reads or writes items or tables (re-entrant: a
#: transaction calls put_item, update_item and delete_item inside it).
DYNAMODB_LOCK: Final = threading.RLock()

LOCKED_METHODS: Final = (
    "create_table",
    "delete_table",
    "update_table",
    "describe_table",
    "put_item",
    "get_item",
    "update_item",
    "delete_item",
    "query",
    "scan",
    "transact_write_items",
    "execute_statement",
    "execute_transaction",
    "batch_execute_statement",
)
"""The ``DynamoDBBackend`` methods that run under :data:`DYNAMODB_LOCK`."""


def _serialized(unlocked: Callable[..., Any], name: str) -> Callable[..., Any]:
    def locked(*args: Any, **kwargs: Any) -> Any:
        with DYNAMODB_LOCK:
            return unlocked(*args, **kwargs)

    locked.__name__ = name
    locked.__doc__ = unlocked.__doc__
    return locked


def patch() -> None:
    """Apply the DynamoDB lock (item 12 of the package docstring)."""
    for name in LOCKED_METHODS:
        replace(DynamoDBBackend, name, _serialized(DynamoDBBackend.__dict__[name], name))
