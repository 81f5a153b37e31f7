"""What both batch processors (claim mode and state mode) share: the batch's report and wake-ups.

:class:`BatchReport` collects what one batch decided (the records reported failed with their
visibility, blocked groups, records to keep, wake-up messages); :func:`refresh_worn_wake_ups` (before
anything of the batch runs) and :func:`settle_wake_ups` (after) apply the wake-up rule of a
resuming group (rule 4 of :mod:`constructs_fifo.runtime.dead_jobs.parking`) to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import VisibilityChange
from constructs_fifo.runtime.constants import WAKE_UP_REFRESH_RECEIVES
from constructs_fifo.runtime.dead_jobs.parking import RESUMING, is_wake_up, wake_up_message
from constructs_fifo.runtime.error_text import describe
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import parse_record, record_attempt, record_group, record_message_id

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
    from constructs_fifo.runtime.types import SQSRecord

__all__ = [
    "BatchReport",
    "job_id_of",
    "refresh_worn_wake_ups",
    "settle_wake_ups",
]


@dataclass
class BatchReport:
    """What one batch decided so far: reported ids, visibility changes, blocked groups, wake-ups.

    Attributes
    ----------
    failures : list of str
        The ``messageId`` of every record reported failed, in the order reported.
    changes : list of VisibilityChange
        The visibility of the reported records that have one.
    blocked : dict
        Group -> the visibility delay its later records get (the group stopped in this batch).
    wake_ups : dict
        Group -> its wake-up messages in this batch.
    refreshed : set of str
        Resuming groups whose worn wake-up message was replaced before the batch ran.
    """

    failures: list[str] = field(default_factory=list)
    changes: list[VisibilityChange] = field(default_factory=list)
    blocked: dict[str, int] = field(default_factory=dict)
    wake_ups: dict[str, list[SQSRecord]] = field(default_factory=dict)
    refreshed: set[str] = field(default_factory=set)

    def report(self, record: SQSRecord, seconds: int | None) -> None:
        """Report ``record`` failed; with ``seconds``, make it visible again after that long."""
        self.failures.append(record_message_id(record))
        if seconds is not None:
            self.changes.append(
                VisibilityChange(record_message_id(record), str(record.get("receiptHandle", "")), seconds)
            )


def refresh_worn_wake_ups(
    records: Sequence[SQSRecord],
    headers: Mapping[str, ParkHeader],
    report: BatchReport,
    *,
    sqs: SQSClient | None,
    queue_url: str,
    on_error: Callable[[dict[str, Any]], None],
) -> None:
    """Before anything of the batch runs, replace each resuming group's worn wake-up message.

    A wake-up message received :data:`WAKE_UP_REFRESH_RECEIVES` times is replaced here: a fresh one
    is sent, then the worn one is deleted. Not at the end of the batch, because a replay that
    crashes the worker (a kept job that runs out of memory or time) never gets there: the worn
    message would come back with every crash until SQS's ``maxReceiveCount`` dead-letters it, and
    the group would be left resuming without a trigger. When the send fails nothing is deleted
    (:func:`settle_wake_ups` tries again); when the delete fails the worn one is not reported, so
    the event source mapping deletes it.
    """
    if sqs is None or not any(header.status == RESUMING for header in headers.values()):
        return
    for record in records:
        group = record_group(record)
        header = headers.get(group)
        if not is_wake_up(record) or header is None or header.status != RESUMING:
            continue
        if record_attempt(record) < WAKE_UP_REFRESH_RECEIVES:
            continue
        try:
            if group not in report.refreshed:
                sqs.send_message(**wake_up_message(queue_url, group))
                report.refreshed.add(group)
            sqs.delete_message(QueueUrl=queue_url, ReceiptHandle=str(record.get("receiptHandle", "")))
        except Exception as exc:  # the worn one stays; settle_wake_ups keeps the group's trigger
            on_error({"event": "wake_up_refresh_failed", "group": group, "error": describe(exc)})


def settle_wake_ups(
    latest: Mapping[str, ParkHeader | None],
    report: BatchReport,
    *,
    now_ms: int,
    sqs: SQSClient | None,
    queue_url: str,
    on_error: Callable[[dict[str, Any]], None],
) -> None:
    """Report a resuming group's wake-up message for its retry time; let the others be deleted.

    ``latest`` holds each group's header after the batch (``None``: live). A resuming group whose
    wake-up message was received :data:`WAKE_UP_REFRESH_RECEIVES` times, or that has none in this
    batch, gets a fresh one (unless :func:`refresh_worn_wake_ups` sent it already), so its replay
    always has a trigger; when that send fails the old one is kept (reported) instead, and
    ``on_error`` hears of it.
    """
    for group, header in latest.items():
        wake_ups = report.wake_ups.get(group, [])
        if header is None or header.status != RESUMING or sqs is None:
            continue  # every wake-up of a group that is not resuming is deleted (not reported)
        keeper = next((w for w in wake_ups if record_attempt(w) < WAKE_UP_REFRESH_RECEIVES), None)
        delay = max(0, math.ceil((header.retry_at_ms - now_ms) / 1000))
        delay = max(delay, report.blocked.get(group, 0))
        if keeper is not None:
            report.report(keeper, delay)
            continue
        if group in report.refreshed:
            continue  # its fresh wake-up was sent before the batch ran
        try:
            sqs.send_message(**wake_up_message(queue_url, group))
        except Exception as exc:  # keep the old one rather than lose the trigger
            on_error({"event": "wake_up_failed", "group": group, "error": describe(exc)})
            if wake_ups:
                report.report(wake_ups[0], delay)


def job_id_of(record: SQSRecord) -> str | None:
    """The jobId of a record whose body may not parse (for log lines of records not run)."""
    try:
        return parse_record(record).id
    except MalformedJobError as exc:
        return exc.job_id
