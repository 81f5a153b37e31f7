"""A deployed-looking OrderedAgentQueue on in-process moto (with the emulator's fidelity patches), for the
operations commands: a CloudFormation stack with the queue, its DLQ, the tables, a function and its SQS
event source mapping (so ``--stack``/``--queue`` resolve as they do against AWS), and the real runtime
processor draining the queue in-process as the mapping would."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stdout
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import boto3
from moto import mock_aws

from constructs_fifo.cli import main
from constructs_fifo.local.emulator import patches
from constructs_fifo.ops import OpsQueue
from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.letters import DeadLetter, DeadLetterSender
from constructs_fifo.runtime.dead_jobs.record import DeadJob
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.counters import queue_counts
from constructs_fifo.stacks.deployed import resolve_queue

from .runtime_harness import (
    DLQ_NAME,
    GROUP_TABLE_NAME,
    QUEUE_NAME,
    REGION,
    TABLE_NAME,
    FakeClock,
    Harness,
    failed_ids,
    receive_records,
)
from .state_harness import StateHarness

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

STACK = "OpsStack"


def _table(name: str, keys: list[tuple[str, str]]) -> dict[str, Any]:
    return {
        "Type": "AWS::DynamoDB::Table",
        "Properties": {
            "TableName": name,
            "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": k, "KeyType": t} for k, t in keys],
            "AttributeDefinitions": [{"AttributeName": k, "AttributeType": "S"} for k, _ in keys],
        },
    }


def stack_template(*, claim_mode: bool, pace: str | None = None) -> dict[str, Any]:
    """What an OrderedAgentQueue deploys, in the shape ``find_queues`` reads (``pace``: the
    construct's pace as it writes it into the function's environment)."""
    environment = {"CONSTRUCTS_FIFO_GROUP_TABLE": GROUP_TABLE_NAME}
    if pace is not None:
        environment["CONSTRUCTS_FIFO_PACE"] = pace
    resources: dict[str, Any] = {
        "Role": {
            "Type": "AWS::IAM::Role",
            "Properties": {
                "AssumeRolePolicyDocument": {
                    "Version": "2012-10-17",
                    "Statement": [
                        {
                            "Effect": "Allow",
                            "Principal": {"Service": "lambda.amazonaws.com"},
                            "Action": "sts:AssumeRole",
                        }
                    ],
                }
            },
        },
        "Dlq": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": DLQ_NAME, "FifoQueue": True}},
        "Queue": {
            "Type": "AWS::SQS::Queue",
            "Properties": {
                "QueueName": QUEUE_NAME,
                "FifoQueue": True,
                "VisibilityTimeout": 120,
                "RedrivePolicy": {
                    "deadLetterTargetArn": {"Fn::GetAtt": ["Dlq", "Arn"]},
                    "maxReceiveCount": 192,
                },
            },
            "Metadata": {"aws:cdk:path": f"{STACK}/Jobs/Queue/Resource"},
        },
        "Groups": _table(GROUP_TABLE_NAME, [("group", "HASH"), ("sk", "RANGE")]),
        "Function": {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "Runtime": "python3.12",
                "Handler": "index.handler",
                "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Code": {"ZipFile": "def handler(event, context):\n    return {}\n"},
                "Environment": {"Variables": environment},
            },
            "Metadata": {"aws:cdk:path": f"{STACK}/Jobs/Function/Resource"},
        },
        "Mapping": {
            "Type": "AWS::Lambda::EventSourceMapping",
            "Properties": {
                "EventSourceArn": {"Fn::GetAtt": ["Queue", "Arn"]},
                "FunctionName": {"Ref": "Function"},
                "BatchSize": 10,
            },
        },
    }
    if claim_mode:
        resources["Claims"] = _table(TABLE_NAME, [("id", "HASH")])
        environment["CONSTRUCTS_FIFO_CLAIM_TABLE"] = TABLE_NAME
    return {"Resources": resources}


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@dataclass
class World:
    """The stack's clients, the runtime processor (claim or state mode) and the CLI, on one moto."""

    sqs: SQSClient
    dynamodb: DynamoDBClient
    queue_url: str
    dlq_url: str
    claim_mode: bool
    run_batch: Callable[[list[SQSRecord]], BatchResponse]
    harness: Any
    batches: int = 0
    outputs: list[str] = field(default_factory=list)
    clients: dict[str, Any] = field(default_factory=dict)

    def cli(self, *argv: str, tty: bool = False) -> tuple[int, str]:
        """Run ``constructs-fifo ARGV --stack OpsStack``; return the exit code and stdout (a terminal
        with ``tty``)."""
        out = _Terminal() if tty else io.StringIO()
        with redirect_stdout(out):
            code = main([*argv, "--stack", STACK])
        self.outputs.append(out.getvalue())
        return code, out.getvalue()

    def cli_json(self, *argv: str) -> Any:
        code, out = self.cli(*argv, "--json")
        assert code == 0, (argv, code, out)
        return json.loads(out)

    def send(self, group: str, *job_ids: str) -> None:
        for job_id in job_ids:
            self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=json.dumps({"jobId": job_id, "type": "apply_patch", "payload": {}}),
                MessageGroupId=group,
                MessageDeduplicationId=job_id,
            )

    def drain(self, *, rounds: int = 40) -> None:
        """Run what the queue delivers until it is empty, as the event source mapping would."""
        for _ in range(rounds):
            records = receive_records(self.sqs, self.queue_url)
            if not records:
                return
            self.batches += 1
            failed = set(failed_ids(self.run_batch(records)))
            for record in records:
                handle = record["receiptHandle"]
                if record["messageId"] in failed:
                    self.sqs.change_message_visibility(
                        QueueUrl=self.queue_url, ReceiptHandle=handle, VisibilityTimeout=0
                    )
                else:
                    self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=handle)
            self.harness.clock.advance(60)
        raise AssertionError(f"the queue did not drain in {rounds} batches")

    def ops(self) -> OpsQueue:
        """The queue as the commands see it (resolved from the stack), on this world's clients."""
        if "cloudformation" not in self.clients:
            self.clients = {
                name: boto3.client(name, region_name=REGION) for name in ("cloudformation", "lambda")
            }
        deployed = resolve_queue(
            STACK,
            target=AwsTarget(None, REGION),
            cloudformation_client=self.clients["cloudformation"],
            lambda_client=self.clients["lambda"],
            sqs_client=self.sqs,
        )
        return OpsQueue(deployed, self.sqs, self.dynamodb)

    def send_dead(self, group: str, job_id: str, *, seq: int | None = None) -> str:
        """Put a dead job in the DLQ as the runtime sends one (body, group, triage attributes)."""
        body: dict[str, Any] = {"jobId": job_id, "type": "apply_patch", "payload": {}}
        if seq is not None:
            body["seq"] = seq
        dead = DeadJob(
            job_id=job_id,
            job_type="apply_patch",
            error_type="PermanentJobError",
            error="bad patch",
            attempts=1,
            message_id=f"m-{job_id}",
            at_ms=int(time.time() * 1000),
            reason=DeadReason.PERMANENT,
        )
        letter = DeadLetter(body=json.dumps(body), group=group, dead=dead)
        return DeadLetterSender(self.sqs, self.dlq_url).send(letter)

    def send_seq(self, group: str, *specs: tuple[str, int]) -> None:
        for job_id, seq in specs:
            self.sqs.send_message(
                QueueUrl=self.queue_url,
                MessageBody=json.dumps({"jobId": job_id, "type": "apply_patch", "payload": {}, "seq": seq}),
                MessageGroupId=group,
                MessageDeduplicationId=job_id,
            )

    def queued(self) -> list[tuple[str, str]]:
        """(group, job id) of every message of the source queue, received and deleted, in order."""
        found: list[tuple[str, str]] = []
        while records := receive_records(self.sqs, self.queue_url):
            for record in records:
                found.append(
                    (record["attributes"]["MessageGroupId"], json.loads(record["body"]).get("jobId", ""))
                )
                self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=record["receiptHandle"])
        return found

    def snapshot(self) -> dict[str, Any]:
        """Everything a command could change, read without changing it (no receive)."""
        tables = [GROUP_TABLE_NAME] + ([TABLE_NAME] if self.claim_mode else [])
        items = {
            table: sorted(
                # a Binary attribute (state mode's remembered ids) compares by its bytes' hex
                json.dumps(item, sort_keys=True, default=bytes.hex)
                for item in self.dynamodb.scan(TableName=table)["Items"]
            )
            for table in tables
        }
        return {
            "tables": items,
            "queue": queue_counts(self.sqs, self.queue_url),
            "dlq": queue_counts(self.sqs, self.dlq_url),
        }


