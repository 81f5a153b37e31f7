"""What a drain says while only in-flight messages are left: when, how often, and what."""

from __future__ import annotations

from constructs_fifo.local.event_source.waiting import WAIT_REPORT_SECONDS, WaitReport
from constructs_fifo.stacks.counters import QueueCounts

URL = "http://localhost:1/123456789012/jobs.fifo"


def test_only_a_wait_on_in_flight_messages_is_reported_and_then_every_period() -> None:
    # GIVEN a report, and a queue whose only messages are in flight
    said: list[str] = []
    report = WaitReport(said.append, URL, visibility_seconds=720)
    in_flight = QueueCounts(visible=0, in_flight=3)
    # WHEN a batch runs, or messages are visible, nothing is said
    report.update(None, 0.0)
    report.update(QueueCounts(visible=1, in_flight=3), 1.0)
    # AND a wait shorter than the period says nothing yet
    report.update(in_flight, 2.0)
    report.update(in_flight, 2.0 + WAIT_REPORT_SECONDS - 1)
    assert said == []
    # THEN a wait of one period is said, with the count, the queue and the longest it may take
    report.update(in_flight, 2.0 + WAIT_REPORT_SECONDS)
    assert said == [
        f"waiting {WAIT_REPORT_SECONDS:.0f} s on jobs.fifo: 3 message(s) in flight, none visible. They come "
        "back when their visibility timeout ends: a job's retry backoff, a batch cut off, or another "
        "consumer's batch (at most 720 s after it was received)"
    ]
    # AND once more each further period, and not in between
    report.update(in_flight, 2.0 + WAIT_REPORT_SECONDS * 1.5)
    report.update(QueueCounts(visible=0, in_flight=1, delayed=2), 2.0 + WAIT_REPORT_SECONDS * 2)
    assert len(said) == 2
    assert "1 message(s) in flight and 2 delayed" in said[1]


def test_an_empty_queue_is_no_wait() -> None:
    # GIVEN an empty queue for long WHEN reported THEN nothing is said
    said: list[str] = []
    report = WaitReport(said.append, URL, visibility_seconds=30)
    for second in range(0, 100, 5):
        report.update(QueueCounts(visible=0, in_flight=0), float(second))
    assert said == []
