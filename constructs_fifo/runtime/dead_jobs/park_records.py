"""The group table's park items: a parked group's header and its kept records, and their codecs.

:mod:`constructs_fifo.runtime.dead_jobs.parking` reads and writes them (its docstring has the rules);
the operators' tools read them with :func:`decode_header`. No I/O here.
"""

from __future__ import annotations

import json
import uuid
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from constructs_fifo.runtime.constants import (
    CONTROL_ATTRIBUTE,
    CONTROL_RESUME,
    GROUP_ATTR_GROUP,
    GROUP_ATTR_SK,
    KEPT_RECENT_MESSAGE_IDS,
    SK_KEPT_PREFIX,
    SK_PARK,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob, decode_dead_job, encode_dead_job
from constructs_fifo.runtime.exceptions import RecordTooLargeToKeepError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "CANCELLING",
    "HELD",
    "PARKED",
    "RESUMING",
    "KeptRecord",
    "ParkHeader",
    "cancel_marker_message",
    "cancel_marker_of",
    "decode_header",
    "decode_kept",
    "encode_header",
    "encode_kept",
    "is_wake_up",
    "kept_action",
    "kept_sort_key",
    "recent_after",
    "wake_up_message",
]

PARKED = "PARKED"
RESUMING = "RESUMING"
#: Held by an operator (``JobSteering.hold``): kept like a parked group's records, without a dead job;
#: ``dead`` records the hold (reason ``HELD``). Released, it resumes as a parked group does.
HELD = "HELD"
#: A live group's queued jobs are being cancelled (``JobSteering.cancel_group``): every record of the
#: group is cancelled, not run, until its marker message arrives (``dead.message_id`` names the marker,
#: ``dead.seq`` the ``up_to_seq`` when one was given); then the header is deleted and the group is live.
CANCELLING = "CANCELLING"
#: The body field of a group cancel's marker message (a wake-up message that names its marker).
_MARKER_FIELD = "cancelMarker"
#: DynamoDB's item limit is 400 KB; a kept record above this many bytes is stored compressed.
_COMPRESS_ABOVE_BYTES = 100_000
#: A kept record that is still larger than this compressed cannot be kept (key and header room left).
_MAX_KEPT_BYTES = 390_000


@dataclass(frozen=True)
class ParkHeader:
    """A parked (or resuming) group's header item.

    Attributes
    ----------
    group : str
        The MessageGroupId.
    status : str
        ``PARKED`` (stopped at its dead job), ``HELD`` (stopped by an operator: ``dead`` records the
        hold, reason ``HELD``) or ``RESUMING`` (replaying its kept records).
    version : int
        Raised by every write; every write is conditioned on the version read.
    next_seq : int
        Sequence number the next kept record gets.
    dead : DeadJob
        The dead job that parked the group (stored as
        :func:`~constructs_fifo.runtime.dead_jobs.record.encode_dead_job` gives it).
    retry_at_ms : int
        While ``RESUMING``: replay does not start again before this time (a kept job's backoff).
    skip_dead : bool
        While ``RESUMING``: the operator chose to skip the dead job rather than retry it. State mode
        reads it to unpark the group's state the same way (claim mode's resume already reset the dead
        job's claim or sent it to the dead-letter queue, and ignores it).
    recent_message_ids : tuple of str
        The ``messageId`` of the group's last kept records (at most ``KEPT_RECENT_MESSAGE_IDS``,
        oldest first): a record of one of these messages is not kept again (rule 3).
    """

    group: str
    status: str
    version: int
    next_seq: int
    dead: DeadJob
    retry_at_ms: int = 0
    skip_dead: bool = False
    recent_message_ids: tuple[str, ...] = ()

    def new_records(self, records: Sequence[SQSRecord]) -> list[SQSRecord]:
        """``records`` less those whose message this group kept already (rule 3), in order.

        Examples
        --------
        >>> dead = DeadJob("", "", "ValueError", "not JSON", 0, message_id="m1", at_ms=0)
        >>> header = ParkHeader("ws#1", PARKED, 1, 2, dead, recent_message_ids=("m1", "m2"))
        >>> records = [{"messageId": "m2"}, {"messageId": "m3"}, {"messageId": "m3"}]
        >>> [record["messageId"] for record in header.new_records(records)]
        ['m3']
        """
        seen = set(self.recent_message_ids)
        fresh: list[SQSRecord] = []
        for record in records:
            message_id = str(record.get("messageId", ""))
            if message_id and message_id in seen:
                continue
            seen.add(message_id)
            fresh.append(record)
        return fresh

    @property
    def dead_job_id(self) -> str | None:
        """The dead job's ``jobId``; ``None`` when its body had no usable one (a malformed body)."""
        return self.dead.job_id or None

    @property
    def dead_message_id(self) -> str | None:
        """The ``messageId`` of the message the group is parked at (set by every runtime that parks)."""
        return self.dead.message_id or None


