"""State mode's dead letters on moto: a dead job reaches the DLQ with the exact bytes it was sent with.

Architecture rule 8 and the dead-letter docstring promise the body unchanged. Every path a dead job
takes to the dead-letter queue is driven here with a body holding non-ASCII characters and odd
whitespace, which any re-encoding would change: dead in order, kept in a parked group and skipped,
dead in the reorder buffer (go-on, and parked then skipped), dead during a parked group's replay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.storage.book import decode_book, encode_book

from .runtime_harness import make_record, receive_records
from .state_harness import StateHarness, job_record

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.types import SQSRecord


def odd_body(job_id: str, seq: int | None = None) -> str:
    """A job envelope as a hand-written producer might send it: spaces, a tab, a newline, non-ASCII."""
    seq_part = "" if seq is None else f', "seq" : {seq}'
    payload = '"payload": {"note": "☠ naïve — ünïcode"}'
    return f'{{ "jobId" : "{job_id}",\t"type": "apply_patch", {payload}{seq_part} }}\n'


def odd_record(job_id: str, seq: int | None = None) -> SQSRecord:
    return make_record(odd_body(job_id, seq), group="ws#1")


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")


def dlq_bodies(harness: StateHarness) -> list[str]:
    """The bodies in the dead-letter queue, oldest first (read and deleted)."""
    bodies: list[str] = []
    while True:
        messages = harness.sqs.receive_message(
            QueueUrl=harness.dlq_url, MaxNumberOfMessages=10, VisibilityTimeout=600
        ).get("Messages", [])
        if not messages:
            return bodies
        for message in messages:
            bodies.append(message["Body"])
            harness.sqs.delete_message(QueueUrl=harness.dlq_url, ReceiptHandle=message["ReceiptHandle"])


@pytest.fixture
def harness(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> StateHarness:
    return StateHarness(dynamodb, sqs, queue_url, dlq_url)


def test_a_job_dead_in_order_reaches_the_dlq_byte_for_byte(harness: StateHarness) -> None:
    # GIVEN a job that dies when it runs, sent with an odd body (go-on policy)
    harness.behaviour["p"] = poison
    # WHEN it runs in order
    harness.run(odd_record("p"))
    # THEN the DLQ holds exactly the bytes sent
    assert dlq_bodies(harness) == [odd_body("p")]


def test_a_kept_dead_job_skipped_by_an_operator_reaches_the_dlq_byte_for_byte(harness: StateHarness) -> None:
    # GIVEN a group parked at p (odd body), kept in the group table
    harness.policy = DeadJobPolicy.PARK
    harness.behaviour["p"] = poison
    harness.run(odd_record("p"))
    # WHEN an operator resumes it skipping p
    harness.operator().resume("ws#1", skip_dead=True)
    harness.drain()
    # THEN the DLQ holds exactly the bytes sent
    assert dlq_bodies(harness) == [odd_body("p")]


def test_a_job_dead_in_the_reorder_buffer_reaches_the_dlq_byte_for_byte(harness: StateHarness) -> None:
    # GIVEN seq 2 (odd body) waits in the reorder buffer and dies when its gap closes (go-on policy)
    harness.behaviour["s2"] = poison
    harness.run(job_record("s0", 0), odd_record("s2", 2))
    # WHEN seq 1 closes the gap
    harness.run(job_record("s1", 1))
    # THEN s2 is sent from the buffer with exactly the bytes sent, not a re-encoding
    assert dlq_bodies(harness) == [odd_body("s2", 2)]
    assert harness.log() == ["s0", "s1"]


def test_a_parked_buffered_dead_job_skipped_by_an_operator_reaches_the_dlq_byte_for_byte(
    harness: StateHarness,
) -> None:
    # GIVEN a group parked at s2 (odd body), which died waiting in the reorder buffer
    harness.policy = DeadJobPolicy.PARK
    harness.behaviour["s2"] = poison
    harness.run(job_record("s0", 0), odd_record("s2", 2))
    harness.run(job_record("s1", 1))
    # WHEN an operator resumes it skipping s2 (the replay sends it from the buffer)
    harness.operator().resume("ws#1", skip_dead=True)
    harness.drain()
    # THEN the DLQ holds exactly the bytes sent
    assert dlq_bodies(harness) == [odd_body("s2", 2)]


def test_a_kept_job_dead_during_replay_reaches_the_dlq_byte_for_byte(harness: StateHarness) -> None:
    # GIVEN a group parked at p with b (odd body) kept; then the policy is CONTINUE, p fixed, b poison
    harness.policy = DeadJobPolicy.PARK
    harness.behaviour["p"] = poison
    harness.run(job_record("p", 0), odd_record("b", 1))
    harness.policy = DeadJobPolicy.CONTINUE
    harness.behaviour = {"b": poison}
    harness.operator().resume("ws#1")
    # WHEN the wake-up message replays the group
    (wake_up,) = receive_records(harness.sqs, harness.queue_url)
    harness.run(wake_up)
    # THEN b reaches the DLQ with exactly the bytes sent
    assert dlq_bodies(harness) == [odd_body("b", 1)]


def test_a_buffered_body_survives_the_bookkeeping_round_trip_and_a_compact_one_costs_nothing(
    harness: StateHarness,
) -> None:
    # GIVEN one buffered job sent with an odd body and one with the compact encoding
    compact = '{"jobId":"s3","type":"apply_patch","payload":{},"seq":3}'
    harness.run(job_record("s0", 0), odd_record("s2", 2), make_record(compact, group="ws#1"))
    book = harness.group_state().book
    # WHEN the bookkeeping is encoded and decoded again
    again = decode_book(encode_book(book))
    # THEN both bodies read back exactly, and only the odd one is stored as text
    assert [entry.text for entry in again.buffer] == [odd_body("s2", 2), compact]
    assert [entry.body_text is None for entry in again.buffer] == [False, True]
