"""EventBridge and Pipes behaviours the event ingress relies on (rule, staging queue, pipe); naming the page.

On AWS the pipe moves records itself; on the emulator nothing moves them but the local pipe runner
(``constructs-fifo pipes run``; the second test pins that). Standard queues, a bus, a rule and a pipe:
created per test and deleted with their stack or at the end of the test.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

from constructs_fifo.local.emulator import patches

from .support import RAW_ENV, Target

if TYPE_CHECKING:
    from mypy_boto3_cloudformation.client import CloudFormationClient
    from mypy_boto3_sqs.client import SQSClient


def _wait_created(cloudformation: CloudFormationClient, stack: str, target: Target) -> None:
    delay = 5 if target.on_aws else 1
    cloudformation.get_waiter("stack_create_complete").wait(
        StackName=stack, WaiterConfig={"Delay": delay, "MaxAttempts": 120}
    )


def _resources(cloudformation: CloudFormationClient, stack: str) -> dict[str, dict[str, Any]]:
    found = cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    return {r.get("LogicalResourceId", "?"): dict(r) for r in found}


def _role(source: Any, target: Any) -> dict[str, Any]:
    """The pipe's role: read the source, send to the target (eb-pipes-sqs, "Execution role permissions")."""
    return {
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
            },
            "Policies": [
                {
                    "PolicyName": "pipe",
                    "PolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [
                            {
                                "Effect": "Allow",
                                "Action": [
                                    "sqs:ReceiveMessage",
                                    "sqs:DeleteMessage",
                                    "sqs:GetQueueAttributes",
                                ],
                                "Resource": source,
                            },
                            {"Effect": "Allow", "Action": "sqs:SendMessage", "Resource": target},
                        ],
                    },
                }
            ],
        },
    }


def _pipe_template(stack: str) -> dict[str, Any]:
    staging, jobs = {"Fn::GetAtt": ["Staging", "Arn"]}, {"Fn::GetAtt": ["Jobs", "Arn"]}
    return {
        "Resources": {
            "Staging": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": f"{stack}-staging"}},
            "Jobs": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"QueueName": f"{stack}-jobs.fifo", "FifoQueue": True},
            },
            "Role": _role(staging, jobs),
            "Pipe": {
                "Type": "AWS::Pipes::Pipe",
                "Properties": {
                    "Name": f"{stack}-pipe",
                    "RoleArn": {"Fn::GetAtt": ["Role", "Arn"]},
                    "Source": staging,
                    "SourceParameters": {"SqsQueueParameters": {"BatchSize": 10}},
                    "Target": jobs,
                    "TargetParameters": {
                        "InputTemplate": '{"group": <$.body.detail.accountId>}',
                        "SqsQueueParameters": {
                            "MessageGroupId": "$.body.detail.accountId",
                            "MessageDeduplicationId": "$.body.id",
                        },
                    },
                },
            },
        },
        "Outputs": {
            "PipeName": {"Value": {"Ref": "Pipe"}},
            "PipeArn": {"Value": {"Fn::GetAtt": ["Pipe", "Arn"]}},
        },
    }