@dataclass(frozen=True)
class KeptRecord:
    """One kept record: the SQS record as it was delivered, minus its receipt handle."""

    group: str
    seq: int
    record: SQSRecord

    @property
    def sort_key(self) -> str:
        return kept_sort_key(self.seq)


def kept_action(group: str, *, again: bool, verb: str) -> str:
    """The ``action`` of the outcome line of a record of a parked group (``verb``: what it was not).

    Examples
    --------
    >>> kept_action("ws#1", again=False, verb="run")
    "not run: group 'ws#1' is parked; kept in order behind its dead job"
    >>> kept_action("ws#1", again=True, verb="run")
    "not run: group 'ws#1' is parked and keeps this message already (delivered again)"
    """
    if again:
        return f"not {verb}: group {group!r} is parked and keeps this message already (delivered again)"
    return f"not {verb}: group {group!r} is parked; kept in order behind its dead job"


def kept_sort_key(seq: int) -> str:
    """The sort key of the kept record ``seq`` (zero-padded, so the string order is the number order).

    Examples
    --------
    >>> kept_sort_key(7)
    'kept#00000000000000000007'
    """
    return f"{SK_KEPT_PREFIX}{seq:020d}"


def is_wake_up(record: SQSRecord) -> bool:
    """Whether a record is the wake-up message of a resume (a control message, not a job)."""
    attributes = record.get("messageAttributes") or {}
    marker = attributes.get(CONTROL_ATTRIBUTE) or {}
    value = marker.get("stringValue", marker.get("StringValue"))
    return value == CONTROL_RESUME


def wake_up_message(queue_url: str, group: str) -> dict[str, Any]:
    """The SendMessage parameters of a wake-up message for ``group`` on the source queue."""
    return {
        "QueueUrl": queue_url,
        "MessageBody": json.dumps({"constructsFifo": CONTROL_RESUME, "group": group}),
        "MessageGroupId": group,
        "MessageDeduplicationId": f"{CONTROL_RESUME}-{uuid.uuid4()}",
        "MessageAttributes": {CONTROL_ATTRIBUTE: {"DataType": "String", "StringValue": CONTROL_RESUME}},
    }


def cancel_marker_message(queue_url: str, group: str, marker_id: str) -> dict[str, Any]:
    """The SendMessage parameters of a group cancel's marker message: a wake-up message (every reader
    that does not wait for it treats it as one: deleted, harmless) whose body names ``marker_id``; its
    deduplication id is the marker's, so sending it again within SQS's 5 minutes sends it once."""
    return {
        **wake_up_message(queue_url, group),
        "MessageBody": json.dumps(
            {"constructsFifo": CONTROL_RESUME, "group": group, _MARKER_FIELD: marker_id}
        ),
        "MessageDeduplicationId": f"{CONTROL_RESUME}-{marker_id}",
    }


def cancel_marker_of(record: SQSRecord) -> str | None:
    """The marker id a group cancel's marker message names (``None``: not a marker message)."""
    if not is_wake_up(record):
        return None
    try:
        body = json.loads(str(record.get("body", "")))
    except ValueError:
        return None
    marker = body.get(_MARKER_FIELD) if isinstance(body, dict) else None
    return marker if isinstance(marker, str) and marker else None


