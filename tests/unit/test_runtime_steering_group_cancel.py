"""Unit tests of a cancelling group's split (rules 1 to 4 of runtime.steering.group_cancel)."""

from __future__ import annotations

import json

from constructs_fifo.runtime.constants import CONTROL_ATTRIBUTE, CONTROL_RESUME, DeadReason
from constructs_fifo.runtime.dead_jobs.park_records import (
    CANCELLING,
    ParkHeader,
    cancel_marker_message,
    cancel_marker_of,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.runtime.steering.group_cancel import MARKER_WINDOW_SECONDS, split_at_marker
from constructs_fifo.runtime.types import SQSRecord

_AT_MS = 1_700_000_000_000


def _header(marker: str = "m-2") -> ParkHeader:
    cancel = DeadJob("", "", "oncall", "stop", 0, marker, _AT_MS, None, DeadReason.HELD)
    return ParkHeader("ws#1", CANCELLING, 1, 0, cancel)


def _job(job_id: str, sent_ms: int = _AT_MS - 1000) -> SQSRecord:
    return {
        "messageId": f"msg-{job_id}",
        "body": json.dumps({"jobId": job_id, "type": "t", "payload": {}}),
        "attributes": {"SentTimestamp": str(sent_ms), "MessageGroupId": "ws#1"},
        "messageAttributes": {},
    }


def _marker(marker: str) -> SQSRecord:
    sent = cancel_marker_message("https://queue", "ws#1", marker)
    return {
        "messageId": f"msg-{marker}",
        "body": sent["MessageBody"],
        "attributes": {"SentTimestamp": str(_AT_MS + 10), "MessageGroupId": "ws#1"},
        "messageAttributes": {CONTROL_ATTRIBUTE: {"stringValue": CONTROL_RESUME, "dataType": "String"}},
    }


def test_records_before_the_marker_are_cancelled_and_those_after_come_back() -> None:
    # GIVEN a1, an earlier cancel's marker, a2, this cancel's marker, a3 (sent after the call)
    records = [_job("a1"), _marker("m-1"), _job("a2"), _marker("m-2"), _job("a3", _AT_MS + 20)]

    # WHEN they are split by the header naming m-2
    split = split_at_marker(_header("m-2"), records)

    # THEN a1, a2 are cancelled; the earlier marker is a wake-up (left to the batch); a3 comes back
    assert [r["messageId"] for r in split.before] == ["msg-a1", "msg-a2"]
    assert split.ended and split.marker is not None and cancel_marker_of(split.marker) == "m-2"
    assert [r["messageId"] for r in split.after] == ["msg-a3"]


def test_without_the_marker_every_record_is_cancelled_and_the_cancel_goes_on() -> None:
    # GIVEN a batch of the group without its marker / WHEN split / THEN all cancelled, not ended
    split = split_at_marker(_header(), [_job("a1"), _job("a2")])
    assert (len(split.before), split.ended, split.after) == (2, False, [])


def test_a_record_sent_after_the_window_ends_a_cancel_whose_marker_never_came() -> None:
    # GIVEN a record sent more than the window after the header was written (its marker was lost)
    late = _job("a9", _AT_MS + MARKER_WINDOW_SECONDS * 1000 + 1)

    # WHEN split / THEN the cancel ends there: the record comes back to a live group, never cancelled
    split = split_at_marker(_header(), [_job("a1"), late])
    assert [r["messageId"] for r in split.before] == ["msg-a1"]
    assert split.ended and split.marker is None
    assert split.after == [late]


def test_a_plain_wake_up_or_a_job_is_not_a_marker() -> None:
    wake_up = _marker("m-1")
    wake_up["body"] = json.dumps({"constructsFifo": CONTROL_RESUME, "group": "ws#1"})
    assert cancel_marker_of(wake_up) is None
    assert cancel_marker_of(_job("a1")) is None