def world(*, claim_mode: bool, pace: str | None = None) -> Iterator[World]:
    """Yield a :class:`World` inside ``mock_aws`` with the fidelity patches; undone afterwards
    (``pace``: as :func:`stack_template`'s)."""
    already = patches.is_applied()
    patches.apply()
    try:
        with mock_aws():
            cloudformation = boto3.client("cloudformation", region_name=REGION)
            cloudformation.create_stack(
                StackName=STACK, TemplateBody=json.dumps(stack_template(claim_mode=claim_mode, pace=pace))
            )
            sqs = boto3.client("sqs", region_name=REGION)
            dynamodb = boto3.client("dynamodb", region_name=REGION)
            queue_url = sqs.get_queue_url(QueueName=QUEUE_NAME)["QueueUrl"]
            dlq_url = sqs.get_queue_url(QueueName=DLQ_NAME)["QueueUrl"]
            clock = FakeClock(time.time())
            harness: Any
            if claim_mode:
                from constructs_fifo.runtime.constants import DeadJobPolicy

                harness = Harness(
                    dynamodb=dynamodb,
                    sqs=sqs,
                    queue_url=queue_url,
                    dlq_url=dlq_url,
                    policy=DeadJobPolicy.PARK,
                    clock=clock,
                )
            else:
                from constructs_fifo.runtime.constants import DeadJobPolicy

                harness = StateHarness(
                    dynamodb=dynamodb,
                    sqs=sqs,
                    queue_url=queue_url,
                    dlq_url=dlq_url,
                    policy=DeadJobPolicy.PARK,
                    clock=clock,
                )
            yield World(
                sqs=sqs,
                dynamodb=dynamodb,
                queue_url=queue_url,
                dlq_url=dlq_url,
                claim_mode=claim_mode,
                run_batch=lambda records: harness.run(*records),
                harness=harness,
            )
    finally:
        if not already:
            patches.revert()
