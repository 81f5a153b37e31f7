"""Cancelling a live group's queued jobs: what a runtime does with a ``CANCELLING`` group's records.

:meth:`constructs_fifo.client.steering.JobSteering.cancel_group` puts the group's park header with
status ``CANCELLING`` (naming a marker id; on condition that the group has no header), then sends the
marker message in the group (:func:`~constructs_fifo.runtime.dead_jobs.park_records.cancel_marker_message`).
SQS FIFO delivers a group in send order, so every job sent before the call comes before the marker
and every job sent after it comes after. The runtime reads the header once per batch already (claim
mode under PARK; state mode always). Rules, for a group whose header is ``CANCELLING``:

1. **Before the marker: cancelled.** Each record of the group before the marker is cancelled, not run
   (claim mode: its claim is written ``CANCELLED`` by the one-job rules, so ``JobOutcomes`` says
   ``cancelled``; state mode: a cancel entry committed with the state, its place closed) and deleted:
   ``CANCELLED``, ``JobsCancelled``, never dead-lettered. With ``up_to_seq`` (state mode), a record whose
   ``seq`` is above it (or that has none) is applied as usual.
2. **The marker: the end.** Meeting the marker, the runtime deletes the header on condition of its
   version: the group is live. Records after the marker in the same batch are reported back at once
   (visibility 0, no attempt counted) and come back in order to a live group. If the header cannot be
   deleted (an operator changed it), the marker comes back too and is met again.
3. **Another marker** (an earlier cancel's, replaced by a later cancel of the same group) is a
   wake-up message: ignored, deleted. Each cancel moves the marker to its own, later one.
4. **A lost marker.** A record sent more than ``MARKER_WINDOW_SECONDS`` after the header was written
   cannot have been sent before the call that wrote it (its marker send failed, and the caller did not
   run the cancel again): the runtime ends the cancel there, as at the marker, so a group is never
   cancelled for ever. Keep the canceller's clock within that window of SQS's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from constructs_fifo.runtime.dead_jobs.park_records import CANCELLING, cancel_marker_of, is_wake_up

if TYPE_CHECKING:  # pragma: no cover - typing only
    from collections.abc import Sequence

    from constructs_fifo.runtime.dead_jobs.park_records import ParkHeader
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["MARKER_WINDOW_SECONDS", "CancelThrough", "is_cancelling", "split_at_marker"]

#: Rule 4: a record sent this long after the header's write ends a cancel whose marker never came.
MARKER_WINDOW_SECONDS: Final = 300
#: The action of a record cancelled by its group's cancel (its outcome line).
CANCELLED_ACTION: Final = "not run: its group's queued jobs were cancelled (groups cancel) before it; deleted"


@dataclass
class CancelThrough:
    """A ``CANCELLING`` group's records of one batch, split by rule 1 to 4.

    Attributes
    ----------
    before:
        The group's job records before its marker (or before the end of the batch): cancelled.
    ended:
        The marker was met (or rule 4 ended the cancel): delete the header.
    marker:
        The marker message itself, when it is in the batch (deleted with the header; reported back
        when the header could not be deleted).
    after:
        The records after the end: reported back at once, to come back to a live group.
    """

    before: list[SQSRecord] = field(default_factory=list)
    ended: bool = False
    marker: SQSRecord | None = None
    after: list[SQSRecord] = field(default_factory=list)


def is_cancelling(header: ParkHeader | None) -> bool:
    """Whether ``header`` is a group cancel's (rules 1 to 4 apply to the group's records)."""
    return header is not None and header.status == CANCELLING


def split_at_marker(header: ParkHeader, records: Sequence[SQSRecord]) -> CancelThrough:
    """Rules 1 to 4 on ``records`` (the group's, in batch order, wake-up messages included)."""
    split = CancelThrough()
    marker_id = header.dead.message_id
    window_end_ms = header.dead.at_ms + MARKER_WINDOW_SECONDS * 1000
    for record in records:
        if split.ended:
            split.after.append(record)
        elif cancel_marker_of(record) == marker_id:
            split.ended, split.marker = True, record
        elif is_wake_up(record):
            continue  # rule 3: another wake-up; the batch deletes it
        elif _sent_ms(record) > window_end_ms:
            split.ended = True
            split.after.append(record)
        else:
            split.before.append(record)
    return split


def _sent_ms(record: SQSRecord) -> int:
    try:
        return int(record.get("attributes", {}).get("SentTimestamp", "0"))
    except (TypeError, ValueError):
        return 0