def encode_kept(kept: KeptRecord, *, kept_at_ms: int) -> dict[str, Any]:
    """The item of a kept record; large records are stored zlib-compressed.

    Raises
    ------
    RecordTooLargeToKeepError
        The record does not fit in a DynamoDB item even compressed.
    """
    record = kept.record
    payload = json.dumps(
        {
            "messageId": record.get("messageId", ""),
            "body": record.get("body", ""),
            "attributes": record.get("attributes", {}),
            "messageAttributes": record.get("messageAttributes", {}),
        },
        separators=(",", ":"),
    ).encode()
    item: dict[str, Any] = {
        GROUP_ATTR_GROUP: {"S": kept.group},
        GROUP_ATTR_SK: {"S": kept.sort_key},
        "message_id": {"S": str(record.get("messageId", ""))},
        "kept_at": {"N": str(kept_at_ms)},
    }
    if len(payload) <= _COMPRESS_ABOVE_BYTES:
        item["record"] = {"S": payload.decode()}
        return item
    packed = zlib.compress(payload, level=6)
    if len(packed) > _MAX_KEPT_BYTES:
        raise RecordTooLargeToKeepError(
            f"message {record.get('messageId', '')!r} of group {kept.group!r}: {len(packed)} bytes "
            f"compressed, over the {_MAX_KEPT_BYTES} bytes a kept record may take in a DynamoDB item "
            "(400 KB); keep large payloads in S3 and send a pointer, or use the CONTINUE policy"
        )
    item["record_z"] = {"B": packed}
    return item


def decode_kept(item: dict[str, Any]) -> KeptRecord:
    if "record_z" in item:
        payload = json.loads(zlib.decompress(item["record_z"]["B"]))
    else:
        payload = json.loads(item["record"]["S"])
    sort_key = item[GROUP_ATTR_SK]["S"]
    return KeptRecord(
        group=item[GROUP_ATTR_GROUP]["S"],
        seq=int(sort_key[len(SK_KEPT_PREFIX) :]),
        record=cast("SQSRecord", payload),
    )


def decode_header(item: Mapping[str, Any]) -> ParkHeader:
    """The :class:`ParkHeader` of a header item (``sk = "park"``) as DynamoDB returns it."""
    return ParkHeader(
        group=item[GROUP_ATTR_GROUP]["S"],
        status=item["status"]["S"],
        version=int(item["version"]["N"]),
        next_seq=int(item["next_seq"]["N"]),
        dead=decode_dead_job(json.loads(item.get("dead", {}).get("S", "{}"))),
        retry_at_ms=int(item.get("retry_at_ms", {}).get("N", "0")),
        skip_dead=bool(item.get("skip_dead", {}).get("BOOL", False)),
        recent_message_ids=tuple(str(m) for m in json.loads(item.get("recent", {}).get("S", "[]"))),
    )


def recent_after(before: Sequence[str], records: Sequence[SQSRecord]) -> tuple[str, ...]:
    """The header's ``recent_message_ids`` after keeping ``records``: the last ``KEPT_RECENT_MESSAGE_IDS``
    message ids of ``before`` followed by theirs."""
    ids = [*before, *(str(r.get("messageId", "")) for r in records if r.get("messageId"))]
    return tuple(ids[-KEPT_RECENT_MESSAGE_IDS:])


def encode_header(header: ParkHeader, *, updated_at_ms: int) -> dict[str, Any]:
    """The item of a park header (``sk = "park"``); :func:`decode_header` reads it back."""
    item: dict[str, Any] = {
        GROUP_ATTR_GROUP: {"S": header.group},
        GROUP_ATTR_SK: {"S": SK_PARK},
        "status": {"S": header.status},
        "version": {"N": str(header.version)},
        "next_seq": {"N": str(header.next_seq)},
        "retry_at_ms": {"N": str(header.retry_at_ms)},
        "dead": {"S": json.dumps(encode_dead_job(header.dead), separators=(",", ":"))},
        "skip_dead": {"BOOL": header.skip_dead},
        "updated_at": {"N": str(updated_at_ms)},
    }
    if header.recent_message_ids:
        item["recent"] = {"S": json.dumps(list(header.recent_message_ids), separators=(",", ":"))}
    return item
