"""runner.py: events via a deployed rule, staging queue and pipe reach the FIFO queue, as Pipes sends them.

In-process moto with the emulator's fidelity patches (CloudFormation creates the pipe; the rule's SQS
target gets AWS's event); the stack is deployed by CloudFormation as ``cdk deploy`` would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.local.aws import AwsTarget
from constructs_fifo.local.emulator import patches
from constructs_fifo.local.pipes.errors import PipeNotFoundError
from constructs_fifo.local.pipes.runner import PipeRunner

REGION = "us-east-1"
STACK = "AccountEvents"
TEMPLATE_BODY = (
    '{"jobId": <$.body.id>, "jobType": "account.event", "group": <$.body.detail.accountId>, '
    '"seq": <$.body.detail.version>, "payload": <$.body.detail>}'
)


def _template(*, desired_state: str = "RUNNING", max_receive_count: int = 2) -> dict[str, Any]:
    arn = {"Fn::GetAtt": ["Staging", "Arn"]}
    return {
        "Resources": {
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "accounts"}},
            "StagingDlq": {"Type": "AWS::SQS::Queue", "Properties": {"SqsManagedSseEnabled": True}},
            "Staging": {
                "Type": "AWS::SQS::Queue",
                "Properties": {
                    "SqsManagedSseEnabled": True,
                    "VisibilityTimeout": 0,
                    "RedrivePolicy": {
                        "deadLetterTargetArn": {"Fn::GetAtt": ["StagingDlq", "Arn"]},
                        "maxReceiveCount": max_receive_count,
                    },
                },
            },
            "Jobs": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"QueueName": "account-jobs.fifo", "FifoQueue": True},
            },
            "Rule": {
                "Type": "AWS::Events::Rule",
                "Properties": {
                    "EventBusName": {"Ref": "Bus"},
                    "EventPattern": {"source": ["acme.accounts"]},
                    "Targets": [{"Id": "Staging", "Arn": arn}],
                },
            },
            "Role": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Principal": {"Service": "pipes.amazonaws.com"},
                                "Action": "sts:AssumeRole",
                            }
                        ],
                    }
                },
            },
            "Pipe": {
                "Type": "AWS::Pipes::Pipe",
                "Properties": {
                    "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]},
                    "DesiredState": desired_state,
                    "Source": arn,
                    "SourceParameters": {"SqsQueueParameters": {"BatchSize": 10}},
                    "Target": {"Fn::GetAtt": ["Jobs", "Arn"]},
                    "TargetParameters": {
                        "InputTemplate": TEMPLATE_BODY,
                        "SqsQueueParameters": {
                            "MessageGroupId": "$.body.detail.accountId",
                            "MessageDeduplicationId": "$.body.id",
                        },
                    },
                },
            },
        }
    }


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    already = patches.is_applied()
    patches.apply()
    try:
        with mock_aws():
            yield
    finally:
        if not already:
            patches.revert()


def _deploy(template: dict[str, Any]) -> None:
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=STACK, TemplateBody=json.dumps(template)
    )


def _publish(*details: dict[str, Any]) -> None:
    events = boto3.client("events", region_name=REGION)
    entries = [
        {
            "Source": "acme.accounts",
            "DetailType": "AccountChanged",
            "Detail": json.dumps(d),
            "EventBusName": "accounts",
        }
        for d in details
    ]
    assert events.put_events(Entries=entries)["FailedEntryCount"] == 0


def _received(queue_name: str) -> list[dict[str, Any]]:
    sqs = boto3.client("sqs", region_name=REGION)
    url = sqs.get_queue_url(QueueName=queue_name)["QueueUrl"]
    messages: list[Any] = []
    while batch := sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=10, MessageSystemAttributeNames=["All"]
    ).get("Messages", []):
        messages.extend(batch)
        sqs.delete_message_batch(
            QueueUrl=url,
            Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(batch)],
        )
    return messages


def _runner() -> PipeRunner:
    [runner] = PipeRunner.from_stack(STACK, target=AwsTarget(None, REGION))
    return runner


def test_events_reach_the_fifo_queue_with_the_pipes_group_dedup_id_and_envelope(aws: None) -> None:
    # GIVEN the deployed rule, staging queue and pipe, and three events of two accounts
    _deploy(_template())
    _publish(
        {"accountId": "a1", "version": 1, "type": "account.suspended"},
        {"accountId": "a2", "version": 1, "type": "usage.reported"},
        {"accountId": "a1", "version": 2, "type": "account.reactivated"},
    )
    # WHEN the pipe runs until the staging queue is empty
    stats = _runner().run(until_empty=True)
    # THEN every event was sent and deleted from the staging queue
    assert (stats.received, stats.sent, stats.failed) == (3, 3, 0)
    assert stats.as_dict()["leftInFlight"] == 0
    # AND each message is in its account's group, deduplicated by the event id, with the envelope
    messages = _received("account-jobs.fifo")
    bodies = [json.loads(m["Body"]) for m in messages]
    assert [(m["Attributes"]["MessageGroupId"], b["seq"]) for m, b in zip(messages, bodies, strict=True)] == [
        ("a1", 1),
        ("a1", 2),
        ("a2", 1),
    ]
    assert all(
        m["Attributes"]["MessageDeduplicationId"] == b["jobId"] for m, b in zip(messages, bodies, strict=True)
    )
    assert bodies[0]["payload"] == {"accountId": "a1", "version": 1, "type": "account.suspended"}
    assert {b["jobType"] for b in bodies} == {"account.event"}
    assert _received("account-jobs.fifo") == []


def test_an_event_without_the_group_path_stays_in_staging_then_goes_to_its_dlq(aws: None) -> None:
    # GIVEN a staging queue that dead-letters after 2 receives, and an event with no accountId
    _deploy(_template(max_receive_count=2))
    _publish({"accountId": "a1", "version": 1}, {"version": 1})
    # WHEN the pipe runs until the staging queue is empty (visibility timeout 0: failures come back)
    stats = _runner().run(until_empty=True)
    # THEN the good event was sent once; the bad one failed on each receive, with its reason
    assert stats.sent == 1
    assert stats.failures == {
        "MessageGroupId path $.body.detail.accountId resolves to nothing in the event": 2
    }
    # AND SQS's redrive moved it to the staging DLQ, untouched
    [dead] = [json.loads(m["Body"]) for m in _received(_staging_dlq())]
    assert dead["detail"] == {"version": 1}
    assert len(_received("account-jobs.fifo")) == 1


def _staging_dlq() -> str:
    sqs = boto3.client("sqs", region_name=REGION)
    [url] = [u for u in sqs.list_queues()["QueueUrls"] if "StagingDlq" in u]
    return url.rsplit("/", 1)[1]


def test_a_stopped_pipe_moves_nothing(aws: None) -> None:
    # GIVEN a pipe deployed STOPPED and one staged event
    _deploy(_template(desired_state="STOPPED"))
    _publish({"accountId": "a1", "version": 1})
    # WHEN it runs THEN it says why it skipped, and the event waits in staging
    stats = _runner().run(until_empty=True)
    assert stats.skipped is not None and "STOPPED" in stats.skipped
    assert stats.received == 0
    assert _received("account-jobs.fifo") == []


def test_a_stack_without_a_pipe_is_refused_with_the_fix(aws: None) -> None:
    # GIVEN a stack of one queue WHEN its pipes are looked for THEN the error names the stack and the fix
    _deploy({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {}}}})
    with pytest.raises(PipeNotFoundError, match=STACK) as raised:
        _runner()
    assert "--pipe" in raised.value.fix