def test_cloudformation_creates_a_pipe_with_its_source_target_and_target_parameters(target: Target) -> None:
    """AWS: aws-resource-pipes-pipe (Ref is the pipe's name; Fn::GetAtt Arn) and API_DescribePipe.
    The local runner reads the pipe this way: a stack's AWS::Pipes::Pipe, then DescribePipe."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    pipes = target.client("pipes")
    stack = f"cfconf-{target.run_id}-pipe"
    template = _pipe_template(stack)
    try:
        # WHEN a stack with an SQS-to-SQS pipe is created
        cloudformation.create_stack(
            StackName=stack, TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_IAM"]
        )
        _wait_created(cloudformation, stack, target)
        # THEN DescribeStackResources lists the pipe by its name
        pipe = _resources(cloudformation, stack)["Pipe"]
        assert (pipe["ResourceType"], pipe["PhysicalResourceId"]) == ("AWS::Pipes::Pipe", f"{stack}-pipe")
        # AND its outputs resolve Ref and Fn::GetAtt Arn
        [described_stack] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described_stack.get("Outputs", [])}
        assert outputs["PipeName"] == f"{stack}-pipe"
        assert outputs["PipeArn"].endswith(f":pipe/{stack}-pipe")
        # AND DescribePipe gives the deployed source, target and target parameters
        described = pipes.describe_pipe(Name=f"{stack}-pipe")
        assert described["Source"].endswith(f":{stack}-staging")
        assert described["Target"].endswith(f":{stack}-jobs.fifo")
        assert (
            described["TargetParameters"] == template["Resources"]["Pipe"]["Properties"]["TargetParameters"]
        )
        assert described["DesiredState"] == "RUNNING"
    finally:
        cloudformation.delete_stack(StackName=stack)


@pytest.mark.emulator_only
def test_the_emulator_deploys_a_pipe_as_configuration_and_moves_nothing(
    target: Target, sqs: SQSClient
) -> None:
    """No Pipes engine runs in the emulator (moto's has none, and must not start one): records stay
    in the source until the local pipe runner moves them."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    stack = f"cfconf-{target.run_id}-inert"
    try:
        # GIVEN a deployed pipe and a record in its source
        cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps(_pipe_template(stack)))
        _wait_created(cloudformation, stack, target)
        staging = sqs.get_queue_url(QueueName=f"{stack}-staging")["QueueUrl"]
        sqs.send_message(
            QueueUrl=staging, MessageBody=json.dumps({"id": "e1", "detail": {"accountId": "a1"}})
        )
        # WHEN nothing else happens THEN the record is still in the source, and the target is empty
        time.sleep(0.3)
        jobs = sqs.get_queue_url(QueueName=f"{stack}-jobs.fifo")["QueueUrl"]
        counts = sqs.get_queue_attributes(QueueUrl=staging, AttributeNames=["ApproximateNumberOfMessages"])
        assert counts["Attributes"]["ApproximateNumberOfMessages"] == "1"
        assert sqs.receive_message(QueueUrl=jobs).get("Messages", []) == []
    finally:
        cloudformation.delete_stack(StackName=stack)


