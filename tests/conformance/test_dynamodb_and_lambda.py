"""DynamoDB and Lambda behaviours constructs-fifo relies on; one test per behaviour, naming its page."""

from __future__ import annotations

import io
import json
import zipfile
from typing import TYPE_CHECKING

import pytest
from botocore.exceptions import ClientError

from .support import QueueFactory, Target, receive, send

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


def test_failed_conditional_put_returns_the_old_item(dynamodb: DynamoDBClient, table: str) -> None:
    """AWS: API_PutItem (ReturnValuesOnConditionCheckFailure=ALL_OLD returns the item that made the
    condition fail, in ConditionalCheckFailedException)."""
    # GIVEN a claim held by another owner
    held = {"id": {"S": "job-1"}, "status": {"S": "IN_FLIGHT"}, "owner": {"S": "worker-a"}}
    dynamodb.put_item(TableName=table, Item=held)
    # WHEN a second claim is attempted only if no item exists
    with pytest.raises(ClientError) as caught:
        dynamodb.put_item(
            TableName=table,
            Item={"id": {"S": "job-1"}, "status": {"S": "IN_FLIGHT"}, "owner": {"S": "worker-b"}},
            ConditionExpression="attribute_not_exists(id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    # THEN it fails with the old item attached, and the old item is unchanged
    assert caught.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert caught.value.response.get("Item") == held
    assert dynamodb.get_item(TableName=table, Key={"id": {"S": "job-1"}}, ConsistentRead=True)["Item"] == held


@pytest.mark.emulator_only
def test_an_event_source_mapping_never_acts_on_the_queue(
    target: Target, sqs: SQSClient, fifo_queue: QueueFactory
) -> None:
    """Emulator: the local drain runner is the event source mapping. moto 5.2.5 received the queue
    from every SendMessage to invoke the function in Docker, raising ApproximateReceiveCount."""
    # GIVEN a function and an event source mapping on a FIFO queue
    iam = target.client("iam")
    lambda_client = target.client("lambda")
    role = iam.create_role(RoleName=f"cfconf-{target.run_id}-esm", AssumeRolePolicyDocument="{}")["Role"][
        "Arn"
    ]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("worker.py", "def handle(event, context):\n    return {}\n")
    function = f"cfconf-{target.run_id}-esm"
    lambda_client.create_function(
        FunctionName=function,
        Runtime="python3.12",
        Role=role,
        Handler="worker.handle",
        Code={"ZipFile": archive.getvalue()},
    )
    queue = fifo_queue("esm")
    mapping = lambda_client.create_event_source_mapping(
        EventSourceArn=queue.arn,
        FunctionName=function,
        BatchSize=10,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    # WHEN three messages are sent
    for body in ["m0", "m1", "m2"]:
        send(sqs, queue, body, "g")
    # THEN each is received for the first time by us, and the mapping is still listed as deployed
    received = receive(sqs, queue)
    assert [(m["Body"], m["Attributes"]["ApproximateReceiveCount"]) for m in received] == [
        ("m0", "1"),
        ("m1", "1"),
        ("m2", "1"),
    ]
    listed = lambda_client.list_event_source_mappings(EventSourceArn=queue.arn)["EventSourceMappings"]
    assert [m["UUID"] for m in listed] == [mapping["UUID"]]
    assert listed[0]["BatchSize"] == 10
    lambda_client.delete_event_source_mapping(UUID=mapping["UUID"])
    lambda_client.delete_function(FunctionName=function)


@pytest.mark.emulator_only
def test_cloudformation_applies_fifo_name_ttl_and_redrive_allow_policy(target: Target) -> None:
    """AWS: aws-resource-sqs-queue (a FIFO queue without QueueName gets a generated .fifo name;
    RedriveAllowPolicy) and aws-resource-dynamodb-table (TimeToLiveSpecification).
    Emulator-only to keep --aws runs free of stacks; the deployed construct is tested end to end."""
    # GIVEN a template with an unnamed FIFO queue with a RedriveAllowPolicy and a table with TTL
    allow = {"redrivePermission": "byQueue", "sourceQueueArns": ["arn:aws:sqs:us-east-1:123456789012:s.fifo"]}
    template = {
        "Resources": {
            "Dlq": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"FifoQueue": True, "RedriveAllowPolicy": allow},
            },
            "Claims": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                    "BillingMode": "PAY_PER_REQUEST",
                    "TimeToLiveSpecification": {"AttributeName": "expiration", "Enabled": True},
                },
            },
        }
    }
    cloudformation = target.client("cloudformation")
    stack = f"cfconf-{target.run_id}-cfn"
    # WHEN the stack is created
    cloudformation.create_stack(StackName=stack, TemplateBody=json.dumps(template))
    resources = {
        r["LogicalResourceId"]: r["PhysicalResourceId"]
        for r in cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    }
    # THEN the queue's name ends in .fifo and keeps its RedriveAllowPolicy, and TTL is enabled
    sqs = target.client("sqs")
    queue_url = resources["Dlq"]
    assert queue_url.endswith(".fifo")
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["All"])["Attributes"]
    assert attributes["FifoQueue"] == "true"
    assert json.loads(attributes["RedriveAllowPolicy"]) == allow
    ttl = target.client("dynamodb").describe_time_to_live(TableName=resources["Claims"])
    assert ttl["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expiration"}
    cloudformation.delete_stack(StackName=stack)
