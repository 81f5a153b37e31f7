"""Finding a stack's queues (constructs_fifo/stacks/deployed.py) when container workers consume one: its
settings are the ECS task definition's container environment, not a function's."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.cli import main
from constructs_fifo.local.emulator import patches
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.runtime import constants
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import find_queues, resolve_queue
from constructs_fifo.stacks.describe import QueueDescription
from constructs_fifo.stacks.errors import ContainerQueueError, QueueNotFoundError

REGION = "us-east-1"
STACK = "Workers"
VISIBILITY_SECONDS = 30


def _template() -> dict[str, Any]:
    """A container queue as the construct deploys it (queue, DLQ, tables, a task definition whose
    container environment holds the settings), with the CDK's construct paths."""

    def path(name: str) -> dict[str, Any]:
        return {"Metadata": {"aws:cdk:path": f"{STACK}/Builds/{name}/Resource"}}

    def table(name: str) -> dict[str, Any]:
        return {
            "Type": "AWS::DynamoDB::Table",
            **path(name),
            "Properties": {
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            },
        }

    environment = {
        constants.ENV_USER_HANDLER: "builds.run_tests",
        constants.ENV_MODE: "CLAIM",
        constants.ENV_QUEUE_URL: {"Ref": "Queue"},
        constants.ENV_CLAIM_TABLE: {"Ref": "ClaimTable"},
        constants.ENV_GROUP_TABLE: {"Ref": "GroupTable"},
        constants.ENV_DEAD_LETTER_QUEUE_URL: {"Ref": "DeadLetterQueue"},
        constants.ENV_VISIBILITY_TIMEOUT_SECONDS: str(VISIBILITY_SECONDS),
        constants.ENV_SLOTS: "2",
    }
    return {
        "Resources": {
            "DeadLetterQueue": {
                "Type": "AWS::SQS::Queue",
                **path("DeadLetterQueue"),
                "Properties": {"FifoQueue": True},
            },
            "Queue": {
                "Type": "AWS::SQS::Queue",
                **path("Queue"),
                "Properties": {
                    "FifoQueue": True,
                    "VisibilityTimeout": VISIBILITY_SECONDS,
                    "RedrivePolicy": {
                        "deadLetterTargetArn": {"Fn::GetAtt": ["DeadLetterQueue", "Arn"]},
                        "maxReceiveCount": 10,
                    },
                },
            },
            "ClaimTable": table("ClaimTable"),
            "GroupTable": table("GroupTable"),
            "TaskDefinition": {
                "Type": "AWS::ECS::TaskDefinition",
                **path("Workers/TaskDefinition"),
                "Properties": {
                    "Family": "builds",
                    "RequiresCompatibilities": ["FARGATE"],
                    "NetworkMode": "awsvpc",
                    "Cpu": "1024",
                    "Memory": "2048",
                    "ContainerDefinitions": [
                        {
                            "Name": "Worker",
                            "Image": "public.ecr.aws/docker/library/python:3.12-slim",
                            "Environment": [{"Name": k, "Value": v} for k, v in environment.items()],
                        }
                    ],
                },
            },
        }
    }


@pytest.fixture
def deployed(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwsTarget]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    already = patches.is_applied()
    patches.apply()  # the emulator's CloudFormation: FIFO queue names as the real one makes them
    try:
        with mock_aws():
            boto3.client("cloudformation", region_name=REGION).create_stack(
                StackName=STACK, TemplateBody=json.dumps(_template())
            )
            yield AwsTarget(None, REGION)
    finally:
        if not already:
            patches.revert()


def test_a_container_queue_is_found_from_its_task_definitions_environment(deployed: AwsTarget) -> None:
    # GIVEN a stack whose queue container workers consume (no function, no event source mapping)
    # WHEN its queues are found
    [queue] = find_queues(STACK, target=deployed)
    # THEN the queue, its DLQ and tables come from the container's environment, under its construct path
    sqs = boto3.client("sqs", region_name=REGION)
    assert queue.construct_path == f"{STACK}/Builds"
    assert queue.is_container and queue.function_name is None
    assert queue.task_definition is not None and ":task-definition/builds:" in queue.task_definition
    assert sqs.get_queue_url(QueueName=queue.queue_name)["QueueUrl"] == queue.queue_url
    assert queue.queue_arn.endswith(f":{queue.queue_name}")
    assert queue.dead_letter_queue_url is not None and "DeadLetterQueue" in queue.dead_letter_queue_url
    assert queue.claim_table and queue.group_table
    assert queue.function_environment[constants.ENV_USER_HANDLER] == "builds.run_tests"
    assert resolve_queue(STACK, target=deployed, queue="Builds") == queue


