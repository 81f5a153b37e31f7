"""A deployed event ingress for the pipe tests: bus, rule, staging queue (with DLQ), pipe, FIFO queue.

In-process moto with the emulator's fidelity patches; deployed by CloudFormation as ``cdk deploy`` would.
"""

from __future__ import annotations

import json
from typing import Any

import boto3

__all__ = ["REGION", "STACK", "TEMPLATE_BODY", "deploy", "publish", "received", "template"]

REGION = "us-east-1"
STACK = "AccountEvents"
TEMPLATE_BODY = (
    '{"jobId": <$.body.id>, "jobType": "account.event", "group": <$.body.detail.accountId>, '
    '"seq": <$.body.detail.version>, "payload": <$.body.detail>}'
)


def template(*, desired_state: str = "RUNNING", max_receive_count: int = 2) -> dict[str, Any]:
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


def deploy(template: dict[str, Any]) -> None:
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName=STACK, TemplateBody=json.dumps(template)
    )


def publish(*details: dict[str, Any]) -> None:
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


def received(queue_name: str) -> list[dict[str, Any]]:
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
