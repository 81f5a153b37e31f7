"""A fence for a job's own writes: its run's fencing token, checked by the store it writes to.

A stale run (a paused process, a long GC, a partition: its lease ran out and another worker took the
job over) that ignores ``context.cancelled`` keeps running. The runtime refuses its claim writes, but
not the job's writes to its own systems. The known answer (Chubby's sequencer, Kleppmann's fencing
token): every claim of a job gets a token above every earlier one (``context.fence`` on a worker, the
claim item's ``fence``), the job sends it with each write, and the store refuses a write whose token
is below the highest it has seen. This module builds that check for the common sinks:

- DynamoDB: :func:`dynamodb_condition` is a condition (and its names and values) for a conditional
  ``PutItem``/``UpdateItem`` that also sets the token (:func:`dynamodb_set`): a write with an older
  token fails ``ConditionalCheckFailedException``;
- HTTP: :func:`http_headers` sends the token in a header (``X-Fencing-Token`` by default; a server that
  compares it with the highest seen refuses older ones, as it would an ``If-Match`` ETag).

What it means on each consumer: on a **worker** a run can outlive its lease (paused, then resumed), so
the fence is what keeps its late writes out. On the **function** (Lambda) a run cannot be resumed after
its invocation, whose lease is its remaining time: a stale run cannot exist, and the token only orders
the runs. In **state mode** there is nothing to fence: the transition is pure, and its effect (the
state) is committed on the group item's version, already a fence.

Examples
--------
>>> condition = dynamodb_condition(1700000000123)
>>> condition["ConditionExpression"]
'attribute_not_exists(#fence) OR #fence <= :fence'
>>> http_headers(1700000000123)
{'X-Fencing-Token': '1700000000123'}
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["FENCE_ATTRIBUTE", "FENCE_HEADER", "dynamodb_condition", "dynamodb_set", "http_headers"]

#: The attribute a fenced DynamoDB item keeps the highest token in (any name works: pass ``attribute``).
FENCE_ATTRIBUTE: Final = "fence"
#: The header a fenced HTTP write carries.
FENCE_HEADER: Final = "X-Fencing-Token"


def dynamodb_condition(token: int, *, attribute: str = FENCE_ATTRIBUTE) -> dict[str, Any]:
    """``ConditionExpression``, ``ExpressionAttributeNames`` and ``ExpressionAttributeValues`` (low-level
    client shape) refusing a write whose ``token`` is below the item's; merge them into the call."""
    return {
        "ConditionExpression": "attribute_not_exists(#fence) OR #fence <= :fence",
        "ExpressionAttributeNames": {"#fence": attribute},
        "ExpressionAttributeValues": {":fence": {"N": str(token)}},
    }


def dynamodb_set(token: int, *, attribute: str = FENCE_ATTRIBUTE) -> dict[str, Any]:
    """The item attribute a fenced ``PutItem`` writes (``{attribute: {"N": token}}``)."""
    return {attribute: {"N": str(token)}}


def http_headers(token: int, *, header: str = FENCE_HEADER) -> dict[str, str]:
    """The header a fenced HTTP write sends: the server refuses a token below the highest it saw."""
    return {header: str(token)}
