"""Helpers for the runtime's functional tests: Lambda-shaped SQS records, a fake context and clock,
a DynamoDB call counter, and a harness that wires an OrderedBatchProcessor to moto clients.

:class:`ProcessorHarness` is what the claim-mode :class:`Harness` and the state-mode ``StateHarness``
(``state_harness.py``) share: the moto clients, the clock, the wiring every processor takes (logger,
visibility, dead letters, its settings) and the readers of the lines it wrote."""

from __future__ import annotations

import io
import json
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Protocol

from constructs_fifo.runtime.backoff import VisibilityChanger
from constructs_fifo.runtime.claim.processor import OrderedBatchProcessor
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.dead_jobs.letters import DeadLetterSender
from constructs_fifo.runtime.dead_jobs.parking import ParkStore
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.settings.config import RuntimeConfig

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

REGION = "us-east-1"
ACCOUNT = "123456789012"
QUEUE_NAME = "jobs.fifo"
QUEUE_ARN = f"arn:aws:sqs:{REGION}:{ACCOUNT}:{QUEUE_NAME}"
TABLE_NAME = "claims"
GROUP_TABLE_NAME = "groups"
DLQ_NAME = "jobs-dlq.fifo"


class FakeContext:
    """A Lambda context whose remaining time is set by the test."""

    def __init__(self, remaining_ms: int = 60_000) -> None:
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self) -> int:
        return self.remaining_ms


class FakeClock:
    """Epoch seconds that move only when the test says so."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def body(job_id: str, job_type: str = "apply_patch", **payload: Any) -> str:
    """A job envelope as the producer sends it."""
    return json.dumps({"jobId": job_id, "type": job_type, "payload": payload})


def make_record(
    raw_body: str,
    *,
    group: str = "ws#1",
    attempt: int = 1,
    message_id: str | None = None,
    receipt_handle: str | None = None,
    dedup_id: str | None = None,
) -> SQSRecord:
    """A record shaped like the ones Lambda's SQS event source mapping delivers."""
    mid = message_id or str(uuid.uuid4())
    return {
        "messageId": mid,
        "receiptHandle": receipt_handle or f"rh-{mid}",
        "body": raw_body,
        "attributes": {
            "ApproximateReceiveCount": str(attempt),
            "SentTimestamp": "1700000000000",
            "SenderId": "AIDAEXAMPLE",
            "ApproximateFirstReceiveTimestamp": "1700000000001",
            "SequenceNumber": "18878027350649327616",
            "MessageGroupId": group,
            "MessageDeduplicationId": dedup_id or mid,
        },
        "messageAttributes": {},
        "md5OfBody": "",
        "eventSource": "aws:sqs",
        "eventSourceARN": QUEUE_ARN,
        "awsRegion": REGION,
    }


