"""The world of the outcome tests: 100 jobs in 10 groups, one of them dying, and a waiter whose pause
runs what the queue delivers (the processors run in-process: there is no Lambda in tests), its timer
moving by the pause, so timeouts are exact without a clock in the assertions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from constructs_fifo.client import JobMessage, JobStatus
from constructs_fifo.runtime.constants import MAX_RESULT_BYTES
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from .runtime_harness import Harness, ProcessorHarness, failed_ids, receive_records

GROUPS = 10
JOBS_PER_GROUP = 10
#: The job that dies (PermanentJobError) in group ws#3, and its place: the jobs behind it are parked.
DYING_JOB = "j3-4"


class Waiter:
    """A waiter's timer and pause: each pause runs one batch of what the queue delivers."""

    def __init__(self, harness: ProcessorHarness) -> None:
        self.harness = harness
        self.now = 0.0
        self.pauses: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.pauses.append(seconds)
        self.now += seconds
        records = receive_records(self.harness.sqs, self.harness.queue_url)
        if not records:
            return
        failed = set(failed_ids(self.harness.run(*records)))
        for record in records:
            handle = record["receiptHandle"]
            if record["messageId"] in failed:
                self.harness.sqs.change_message_visibility(
                    QueueUrl=self.harness.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                )
            else:
                self.harness.sqs.delete_message(QueueUrl=self.harness.queue_url, ReceiptHandle=handle)
        self.harness.clock.advance(60)


def jobs(*, with_seq: bool = False) -> list[JobMessage]:
    """100 jobs in 10 groups, sent group after group (each group's jobs in their order)."""
    return [
        JobMessage(f"j{g}-{k}", "run_tests", {"n": g * 100 + k}, group=f"ws#{g}", seq=k if with_seq else None)
        for g in range(GROUPS)
        for k in range(JOBS_PER_GROUP)
    ]


def expect(job: JobMessage) -> JobStatus:
    group, place = job.job_id[1:].split("-")
    if group != "3" or int(place) < 4:
        return JobStatus.SUCCEEDED
    return JobStatus.DEAD if job.job_id == DYING_JOB else JobStatus.PARKED


@dataclass
class ReturningHarness(Harness):
    """A claim-mode harness whose job function returns a result, and for j3-4 dies."""

    def handle(self, job: Job, context: object) -> Any:
        self.ran.append(job.id)
        if job.id == DYING_JOB:
            raise PermanentJobError("the tests cannot run: no workspace")
        if job.type == "odd":
            return {"a set", "is not JSON"}
        if job.type == "large":
            return "x" * (MAX_RESULT_BYTES + 1)
        return {"passed": True, "n": job.payload["n"]}


def poison(job: Job) -> None:
    raise PermanentJobError(f"{job.id} can never apply")
