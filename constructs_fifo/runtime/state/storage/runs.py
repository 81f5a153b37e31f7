"""A group's run item: the crash watch's marker, in a small item of its own beside the state item.

Item layout (the group table; partition key ``group``, sort key ``sk = "run"``):

=============  ====  =============================================================================
attribute      type  meaning
=============  ====  =============================================================================
``group``      S     the ``MessageGroupId``
``sk``         S     ``"run"``
``run``        S     the marker (:class:`~constructs_fifo.runtime.state.crash_watch.RunMarker`'s JSON)
``of``         N     the state version it was written over (0: the group had no state item)
``token``      S     a fresh id per write: the next write is conditioned on it
``updated_at`` N     epoch ms of the write
=============  ====  =============================================================================

Rules:

1. **Live while the state has not moved.** A run item is in force while the state item is still at
   version ``of``; the group's next commit passes it (a later state version: it is ignored), so
   nothing ever has to remove it. It stays, about 100 bytes, until the group's next marker replaces it.
2. **Fenced writes.** A marker write is a ``PutItem`` conditioned on the token the worker read (or
   wrote last), ``attribute_not_exists`` when there was no item; a worker that did not read the item
   writes only where none over its version or a later one exists
   (``attribute_not_exists(#group) OR #of < :of``). A failed condition writes nothing: another worker
   holds the group, and the run stops as a lost race.
3. **Why not in the state item.** There a marker costs a write of the whole item, the state's size in
   write units (10 for a 10 KB state); here it costs one, whatever the state (issue 17).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from constructs_fifo.runtime.constants import (
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    RUN_ATTR_OF,
    RUN_ATTR_TOKEN,
    RUN_SK,
    STATE_ATTR_RUN,
    STATE_ATTR_UPDATED_AT,
)
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import ConstructsFifoRuntimeError
from constructs_fifo.runtime.state.crash_watch import RunMarker

__all__ = ["RunItem", "decode_run_item", "run_item_put"]


@dataclass(frozen=True, slots=True)
class RunItem:
    """A run item as read: its marker, the state version it was written over, and its token."""

    marker: RunMarker
    of_version: int
    token: str

    def live_over(self, state_version: int) -> bool:
        """Whether the marker is in force over a state read at ``state_version`` (rule 1)."""
        return self.of_version == state_version


def run_item_put(
    table_name: str,
    group: str,
    of_version: int,
    marker: RunMarker,
    *,
    replaces: str | None,
    read: bool,
    token: str | None = None,
    now_ms: int,
) -> tuple[dict[str, Any], str]:
    """The ``PutItem`` parameters of a marker write (rule 2) and the token it writes.

    Examples
    --------
    >>> put, token = run_item_put("groups", "ws#1", 3, RunMarker("j1", 1), replaces="t1", read=True,
    ...                           token="t2", now_ms=0)
    >>> put["ConditionExpression"], put["Item"]["of"], token
    ('#token = :replaces', {'N': '3'}, 't2')
    """
    written = token or uuid.uuid4().hex
    item = {
        GROUP_ATTR_GROUP: {"S": group},
        GROUP_ATTR_SK: {"S": RUN_SK},
        STATE_ATTR_RUN: {"S": marker.encode()},
        RUN_ATTR_OF: {"N": str(of_version)},
        RUN_ATTR_TOKEN: {"S": written},
        STATE_ATTR_UPDATED_AT: {"N": str(now_ms)},
    }
    put: dict[str, Any] = {"TableName": table_name, "Item": item}
    if not read:
        put["ConditionExpression"] = "attribute_not_exists(#group) OR #of < :of"
        put["ExpressionAttributeNames"] = {"#group": GROUP_ATTR_GROUP, "#of": RUN_ATTR_OF}
        put["ExpressionAttributeValues"] = {":of": {"N": str(of_version)}}
    elif replaces is None:
        put["ConditionExpression"] = "attribute_not_exists(#group)"
        put["ExpressionAttributeNames"] = {"#group": GROUP_ATTR_GROUP}
    else:
        put["ConditionExpression"] = "#token = :replaces"
        put["ExpressionAttributeNames"] = {"#token": RUN_ATTR_TOKEN}
        put["ExpressionAttributeValues"] = {":replaces": {"S": replaces}}
    return put, written


def decode_run_item(item: dict[str, Any]) -> RunItem:
    """The :class:`RunItem` of a low-level run item.

    Raises
    ------
    ConstructsFifoRuntimeError
        The item is not one this runtime wrote (the message says how to clear it).
    """
    try:
        return RunItem(
            RunMarker.decode(item[STATE_ATTR_RUN]["S"]),
            int(item[RUN_ATTR_OF]["N"]),
            str(item[RUN_ATTR_TOKEN]["S"]),
        )
    except (KeyError, TypeError, ValueError) as exc:
        shown = item.get(GROUP_ATTR_GROUP, {}).get("S", "?")
        raise ConstructsFifoRuntimeError(
            f"the run item of group {shown!r} cannot be read ({describe(exc)}); delete the "
            f"item (sk {RUN_SK!r}): the group then runs as if no crash happened"
        ) from exc
