"""DynamoDB's capacity rules, written once: item sizes, write units, read units, and a meter that adds them.

moto 5.2.5 answers ``ReturnConsumedCapacity=TOTAL`` with fixed values whatever the item's size (PutItem,
UpdateItem and DeleteItem 1.0, GetItem 0.5, BatchGetItem one unit per key asked), so figure 9 computes
what a call consumes from the items before and after it, by DynamoDB's published rules; the in-memory
responder (:mod:`benchmarks.responder`) feeds every call it answers to a :class:`CapacityMeter` and
answers ``ReturnConsumedCapacity`` with the same figure. Where moto's fixed values are right (items
under 1 KB written, under 4 KB read) the two agree, and a test holds that.

Item size ("DynamoDB item sizes and formats", docs.aws.amazon.com/amazondynamodb/latest/developerguide/
CapacityUnitCalculations.html): the sum over attributes of the UTF-8 bytes of the name plus the value's
size. A string is its UTF-8 bytes; a number about 1 byte per two significant digits plus 1; a binary
its raw bytes; a boolean or null 1 byte; a list or map 3 bytes plus 1 byte per element plus its
elements (a map's elements with their names); a set the sum of its elements.

Units ("Capacity unit consumption for read and write operations", .../read-write-operations.html):

- **write**: 1 unit per 1 KB (rounded up, at least 1) of the larger of the item before and after
  (PutItem, UpdateItem; DeleteItem: the item deleted); a write whose condition fails consumes the
  same; a transactional write (and a ``ConditionCheck``) twice that, per item of the transaction.
  A cancelled transaction is counted as if it had written (no published rule says otherwise).
- **read**: 1 unit per 4 KB (rounded up, at least one step) strongly consistent, half that eventually
  consistent, twice that transactional; ``BatchGetItem`` rounds every item up on its own and a key
  that finds no item costs one step; ``Query`` rounds the sum of the items returned.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

__all__ = [
    "READ_STEP_BYTES",
    "WRITE_STEP_BYTES",
    "CapacityMeter",
    "attribute_bytes",
    "item_bytes",
    "read_units",
    "write_units",
]

#: One write unit writes this much of an item.
WRITE_STEP_BYTES = 1024
#: One strongly consistent read unit reads this much.
READ_STEP_BYTES = 4096
#: Overhead of a list or a map, whatever it holds, and of each of its elements.
_CONTAINER_BYTES = 3
_ELEMENT_BYTES = 1

Item = Mapping[str, Mapping[str, Any]]


def _number_bytes(text: str) -> int:
    """1 byte per two significant digits, plus 1 (leading and trailing zeroes trimmed)."""
    digits = Decimal(text).normalize().as_tuple().digits
    significant = len(digits) if any(digits) else 1
    return math.ceil(significant / 2) + 1


def attribute_bytes(value: Mapping[str, Any]) -> int:
    """The size of one attribute value in DynamoDB's JSON (``{"S": ...}``, ``{"M": {...}}``...).

    Examples
    --------
    >>> attribute_bytes({"S": "héllo"}), attribute_bytes({"N": "12345"}), attribute_bytes({"BOOL": True})
    (6, 4, 1)
    >>> attribute_bytes({"M": {"ab": {"S": "c"}}})  # 3 + (1 + 2 + 1)
    7
    """
    kind, payload = next(iter(value.items()))
    if kind == "S":
        return len(str(payload).encode())
    if kind == "N":
        return _number_bytes(str(payload))
    if kind == "B":
        return len(base64.b64decode(payload))
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(entry).encode()) for entry in payload)
    if kind == "NS":
        return sum(_number_bytes(str(entry)) for entry in payload)
    if kind == "BS":
        return sum(len(base64.b64decode(entry)) for entry in payload)
    if kind == "L":
        return _CONTAINER_BYTES + sum(_ELEMENT_BYTES + attribute_bytes(entry) for entry in payload)
    if kind == "M":
        return _CONTAINER_BYTES + sum(
            _ELEMENT_BYTES + len(name.encode()) + attribute_bytes(entry) for name, entry in payload.items()
        )
    raise ValueError(f"unknown DynamoDB attribute type {kind!r} in {value!r}: expected S, N, B, BOOL, ...")


def item_bytes(item: Item | None) -> int:
    """The size of an item (0 for no item): attribute names' UTF-8 bytes plus the values' sizes."""
    if not item:
        return 0
    return sum(len(name.encode()) + attribute_bytes(value) for name, value in item.items())


def write_units(size_bytes: int, *, transactional: bool = False) -> float:
    """Write units of one item write of ``size_bytes`` (the larger of before and after)."""
    units = max(1, math.ceil(size_bytes / WRITE_STEP_BYTES))
    return float(units * (2 if transactional else 1))


def read_units(size_bytes: int, *, consistent: bool, transactional: bool = False) -> float:
    """Read units of one read of ``size_bytes`` (one item, or a query's items together)."""
    steps = max(1, math.ceil(size_bytes / READ_STEP_BYTES))
    if transactional:
        return float(2 * steps)
    return float(steps) if consistent else steps / 2


@dataclass
class CapacityMeter:
    """Adds up the units of the calls it is told about, by operation and table."""

    write_units: float = 0.0
    read_units: float = 0.0
    by_operation: dict[str, float] = field(default_factory=dict)
    #: Item writes metered, and the sum of their sizes (the larger of before and after, in bytes).
    items_written: int = 0
    bytes_written: int = 0

    def reset(self) -> None:
        self.write_units = self.read_units = 0.0
        self.items_written = self.bytes_written = 0
        self.by_operation.clear()

    def wrote(self, operation: str, before: Item | None, after: Item | None, *, transactional: bool) -> float:
        """One item written (or refused by its condition): the larger of ``before`` and ``after``."""
        size = max(item_bytes(before), item_bytes(after))
        units = write_units(size, transactional=transactional)
        self.items_written += 1
        self.bytes_written += size
        self.write_units += units
        self.by_operation[operation] = self.by_operation.get(operation, 0.0) + units
        return units

    def read(
        self,
        operation: str,
        items: Iterable[Item | None],
        *,
        consistent: bool,
        each: bool,
        transactional: bool,
    ) -> float:
        """Items read: each rounded on its own (``each``: GetItem, BatchGetItem) or together (Query)."""
        sizes = [item_bytes(item) for item in items]
        if each:
            units = sum(
                (read_units(size, consistent=consistent, transactional=transactional) for size in sizes),
                0.0,
            )
        else:
            units = read_units(sum(sizes), consistent=consistent, transactional=transactional)
        self.read_units += units
        self.by_operation[operation] = self.by_operation.get(operation, 0.0) + units
        return units
