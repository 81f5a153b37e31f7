"""The local pipe: receive from the source queue, evaluate each record, send to the target, delete.

``PipeRunner`` does for an ``AWS::Pipes::Pipe`` with an SQS source and an SQS target what the
Pipes service does (eb-pipes-sqs; eb-pipes-batching-concurrency; eb-pipes-error-troubleshooting):

- ReceiveMessage batches of up to the source's ``BatchSize`` (at most 10: an SQS target takes 10 a
  batch), every attribute asked for, so the record has what the Pipes event has;
- each record through :func:`~constructs_fifo.local.pipes.targets.build_entry` (the target's group
  and deduplication paths, the input template), then one SendMessageBatch;
- DeleteMessageBatch for every record sent. A record the target fails for (a path that resolves to
  nothing, an entry SQS refuses) is left in the source, as Pipes leaves it: it comes back after the
  queue's visibility timeout, and the source queue's redrive policy moves it to the dead-letter
  queue after ``maxReceiveCount`` receives. The runner counts it, with its reason;
- a STOPPED pipe is not polled: :meth:`PipeRunner.run` returns at once and says so in ``skipped``.

Partial failure is per record: Pipes retries "the remainder of the payload" after a partial
batch failure; whether one unresolvable record fails its whole batch is not stated, so here it fails
alone (docs/emulator.md).

Examples
--------
>>> from constructs_fifo.stacks.aws import AwsTarget
>>> target = AwsTarget.for_endpoint("http://localhost:4566")
>>> for runner in PipeRunner.from_stack("AgentEvents", target=target):  # doctest: +SKIP
...     print(runner.run(until_empty=True).as_dict())
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from constructs_fifo.local.event_source.events import build_record
from constructs_fifo.local.pipes.deployment import DeployedPipe, find_pipes
from constructs_fifo.local.pipes.paths import PipeContext
from constructs_fifo.local.pipes.targets import RecordFailure, SqsEntry, build_entry
from constructs_fifo.stacks.aws import AwsTarget

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["PipeRunner", "PipeStats"]


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class PipeStats:
    """What one run moved: records received, sent and left (with each reason's count)."""

    pipe: str
    source_arn: str
    target_arn: str
    batches: int = 0
    received: int = 0
    sent: int = 0
    failed: int = 0
    failures: Counter[str] = field(default_factory=Counter)
    template_paths_missing: int = 0
    left_in_flight: int = 0
    skipped: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """The stats with camelCase keys (the CLI's ``--json``)."""
        return {
            "pipe": self.pipe,
            "sourceArn": self.source_arn,
            "targetArn": self.target_arn,
            "batches": self.batches,
            "received": self.received,
            "sent": self.sent,
            "failed": self.failed,
            "failures": dict(self.failures),
            "templatePathsMissing": self.template_paths_missing,
            "leftInFlight": self.left_in_flight,
            "skipped": self.skipped,
        }


def _queue_url(arn: str, sqs: SQSClient) -> str:
    _, _, _, _, account, name = arn.split(":")
    return sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]


