"""A StateBatchProcessor on moto for the functional tests: a scriptable transition, the group table,
the queues, and readers of what the runtime left (state, park header, kept records, DLQ, lines)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from constructs_fifo.client.parked import ParkedGroups
from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.records import GroupState
from constructs_fifo.runtime.state.processor import StateBatchProcessor
from constructs_fifo.runtime.state.storage.store import StateStore

from .fifo_model import Crash
from .runtime_harness import (
    GROUP_TABLE_NAME,
    ProcessorHarness,
    failed_ids,
    make_record,
    receive_records,
    with_settings,
)

if TYPE_CHECKING:
    from constructs_fifo.runtime.types import SQSRecord

State = dict[str, Any] | None


def state_body(job_id: str, seq: int | None = None, job_type: str = "apply_patch", **payload: Any) -> str:
    """A job envelope, with the producer's ``seq`` when given."""
    body: dict[str, Any] = {"jobId": job_id, "type": job_type, "payload": payload}
    if seq is not None:
        body["seq"] = seq
    return json.dumps(body)


def job_record(job_id: str, seq: int | None = None, *, group: str = "ws#1", **options: Any) -> SQSRecord:
    """A Lambda record of one job (``options`` as :func:`make_record`'s)."""
    return make_record(state_body(job_id, seq), group=group, **options)


@dataclass
class StateHarness(ProcessorHarness):
    """A state-mode processor on moto, whose transition appends the job id to the state's ``log``."""

    runs: list[str] = field(default_factory=list)
    options: dict[str, Any] = field(default_factory=dict)

    def transition(self, job: Job, state: State) -> dict[str, Any]:
        self.runs.append(job.id)
        action = self.behaviour.get(job.id)
        if action is not None:
            action(job)
        blob = job.payload.get("blob", "") if isinstance(job.payload, dict) else ""
        return {"log": [*(state or {}).get("log", []), job.id], "blob": (state or {}).get("blob", "") + blob}

    @property
    def states(self) -> StateStore:
        return StateStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock)

    def processor(self, **overrides: Any) -> StateBatchProcessor:
        options: dict[str, Any] = {
            **self.wiring(),
            "transition": self.transition,
            "states": self.states,
            "parking": self.parking,
            "max_attempts": 3,
            "backoff_base_seconds": 2,
            "visibility_timeout_seconds": 120,
            **self.options,
        }
        options.update(overrides)
        return StateBatchProcessor(**with_settings(options))

    def operator(self) -> ParkedGroups:
        return ParkedGroups(
            group_table=GROUP_TABLE_NAME,
            queue_url=self.queue_url,
            dead_letter_queue_url=self.dlq_url,
            dynamodb=self.dynamodb,
            sqs=self.sqs,
            clock=self.clock,
        )

    def send(self, *specs: tuple[str, int | None], group: str = "ws#1") -> None:
        """Send jobs (job id, seq) to the (moto) source queue."""
        for job_id, seq in specs:
            self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=state_body(job_id, seq),
                MessageGroupId=group,
                MessageDeduplicationId=job_id,
            )

    def drain(self, *, rounds: int = 20) -> int:
        """Run what the (moto) queue delivers until it is empty, as the event source mapping would;
        return the batches run. Records not reported are deleted; reported ones are made visible at
        once while the test's clock moves 60 s (moto's visibility runs on the real clock). An
        invocation that crashes (:class:`Crash`) reports its whole batch, as a function error does."""
        for batch in range(rounds):
            records = receive_records(self.sqs, self.queue_url)
            if not records:
                return batch
            try:
                response = self.run(*records)
            except Crash:
                response = {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]}
            failed = set(failed_ids(response))
            for record in records:
                handle = record["receiptHandle"]
                if record["messageId"] in failed:
                    self.sqs.change_message_visibility(
                        QueueUrl=self.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                    )
                else:
                    self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=handle)
            self.clock.advance(60)
        raise AssertionError(f"the queue did not drain in {rounds} batches")

    # --- what the runtime left ---------------------------------------------------------------------

    def group_state(self, group: str = "ws#1") -> GroupState:
        return self.states.load([group])[group]

    def log(self, group: str = "ws#1") -> list[str]:
        state = self.group_state(group).state
        return list(state["log"]) if state else []

    def header(self, group: str = "ws#1") -> ParkHeader | None:
        return self.parking.header(group)

    def kept_ids(self, group: str = "ws#1") -> list[str]:
        return [_job_id(kept.record.get("body", "")) for kept in self.parking.kept(group, limit=1000)]

    def forget_lines(self) -> None:
        self.stream.seek(0)
        self.stream.truncate(0)

    def dead_letters(self) -> list[tuple[str, dict[str, str]]]:
        """(body's job id, message attributes) of the messages in the dead-letter queue, oldest first.

        They are deleted as they are read (a FIFO group with a message in flight returns no more), so
        each call returns what arrived since the last one.
        """
        found: list[tuple[str, dict[str, str]]] = []
        while True:
            response = self.sqs.receive_message(
                QueueUrl=self.dlq_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
                VisibilityTimeout=600,
            )
            messages = response.get("Messages", [])
            if not messages:
                return found
            for message in messages:
                attributes = {k: v["StringValue"] for k, v in message.get("MessageAttributes", {}).items()}
                attributes["group"] = message["Attributes"]["MessageGroupId"]
                found.append((_job_id(message["Body"]), attributes))
                self.sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])


def _job_id(body: str) -> str:
    try:
        return str(json.loads(body)["jobId"])
    except (ValueError, KeyError, TypeError):
        return body
