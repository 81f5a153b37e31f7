"""What both batch processors (claim mode and state mode) share: the batch's report and wake-ups.

:class:`BatchReport` collects what one batch decided (the records reported failed with their
visibility, blocked groups, records to keep, wake-up messages); :func:`settle_wake_ups` applies the
wake-up rule of a resuming group (rule 4 of :mod:`constructs_fifo.runtime.parking`) to it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.backoff import VisibilityChange
from constructs_fifo.runtime.constants import WAKE_UP_REFRESH_RECEIVES
from constructs_fifo.runtime.exceptions import MalformedJobError
from constructs_fifo.runtime.job import parse_record, record_attempt, record_message_id
from constructs_fifo.runtime.parking import RESUMING, wake_up_message

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.dead_letter import DeadJob
    from constructs_fifo.runtime.job_runner import Step
    from constructs_fifo.runtime.parking import ParkHeader
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["RETRY_ACTION", "BatchReport", "job_id_of", "park_fields", "settle_wake_ups"]

#: The ``action`` of an outcome line whose record is reported failed.
RETRY_ACTION = "reported failed; retried after the visibility delay"


@dataclass
class BatchReport:
    """What one batch decided so far: reported ids, visibility changes, blocked and kept groups.

    Attributes
    ----------
    failures : list of str
        The ``messageId`` of every record reported failed, in the order reported.
    changes : list of VisibilityChange
        The visibility of the reported records that have one.
    blocked : dict
        Group -> the visibility delay its later records get (the group stopped in this batch).
    keep : dict
        Claim mode: group -> records to keep in its parked group.
    parking : dict
        Claim mode: group -> the step of the dead job that parks it in this batch.
    wake_ups : dict
        Group -> its wake-up messages in this batch.
    """

    failures: list[str] = field(default_factory=list)
    changes: list[VisibilityChange] = field(default_factory=list)
    blocked: dict[str, int] = field(default_factory=dict)
    keep: dict[str, list[SQSRecord]] = field(default_factory=dict)
    parking: dict[str, Step] = field(default_factory=dict)
    wake_ups: dict[str, list[SQSRecord]] = field(default_factory=dict)

    def report(self, record: SQSRecord, seconds: int | None) -> None:
        """Report ``record`` failed; with ``seconds``, make it visible again after that long."""
        self.failures.append(record_message_id(record))
        if seconds is not None:
            self.changes.append(
                VisibilityChange(record_message_id(record), str(record.get("receiptHandle", "")), seconds)
            )


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
    batch, gets a fresh one, so its replay always has a trigger; when that send fails the old one is
    kept (reported) instead, and ``on_error`` hears of it.
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
        try:
            sqs.send_message(**wake_up_message(queue_url, group))
        except Exception as exc:  # keep the old one rather than lose the trigger
            on_error({"event": "wake_up_failed", "group": group, "error": f"{type(exc).__name__}: {exc}"})
            if wake_ups:
                report.report(wake_ups[0], delay)


def park_fields(dead: DeadJob) -> dict[str, Any]:
    """The park header's record of the dead job that parked its group."""
    return {
        "jobId": dead.job_id,
        "jobType": dead.job_type,
        "reason": dead.reason.value,
        "errorType": dead.error_type,
        "error": dead.error[:1024],
        "attempts": dead.attempts,
        "messageId": dead.message_id,
        "parkedAt": dead.dead_at_ms,
    }


def job_id_of(record: SQSRecord) -> str | None:
    """The jobId of a record whose body may not parse (for log lines of records not run)."""
    try:
        return parse_record(record).id
    except MalformedJobError as exc:
        return exc.job_id