class PipeRunner:
    """Move records through one deployed pipe (SQS source, SQS target), as the Pipes service does.

    Parameters
    ----------
    pipe:
        The deployed pipe (:func:`~constructs_fifo.local.pipes.deployment.find_pipes`).
    sqs_client:
        Client for both queues.
    region:
        ``awsRegion`` of the records.
    clock:
        ``aws.pipes.event.ingestion-time`` (ISO 8601); the current UTC time by default.
    """

    def __init__(
        self,
        pipe: DeployedPipe,
        *,
        sqs_client: SQSClient,
        region: str,
        clock: Callable[[], str] = _now_iso,
    ) -> None:
        self.pipe = pipe
        self.region = region
        self._sqs = sqs_client
        self._clock = clock
        self.source_url = _queue_url(pipe.source_arn, sqs_client)
        self.target_url = _queue_url(pipe.target_arn, sqs_client)

    @classmethod
    def from_stack(
        cls,
        stack: str,
        *,
        target: AwsTarget,
        pipe: str | None = None,
        cloudformation_client: Any = None,
        pipes_client: Any = None,
        sqs_client: SQSClient | None = None,
    ) -> list[PipeRunner]:
        """A runner for each of the stack's pipes (``pipe``: the one of that name or logical id)."""
        sqs: SQSClient = sqs_client or target.client("sqs")
        pipes = find_pipes(
            stack,
            cloudformation_client=cloudformation_client or target.client("cloudformation"),
            pipes_client=pipes_client or target.client("pipes"),
            pipe=pipe,
        )
        return [cls(found, sqs_client=sqs, region=target.region) for found in pipes]

    def _context(self) -> PipeContext:
        return PipeContext(
            pipe_arn=self.pipe.arn,
            pipe_name=self.pipe.name,
            source_arn=self.pipe.source_arn,
            target_arn=self.pipe.target_arn,
            enrichment_arn=self.pipe.enrichment_arn,
            ingestion_time=self._clock(),
        )

    def _receive(self) -> list[MessageTypeDef]:
        response = self._sqs.receive_message(
            QueueUrl=self.source_url,
            MaxNumberOfMessages=self.pipe.batch_size,
            MessageSystemAttributeNames=["All"],
            MessageAttributeNames=["All"],
            WaitTimeSeconds=0,
        )
        return list(response.get("Messages", []))

    def _send(self, entries: Sequence[SqsEntry]) -> dict[str, str]:
        """SendMessageBatch; returns ``{entry id: reason}`` for the entries SQS refused."""
        if not entries:
            return {}
        response = self._sqs.send_message_batch(
            QueueUrl=self.target_url,
            Entries=[entry.to_request() for entry in entries],  # type: ignore[misc]
        )
        return {
            failed["Id"]: f"{failed.get('Code', 'Failed')}: {failed.get('Message', '')}".rstrip(": ")
            for failed in response.get("Failed", [])
        }

    def run_batch(self, stats: PipeStats) -> int:
        """Receive one batch and move it; returns how many records were received (0: source empty)."""
        messages = self._receive()
        if not messages:
            return 0
        stats.batches += 1
        stats.received += len(messages)
        context = self._context()
        outcomes = [
            build_entry(
                str(index),
                build_record(message, queue_arn=self.pipe.source_arn, region=self.region),
                self.pipe.target,
                context,
            )
            for index, message in enumerate(messages)
        ]
        entries = [outcome for outcome in outcomes if isinstance(outcome, SqsEntry)]
        refused = self._send(entries)
        failures = {o.entry_id: o.reason for o in outcomes if isinstance(o, RecordFailure)} | refused
        stats.failed += len(failures)
        stats.failures.update(failures.values())
        stats.template_paths_missing += sum(
            1 for e in entries if e.missing_paths and e.entry_id not in refused
        )
        sent = [messages[int(e.entry_id)] for e in entries if e.entry_id not in refused]
        stats.sent += len(sent)
        if sent:
            self._sqs.delete_message_batch(
                QueueUrl=self.source_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(sent)],
            )
        return len(messages)

    def run(
        self,
        *,
        until_empty: bool = True,
        for_seconds: float | None = None,
        say: Callable[[str], None] | None = None,
    ) -> PipeStats:
        """Move batches until the source returns none (``until_empty``) or for ``for_seconds``.

        Records left after a failure are in flight until the source's visibility timeout ends;
        ``leftInFlight`` counts the source's messages in flight when the run stops.
        """
        stats = PipeStats(self.pipe.name, self.pipe.source_arn, self.pipe.target_arn)
        if not self.pipe.running:
            stats.skipped = (
                f"pipe {self.pipe.name} is {self.pipe.desired_state}: Pipes polls a RUNNING pipe only"
            )
            return stats
        deadline = None if for_seconds is None else time.monotonic() + for_seconds
        while deadline is None or time.monotonic() < deadline:
            if self.run_batch(stats) == 0:
                if until_empty and deadline is None:
                    break
                time.sleep(0.2)
        attributes = self._sqs.get_queue_attributes(
            QueueUrl=self.source_url, AttributeNames=["ApproximateNumberOfMessagesNotVisible"]
        )["Attributes"]
        stats.left_in_flight = int(attributes.get("ApproximateNumberOfMessagesNotVisible", "0"))
        if say is not None and stats.failed:
            say(
                f"pipe {self.pipe.name}: {stats.failed} record(s) left in the source; they return after its "
                "visibility timeout, and go to its dead-letter queue after maxReceiveCount receives"
            )
        return stats
