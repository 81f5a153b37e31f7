"""The job envelope: turning one SQS record into a :class:`Job`.

The body is JSON ``{"jobId": str, "type": str, "payload": <any JSON>, ...}``; the group is the
record's ``MessageGroupId`` and the attempt its ``ApproximateReceiveCount``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.payloads.store import PayloadStore, resolved_body

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "Job",
    "JobHandler",
    "leading_job_id",
    "parse_record",
    "record_attempt",
    "record_group",
    "record_message_id",
]


@dataclass(frozen=True)
class Job:
    """One job, as the user's ``handle(job, context)`` receives it.

    Attributes
    ----------
    id : str
        The ``jobId`` of the body: the idempotency key of the claim table.
    group : str
        The record's ``MessageGroupId`` (jobs of one group run in order).
    type : str
        The ``type`` of the body, e.g. ``"apply_patch"``.
    payload : Any
        The ``payload`` of the body (``{}`` when the body has none).
    attempt : int
        This run of the job, counted by the runtime: 1 on its first run. Not SQS's
        ``ApproximateReceiveCount``, which every receive raises, also for records reported without
        running. Claim mode counts the runs started in the claim table; state mode gives 1 + the
        job's failed runs kept in the group's bookkeeping (a crash counted by the run marker).
        :func:`parse_record` fills in the receive count; the processors replace it before the job
        function sees the job.
    message_id : str
        The SQS ``messageId`` of this delivery.
    body : dict
        The whole decoded body, for fields beyond the envelope.
    body_text : str or None
        The body exactly as it was sent (``None`` for a job not parsed from a record): what the
        runtime forwards when the job goes to the dead-letter queue, byte for byte.

    Examples
    --------
    >>> def handle(job: Job, context: object) -> None:
    ...     if job.type == "apply_patch":
    ...         print(job.id, job.group, job.payload["diff"])
    """

    id: str
    group: str
    type: str
    payload: Any
    attempt: int
    message_id: str
    body: dict[str, Any] = field(repr=False)
    body_text: str | None = field(default=None, repr=False, compare=False)


def record_message_id(record: SQSRecord) -> str:
    """Return the record's ``messageId`` (``""`` when Lambda sent none, which it never does)."""
    return str(record.get("messageId", ""))


def record_group(record: SQSRecord) -> str:
    """Return the record's ``MessageGroupId``.

    A record without one (not FIFO) is its own group, keyed by its ``messageId``: it holds back no other.
    """
    group = record.get("attributes", {}).get("MessageGroupId")
    return group if group else f"message#{record_message_id(record)}"


def record_attempt(record: SQSRecord) -> int:
    """Return the record's ``ApproximateReceiveCount`` as an int (1 when missing or unreadable)."""
    raw = record.get("attributes", {}).get("ApproximateReceiveCount", "1")
    try:
        return max(1, int(raw))
    except (TypeError, ValueError):
        return 1


#: The user's job function in claim mode: ``handle(job, context)``; its return value, when JSON, is stored
#: with the SUCCEEDED claim (``constructs_fifo.runtime.claim.store.encode_result``).
JobHandler = Callable[[Job, Any], object]


#: The start of every envelope the client and the ingresses write: ``{"jobId": "<a JSON string>"``.
_LEADING_JOB_ID: Final = re.compile(r'\s*\{\s*"jobId"\s*:\s*("(?:[^"\\]|\\.)*")')


def leading_job_id(raw: object) -> str | None:
    """The ``jobId`` an envelope starts with, from a body that is not JSON as a whole; ``None`` if none.

    An ingress's envelope whose later field the event lacked (a pipe's ``"seq": <$.body.detail.version>``
    on an event with no ``version`` renders ``"seq": }``) is not JSON, yet its id is the first field: a
    dead job keeps it, so an operator and a waiter can name it.

    Examples
    --------
    >>> leading_job_id('{"jobId": "evt-7", "type": "usage", "payload": {}, "seq": }')
    'evt-7'
    >>> leading_job_id("not json") is None
    True
    """
    if not isinstance(raw, str):
        return None
    match = _LEADING_JOB_ID.match(raw)
    if match is None:
        return None
    try:
        job_id = json.loads(match.group(1))
    except ValueError:
        return None
    return job_id if isinstance(job_id, str) and job_id else None


def parse_record(record: SQSRecord, payloads: PayloadStore | None = None) -> Job:
    """Decode one SQS record into a :class:`Job` (a pointer body: the one it names, read by ``payloads``).

    Parameters
    ----------
    record : SQSRecord
        A record of the Lambda SQS event; its body an envelope or the SQS Extended Client's pointer.

    Returns
    -------
    Job
        The decoded job.

    Raises
    ------
    MalformedJobError
        The body is not JSON, not a JSON object, has no string ``jobId`` or no string ``type``.
        Decoding is deterministic, so this failure is permanent (so is a pointer's missing object).
        When the ``jobId`` is usable and only the rest is wrong, the error carries it as ``job_id``.

    Examples
    --------
    >>> job = parse_record({"messageId": "m1", "body": '{"jobId": "j1", "type": "run_tests"}',
    ...                     "attributes": {"MessageGroupId": "ws#1", "ApproximateReceiveCount": "2"}})
    >>> (job.id, job.group, job.type, job.payload, job.attempt)
    ('j1', 'ws#1', 'run_tests', {}, 2)
    """
    message_id = record_message_id(record)
    raw = resolved_body(record, payloads)
    hint = 'the body must be a JSON object like {"jobId": "...", "type": "...", "payload": {...}}'
    try:
        body = json.loads(raw)
    except (TypeError, ValueError) as exc:
        preview = str(raw)[:80]
        raise MalformedJobError(
            f"message {message_id}: body {preview!r} is not JSON ({exc}); {hint}",
            job_id=leading_job_id(raw),
        ) from None
    if not isinstance(body, dict):
        raise MalformedJobError(
            f"message {message_id}: body is a JSON {type(body).__name__}, not an object; {hint}"
        )
    job_id = body.get("jobId")
    if not isinstance(job_id, str) or not job_id:
        raise MalformedJobError(
            f"message {message_id}: jobId is {job_id!r}, it must be a non-empty string; {hint}"
        )
    job_type = body.get("type")
    if not isinstance(job_type, str) or not job_type:
        raise MalformedJobError(
            f"message {message_id} (jobId {job_id!r}): type is {job_type!r}, it must be a non-empty "
            f"string; {hint}",
            job_id=job_id,
        )
    return Job(
        id=job_id,
        group=record_group(record),
        type=job_type,
        payload=body.get("payload", {}),
        attempt=record_attempt(record),
        message_id=message_id,
        body=body,
        body_text=record.get("body", ""),  # a pointer stays one: what a dead job forwards
    )