def test_describe_shows_the_task_definition_and_no_mapping(deployed: AwsTarget) -> None:
    # GIVEN the container queue WHEN described THEN its consumer is the task definition, with no mapping
    queue = resolve_queue(STACK, target=deployed, queue="Builds")
    rows = dict(QueueDescription(queue, mode="CLAIM").rows())
    assert rows["function"] == "-"
    assert rows["task definition"] == queue.task_definition
    assert rows["mapping"] == "-"


def test_the_local_event_source_mapping_refuses_a_container_queue_naming_the_worker(
    deployed: AwsTarget,
) -> None:
    # GIVEN the container queue WHEN the local event source mapping is asked to run it
    # THEN it is refused, and the fix is the worker command
    with pytest.raises(ContainerQueueError, match="container workers") as raised:
        EventSourceRunner.from_stack(STACK, target=deployed, queue="Builds")
    assert "constructs-fifo worker --stack Workers --queue Workers/Builds --code-dir" in raised.value.fix


def test_worker_stack_reads_the_container_settings_and_wants_the_code_dir(
    deployed: AwsTarget, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the worker exports the settings and puts the code directory on the path, as a task would: undone after
    monkeypatch.setattr(os, "environ", dict(os.environ))
    monkeypatch.setattr(sys, "path", list(sys.path))
    # GIVEN the container queue WHEN `worker --stack --queue` has no --code-dir
    # THEN it exits 2: the code is in the image, so a laptop gives its directory
    assert main(["worker", "--stack", STACK, "--queue", "Builds"]) == 2
    assert "give --code-dir" in capsys.readouterr().err
    # WHEN a heartbeat is given that the container's visibility timeout cannot hold
    # THEN the refusal names that deployed visibility timeout: the settings are the container's
    code = main(
        ["worker", "--stack", STACK, "--queue", "Builds", "--code-dir", ".", "--heartbeat-interval", "99"]
    )
    assert code == 2
    assert f"visibility timeout ({VISIBILITY_SECONDS} s)" in capsys.readouterr().err


def test_drain_all_skips_a_container_queue_naming_its_worker_command(
    deployed: AwsTarget, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a stack whose only queue container workers consume WHEN `drain --all` runs
    code = main(["drain", "--all", "--stack", STACK])
    # THEN it drains nothing and says how to run that queue's workers instead
    assert code == 0
    captured = capsys.readouterr()
    assert "skipped Workers/Builds" in captured.err
    assert "constructs-fifo worker --stack Workers --queue Workers/Builds" in captured.err
    assert json.loads(captured.out) == {}


@pytest.mark.usefixtures("patched_moto")
def test_a_stack_whose_queues_are_in_a_nested_stack_is_refused_naming_it() -> None:
    # GIVEN a parent stack holding only a nested stack (the CDK's NestedStack) whose template holds the queue
    s3 = boto3.client("s3", region_name=REGION)
    s3.create_bucket(Bucket="assets")
    s3.put_object(Bucket="assets", Key="inner.json", Body=json.dumps(_template()).encode())
    parent = {
        "Resources": {
            "InnerNestedStackInnerNestedStackResource745E041B": {
                "Type": "AWS::CloudFormation::Stack",
                "Metadata": {"aws:cdk:path": "Parent/Inner.NestedStack/Inner.NestedStackResource"},
                "Properties": {"TemplateURL": "https://assets.s3.amazonaws.com/inner.json"},
            }
        }
    }
    boto3.client("cloudformation", region_name=REGION).create_stack(
        StackName="Parent", TemplateBody=json.dumps(parent)
    )
    # WHEN a command looks for the parent's queues
    with pytest.raises(QueueNotFoundError) as raised:
        find_queues("Parent", target=AwsTarget(None, REGION))
    # THEN the refusal names the nested stack by its construct path, and the fix is a top-level stack
    assert "holds no queue of its own, and has nested stacks (Parent/Inner)" in str(raised.value)
    assert "emulator" not in str(raised.value)  # AWS, not an endpoint: no word about the emulator
    assert "top-level stack" in raised.value.fix
