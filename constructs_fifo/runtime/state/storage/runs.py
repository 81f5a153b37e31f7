"""A group's run item: the crash watch's marker (:class:`RunMarker`), in a small item of its own beside
the state item, and what a read found of it (:class:`FoundRun`).

Item layout (the group table; partition key ``group``, sort key ``sk = "run"``):

=============  ====  =============================================================================
attribute      type  meaning
=============  ====  =============================================================================
``group``      S     the ``MessageGroupId``
``sk``         S     ``"run"``
``run``        S     the marker (:class:`RunMarker`'s JSON)
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

import json
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

__all__ = ["GROUP_RUN", "FoundRun", "RunItem", "RunMarker", "decode_run_item", "run_item_put"]


@dataclass(frozen=True)
class RunMarker:
    """What a run was about to do when it wrote its marker.

    Attributes
    ----------
    job_id : str or None
        The job whose transition was about to run (an isolated run), ``None`` for a group's run.
    attempt : int
        That job's attempt number (0 for a group's run).
    """

    job_id: str | None = None
    attempt: int = 0

    def encode(self) -> str:
        """The marker as the item stores it: compact JSON."""
        data: dict[str, Any] = {} if self.job_id is None else {"job": self.job_id, "attempt": self.attempt}
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    def counted_event(self, group: str) -> dict[str, Any]:
        """The log event of a job marker found (rule 4 of the crash watch): its attempt is counted."""
        return {
            "level": "WARN",
            "event": "worker_crash_counted",
            "group": group,
            "jobId": self.job_id,
            "attempt": self.attempt,
            "error": f"attempt {self.attempt} of job {self.job_id!r} stopped its worker before its group "
            "committed (a crash, out of memory, the function timeout, or a worker still running past its "
            "visibility timeout); counted as an attempt",
        }

    @classmethod
    def decode(cls, text: str) -> RunMarker:
        """The marker of :meth:`encode`'s JSON.

        Raises
        ------
        ValueError
            Not a JSON object, or a job without a positive attempt.
        """
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError(f"the run marker is a JSON {type(data).__name__}, not an object")
        if "job" not in data:
            return GROUP_RUN
        attempt = int(data.get("attempt", 0))
        if attempt < 1:
            raise ValueError(f"the run marker of job {data['job']!r} has attempt {attempt}; it must be >= 1")
        return cls(str(data["job"]), attempt)


#: The marker of a group's run (rule 2 of the crash watch).
GROUP_RUN = RunMarker()


@dataclass(frozen=True)
class FoundRun:
    """What a read found of a group's run.

    Attributes
    ----------
    marker : RunMarker or None
        The marker in force: the run item's when it was written over the state's version, else the one
        the state item carries (rule 5 of the crash watch), else ``None``.
    token : str or None
        The run item's token (``None``: the group has no run item, or it was not read).
    read : bool
        Whether the run item was read (the runtime reads it for a redelivered group only).
    """

    marker: RunMarker | None = None
    token: str | None = None
    read: bool = False


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