def test_ref_of_an_event_bus_is_its_name_so_a_rule_can_name_it(target: Target) -> None:
    """AWS: aws-resource-events-eventbus ("Ref returns the name of the event bus"). CDK synthesizes
    ``EventBusName: {"Ref": bus}`` for a rule on a custom bus."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    stack = f"cfconf-{target.run_id}-bus"
    bus = f"{stack}-accounts"
    template = {
        "Resources": {
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": bus}},
            "Rule": {
                "Type": "AWS::Events::Rule",
                "Properties": {"EventBusName": {"Ref": "Bus"}, "EventPattern": {"source": ["acme.accounts"]}},
            },
        }
    }
    try:
        # WHEN the stack is created
        cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps(template))
        _wait_created(cloudformation, stack, target)
        # THEN the bus's physical id is its name, and the rule is on that bus
        resources = _resources(cloudformation, stack)
        assert resources["Bus"]["PhysicalResourceId"] == bus
        rules = target.client("events").list_rules(EventBusName=bus)["Rules"]
        assert [r["EventBusName"] for r in rules] == [bus]
    finally:
        cloudformation.delete_stack(StackName=stack)


@pytest.fixture
def staging_queues(target: Target, sqs: SQSClient) -> Iterator[dict[str, tuple[str, str]]]:
    """Three standard queues that EventBridge may send to: ``{name: (url, arn)}``."""
    created: dict[str, tuple[str, str]] = {}
    for name in ("whole", "path", "input"):
        url = sqs.create_queue(QueueName=f"cfconf-{target.run_id}-rule-{name}")["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        policy = {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Service": "events.amazonaws.com"},
                    "Action": "sqs:SendMessage",
                    "Resource": arn,
                }
            ],
        }
        sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": json.dumps(policy)})
        created[name] = (url, arn)
    yield created
    for url, _ in created.values():
        with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):
            sqs.delete_queue(QueueUrl=url)


def _bodies(sqs: SQSClient, url: str, wait_seconds: int) -> list[Any]:
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=wait_seconds)
    return [json.loads(m["Body"]) for m in messages.get("Messages", [])]


def test_a_rules_sqs_targets_get_the_matched_event_its_input_path_or_its_input(
    target: Target, sqs: SQSClient, staging_queues: dict[str, tuple[str, str]]
) -> None:
    """AWS: eb-events (an event's fields: version, id, detail-type, source, account, time, region,
    resources, detail), eb-event-patterns, and API_Target (Input: "Valid JSON text passed to the
    target"; InputPath: the part of the matched event). The staging queue receives the whole event,
    which the pipe then reads as ``$.body``."""
    events = target.client("events")
    bus = f"cfconf-{target.run_id}-rule-bus"
    events.create_event_bus(Name=bus)
    rule = f"cfconf-{target.run_id}-rule"
    try:
        # GIVEN a rule on a custom bus, for account events only, into three queues
        events.put_rule(Name=rule, EventBusName=bus, EventPattern=json.dumps({"source": ["acme.accounts"]}))
        events.put_targets(
            Rule=rule,
            EventBusName=bus,
            Targets=[
                {"Id": "whole", "Arn": staging_queues["whole"][1]},
                {"Id": "path", "Arn": staging_queues["path"][1], "InputPath": "$.detail"},
                {"Id": "input", "Arn": staging_queues["input"][1], "Input": '{"constant": true}'},
            ],
        )
        # WHEN one matching and one other event are published
        detail = {"accountId": "a1", "version": 3}
        sent = events.put_events(
            Entries=[
                {
                    "Source": "acme.accounts",
                    "DetailType": "AccountChanged",
                    "Detail": json.dumps(detail),
                    "EventBusName": bus,
                },
                {
                    "Source": "acme.billing",
                    "DetailType": "AccountChanged",
                    "Detail": json.dumps(detail),
                    "EventBusName": bus,
                },
            ]
        )
        wait = 10 if target.on_aws else 0
        # THEN the first queue has the matching event whole, with its account and an ISO time
        [whole] = _bodies(sqs, staging_queues["whole"][0], wait)
        assert set(whole) == {
            "version",
            "id",
            "detail-type",
            "source",
            "account",
            "time",
            "region",
            "resources",
            "detail",
        }
        assert whole["id"] == sent["Entries"][0]["EventId"]
        assert (whole["source"], whole["detail"], whole["resources"]) == ("acme.accounts", detail, [])
        assert whole["account"].isdigit() and len(whole["account"]) == 12
        assert whole["time"].endswith("Z")
        # AND the InputPath target has only the detail, the Input target the constant
        assert _bodies(sqs, staging_queues["path"][0], wait) == [detail]
        assert _bodies(sqs, staging_queues["input"][0], wait) == [{"constant": True}]
    finally:
        events.remove_targets(Rule=rule, EventBusName=bus, Ids=["whole", "path", "input"])
        events.delete_rule(Name=rule, EventBusName=bus)
        events.delete_event_bus(Name=bus)


@pytest.mark.emulator_only
@pytest.mark.skipif(os.environ.get(RAW_ENV) == "1", reason="raw-moto run: the patches must stay off")
def test_the_events_and_pipes_patches_are_reverted_and_applied_once() -> None:
    from moto.cloudformation import parsing
    from moto.events.models import EventBus, Rule

    # GIVEN the patches applied (the session's emulator applied them)
    patches.apply()
    patched = (parsing.resource_class_from_type, Rule.send_to_targets)
    try:
        # WHEN they are reverted THEN moto's own functions are back, and a bus has no physical id
        patches.revert()
        assert parsing.resource_class_from_type("AWS::Pipes::Pipe") is None
        assert Rule.send_to_targets.__module__ == "moto.events.models"
        assert "physical_resource_id" not in EventBus.__dict__
    finally:
        # AND applying again twice installs the same patches once (no wrapper of a wrapper)
        patches.apply()
        patches.apply()
    assert (parsing.resource_class_from_type, Rule.send_to_targets) == patched
    assert parsing.resource_class_from_type("AWS::Pipes::Pipe").__name__ == "PipeResource"