def create_tables(dynamodb: DynamoDBClient) -> None:
    """The claim table and the group table, as the construct defines them."""
    dynamodb.create_table(
        TableName=TABLE_NAME,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    create_group_table(dynamodb)


def create_group_table(dynamodb: DynamoDBClient, name: str = GROUP_TABLE_NAME) -> None:
    """The group table as the construct defines it: partition key ``group``, sort key ``sk``."""
    dynamodb.create_table(
        TableName=name,
        KeySchema=[
            {"AttributeName": "group", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        AttributeDefinitions=[
            {"AttributeName": "group", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def event(*records: SQSRecord) -> dict[str, Any]:
    return {"Records": list(records)}


def failed_ids(response: BatchResponse) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def receive_records(sqs: SQSClient, queue_url: str, max_messages: int = 10) -> list[SQSRecord]:
    """Receive from the (moto) queue and shape the messages as Lambda records (real receipt handles)."""
    response = sqs.receive_message(
        QueueUrl=queue_url,
        MaxNumberOfMessages=max_messages,
        MessageSystemAttributeNames=["All"],
        MessageAttributeNames=["All"],
        WaitTimeSeconds=0,
    )
    records: list[SQSRecord] = []
    for message in response.get("Messages", []):
        attributes = message.get("Attributes", {})
        records.append(
            {
                "messageId": message["MessageId"],
                "receiptHandle": message["ReceiptHandle"],
                "body": message["Body"],
                "attributes": {
                    "ApproximateReceiveCount": attributes.get("ApproximateReceiveCount", "1"),
                    "SentTimestamp": attributes.get("SentTimestamp", "0"),
                    "MessageGroupId": attributes.get("MessageGroupId", ""),
                    "MessageDeduplicationId": attributes.get("MessageDeduplicationId", ""),
                    "SequenceNumber": attributes.get("SequenceNumber", ""),
                },
                "messageAttributes": {
                    name: {"stringValue": value.get("StringValue", ""), "dataType": value["DataType"]}
                    for name, value in message.get("MessageAttributes", {}).items()
                },
                "md5OfBody": message.get("MD5OfBody", ""),
                "eventSource": "aws:sqs",
                "eventSourceARN": QUEUE_ARN,
                "awsRegion": REGION,
            }
        )
    return records


#: The keyword arguments of a harness's processor that are settings (fields of RuntimeConfig).
SETTING_FIELDS = frozenset(f.name for f in fields(RuntimeConfig))


def with_settings(options: Mapping[str, Any]) -> dict[str, Any]:
    """A processor's keyword arguments with the settings among ``options`` gathered into ``settings``."""
    settings = {name: value for name, value in options.items() if name in SETTING_FIELDS}
    rest = {name: value for name, value in options.items() if name not in SETTING_FIELDS}
    return {**rest, "settings": RuntimeConfig(**{"claim_table": TABLE_NAME, **settings})}


class DynamoCallCounter:
    """Counts DynamoDB API calls made through one client (botocore event hook, removed on close)."""

    def __init__(self, client: DynamoDBClient) -> None:
        self.calls: list[str] = []
        self._client = client
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)

    def reset(self) -> None:
        self.calls.clear()

    def close(self) -> None:
        self._client.meta.events.unregister("before-call.dynamodb", self._count)


class BatchProcessor(Protocol):
    """What a harness runs: either mode's processor."""

    def process(self, event: dict[str, Any], context: Any) -> BatchResponse: ...


@dataclass
class ProcessorHarness:
    """The moto clients, clock and log stream of a processor under test, and the readers of its lines."""

    dynamodb: DynamoDBClient
    sqs: SQSClient
    queue_url: str
    dlq_url: str = ""
    policy: DeadJobPolicy = DeadJobPolicy.CONTINUE
    clock: FakeClock = field(default_factory=FakeClock)
    behaviour: dict[str, Callable[[Job], None]] = field(default_factory=dict)
    stream: io.StringIO = field(default_factory=io.StringIO)

    def processor(self, **overrides: Any) -> BatchProcessor:
        """The processor of one invocation (``overrides`` replace its keyword arguments; a setting's
        name, a field of :class:`RuntimeConfig`, replaces that field of its ``settings``)."""
        raise NotImplementedError

    def wiring(self) -> dict[str, Any]:
        """The keyword arguments both processors take (logger, visibility, dead letters, sqs) and the
        settings both read (policy, queue), by name (:func:`with_settings` gathers the settings)."""
        logger = JobLogger("Test", stream=self.stream, clock=self.clock)
        return {
            "visibility": VisibilityChanger(self.sqs, self.queue_url, on_error=logger.event),
            "logger": logger,
            "dead_letters": DeadLetterSender(self.sqs, self.dlq_url, clock=self.clock),
            "on_dead_job": self.policy,
            "sqs": self.sqs,
            "queue_url": self.queue_url,
        }

    @property
    def parking(self) -> ParkStore:
        return ParkStore(GROUP_TABLE_NAME, self.dynamodb, clock=self.clock)

    def run(self, *records: SQSRecord, remaining_ms: int = 60_000) -> BatchResponse:
        return self.processor().process(event(*records), FakeContext(remaining_ms))

    def all_lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.stream.getvalue().splitlines() if line]

    def lines(self) -> list[dict[str, Any]]:
        """Every line written but the batches' own (outcomes, metrics and events)."""
        return [line for line in self.all_lines() if line.get("event") != "batch"]

    def batch_lines(self) -> list[dict[str, Any]]:
        return [line for line in self.all_lines() if line.get("event") == "batch"]

    def outcome_lines(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if "status" in line]

    def outcomes(self) -> list[tuple[str | None, str]]:
        return [(line["jobId"], line["status"]) for line in self.outcome_lines()]


@dataclass
class Harness(ProcessorHarness):
    """A claim-mode processor on moto clients, with a scriptable job function that records what ran."""

    max_attempts: int = 5
    ran: list[str] = field(default_factory=list)
    dlq_seen: list[dict[str, Any]] = field(default_factory=list)
    backoff_base_seconds: int = 2
    visibility_timeout_seconds: int = 120

    def handle(self, job: Job, context: object) -> None:
        self.ran.append(job.id)
        action = self.behaviour.get(job.id)
        if action is not None:
            action(job)

    @property
    def store(self) -> ClaimStore:
        return ClaimStore(
            TABLE_NAME, self.dynamodb, ttl_seconds=3600, max_attempts=self.max_attempts, clock=self.clock
        )

    def processor(self, **overrides: Any) -> OrderedBatchProcessor:
        options: dict[str, Any] = {
            **self.wiring(),
            "handler": self.handle,
            "claims": self.store,
            "parking": self.parking if self.policy is DeadJobPolicy.PARK else None,
            "backoff_base_seconds": self.backoff_base_seconds,
            "visibility_timeout_seconds": self.visibility_timeout_seconds,
        }
        options.update(overrides)
        return OrderedBatchProcessor(**with_settings(options))

    def dead_letters(self) -> list[dict[str, Any]]:
        """Every message in the dead-letter queue so far, oldest first (read once, deleted, remembered:
        a FIFO queue returns nothing more of a group while some of it is in flight)."""
        while True:
            response = self.sqs.receive_message(
                QueueUrl=self.dlq_url,
                MaxNumberOfMessages=10,
                MessageAttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
            )
            batch = response.get("Messages", [])
            if not batch:
                return list(self.dlq_seen)
            for message in batch:
                self.dlq_seen.append(dict(message))
                self.sqs.delete_message(QueueUrl=self.dlq_url, ReceiptHandle=message["ReceiptHandle"])

    def claim_item(self, job_id: str) -> dict[str, Any]:
        item = self.dynamodb.get_item(TableName=TABLE_NAME, Key={"id": {"S": job_id}}, ConsistentRead=True)
        return dict(item.get("Item", {}))
