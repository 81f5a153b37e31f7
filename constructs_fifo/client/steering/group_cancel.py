"""Cancelling a *live* group's queued jobs (:meth:`JobSteering.cancel_group` on a group without a hold):
the canceller's side of :mod:`constructs_fifo.runtime.steering.group_cancel`.

1. **Header first.** One transaction puts the group's park header ``CANCELLING`` naming a new marker id
   (on condition that the group has no header; a group already cancelling gets its marker moved to the
   new one, on condition of the header's version). In state mode the same transaction writes the
   group's state item on condition of the version read: the jobs waiting in its reorder buffer (sent
   before, arrived, not applied) are cancelled there, and the version moves, so a batch that read the
   group before the call cannot commit: its records come back and meet the header.
2. **Then the marker.** The marker message is sent in the group: SQS FIFO puts it after every job sent
   before the call and before every job sent after it. The runtime cancels the group's records until
   it meets the marker, then deletes the header. A job sent after the call is never cancelled.
3. **A failed send** puts the header back as it was (deleted, or the previous marker) and raises: the
   call did nothing that lasts. If that fails too, the error says so: run the cancel again (a new
   marker), and the runtime ends the cancel by itself ``MARKER_WINDOW_SECONDS`` after the header.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.constants import (
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    STATE_ATTR_UPDATED_AT,
    STATE_ATTR_VERSION,
    STATE_SK,
    DeadReason,
)
from constructs_fifo.runtime.dead_jobs.parking import CANCELLING, ParkHeader, ParkStore, cancel_marker_message
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.exceptions import ParkConflictError
from constructs_fifo.runtime.state.core.records import CancelEntry
from constructs_fifo.runtime.state.storage.book import encode_cancelled
from constructs_fifo.runtime.state.storage.cancels import read_group
from constructs_fifo.runtime.steering.names import (
    MAX_CANCEL_REASON_LENGTH,
    MAX_CANCELLED_IDS,
    STATE_ATTR_CANCELLED,
)

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["LiveCancel", "cancel_live_group"]

#: Lost races (the header or the state moved) the cancel retries before it says so.
_MAX_ROUNDS: Final = 8


class LiveCancel:
    """What one live-group cancel wrote: its marker, the buffered jobs it cancelled, what was sent."""

    def __init__(self, marker_id: str, buffered: tuple[str, ...], message_id: str) -> None:
        self.marker_id = marker_id
        self.buffered = buffered
        self.message_id = message_id


def cancel_live_group(
    parking: ParkStore,
    dynamodb: DynamoDBClient,
    sqs: SQSClient,
    queue_url: str,
    group: str,
    *,
    state_mode: bool,
    reason: str,
    by: str,
    up_to_seq: int | None,
) -> LiveCancel:
    """Rules 1 to 3 of the module docstring.

    Raises
    ------
    ParkConflictError
        The group's header or state moved ``_MAX_ROUNDS`` times, or the group was held or parked
        meanwhile (nothing was written).
    RuntimeError
        The marker could not be sent (the message says whether the header was put back).
    """
    for _ in range(_MAX_ROUNDS):
        header = parking.header(group)
        if header is not None and header.status != CANCELLING:
            raise ParkConflictError(f"group {group!r} became {header.status} meanwhile; nothing was written")
        marker_id = str(uuid.uuid4())
        cancel = DeadJob(
            job_id="",
            job_type="",
            error_type=by[:MAX_CANCEL_REASON_LENGTH] or "operator",
            error=reason[:MAX_CANCEL_REASON_LENGTH] or "group cancelled",
            attempts=0,
            message_id=marker_id,
            at_ms=parking.now_ms(),
            seq=up_to_seq,
            reason=DeadReason.HELD,  # not a death: an operator's stop, as a hold's (the status says which)
        )
        if header is None:
            updated, items = parking.cancelling_items(group, cancel=cancel)
        else:
            updated, items = parking.advance_items(header, done=(), dead=cancel)
        buffered: tuple[str, ...] = ()
        if state_mode:
            state_item, buffered = _state_items(parking, dynamodb, group, cancel, up_to_seq)
            items.append(state_item)
        try:
            parking.transact(items, group)
        except ParkConflictError:
            continue
        try:
            sent = sqs.send_message(**cancel_marker_message(queue_url, group, marker_id))
        except Exception as exc:
            raise RuntimeError(_put_back(parking, updated, header, exc, buffered=buffered)) from exc
        return LiveCancel(marker_id, buffered, str(sent.get("MessageId", "")))
    raise ParkConflictError(f"group {group!r}: its header or state changed {_MAX_ROUNDS} times; call again")


def _state_items(
    parking: ParkStore, dynamodb: DynamoDBClient, group: str, cancel: DeadJob, up_to_seq: int | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """State mode: the state item's write (on condition of its version, moving it) cancelling the jobs
    in its reorder buffer (with ``seq`` at or below ``up_to_seq`` when given)."""
    read = read_group(dynamodb, parking.table_name, group)
    known = read.cancelled_ids
    new = [
        entry.job_id
        for entry in read.book.buffer
        if entry.job_id not in known and (up_to_seq is None or entry.seq <= up_to_seq)
    ]
    entries = (
        *read.cancelled,
        *(CancelEntry(job_id, cancel.at_ms, cancel.error, cancel.error_type) for job_id in new),
    )[-MAX_CANCELLED_IDS:]
    names = {"#version": STATE_ATTR_VERSION, "#updated_at": STATE_ATTR_UPDATED_AT}
    values: dict[str, Any] = {":next": {"N": str(read.version + 1)}, ":now": {"N": str(cancel.at_ms)}}
    expression = "SET #version = :next, #updated_at = :now"
    if entries:
        names["#cancelled"] = STATE_ATTR_CANCELLED
        values[":cancelled"] = {"S": encode_cancelled(entries)}
        expression += ", #cancelled = :cancelled"
    if read.version == 0:
        names["#group"] = GROUP_ATTR_GROUP
        condition = "attribute_not_exists(#group)"
    else:
        values[":expected"] = {"N": str(read.version)}
        condition = "#version = :expected"
    update = {
        "Update": {
            "TableName": parking.table_name,
            "Key": {GROUP_ATTR_GROUP: {"S": group}, GROUP_ATTR_SK: {"S": STATE_SK}},
            "UpdateExpression": expression,
            "ConditionExpression": condition,
            "ExpressionAttributeNames": names,
            "ExpressionAttributeValues": values,
        }
    }
    return update, tuple(new)


def _put_back(
    parking: ParkStore,
    written: ParkHeader,
    before: ParkHeader | None,
    exc: Exception,
    *,
    buffered: tuple[str, ...],
) -> str:
    """Rule 3: the header as it was before the call; the error's text, saying what stands."""
    try:
        if before is None:
            parking.finish(written)
        else:
            parking.advance(written, done=(), dead=before.dead)
    except Exception as again:
        return (
            f"group {written.group!r}: the cancel's marker could not be sent ({exc}) and its header could "
            f"not be put back ({again}): run the cancel again (it sends a new marker); the runtime ends "
            "this one by itself within 5 minutes"
        )
    kept = (
        f" (the jobs waiting in its reorder buffer stay cancelled: {', '.join(buffered)})" if buffered else ""
    )
    return (
        f"group {written.group!r}: the cancel's marker could not be sent ({exc}); its header is as it "
        f"was{kept}"
    )
