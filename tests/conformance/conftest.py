"""Fixtures of the conformance suite: one target (local emulator or, with ``--aws``, real AWS).

The emulator starts once per session on a free port. ``CONSTRUCTS_FIFO_CONFORMANCE_RAW=1`` serves
moto without the fidelity patches: the suite then shows which AWS behaviours moto 5.2.5 lacks
(that run is expected to fail; docs/emulator.md records its result).

Every queue and table gets a unique name (``cfconf-<run>-...``) and is deleted at teardown.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import boto3
import pytest
from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.local.emulator.server import LocalEmulator

from .support import RAW_ENV, FifoQueue, QueueFactory, Target, Timing

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


@pytest.fixture(scope="session")
def target(request: pytest.FixtureRequest) -> Iterator[Target]:
    run_id = uuid.uuid4().hex[:8]
    if request.config.getoption("--aws"):
        session = boto3.session.Session()
        try:
            session.client("sts").get_caller_identity()
        except (BotoCoreError, ClientError) as err:
            pytest.fail(
                f"--aws needs working default AWS credentials and a region ({err}); configure them "
                "(aws configure, AWS_PROFILE, AWS_REGION) or run without --aws to use the emulator.",
                pytrace=False,
            )
        yield Target(True, session, None, run_id)
        return
    with LocalEmulator(port=0, fidelity_patches=os.environ.get(RAW_ENV) != "1") as emu:
        session = boto3.session.Session(
            aws_access_key_id="testing", aws_secret_access_key="testing", region_name="us-east-1"
        )
        yield Target(False, session, emu.endpoint_url, run_id)


@pytest.fixture(scope="session")
def timing(target: Target) -> Timing:
    return (
        Timing(empty_wait=2, settle=6.0, purge_wait=61.0)
        if target.on_aws
        else Timing(empty_wait=0, settle=0.3)
    )


@pytest.fixture(scope="session")
def sqs(target: Target) -> SQSClient:
    client: SQSClient = target.client("sqs")
    return client


@pytest.fixture(scope="session")
def dynamodb(target: Target) -> DynamoDBClient:
    client: DynamoDBClient = target.client("dynamodb")
    return client


@pytest.fixture
def fifo_queue(target: Target, sqs: SQSClient, request: pytest.FixtureRequest) -> Iterator[QueueFactory]:
    """Factory: ``fifo_queue(name, **attributes)`` creates a FIFO queue deleted after the test."""
    created: list[str] = []

    def create(name: str, **attributes: str) -> FifoQueue:
        full = f"cfconf-{target.run_id}-{request.node.name[:20]}-{name}".replace("[", "-").replace("]", "")
        full = "".join(c if c.isalnum() or c in "-_" else "-" for c in full)[:75] + ".fifo"
        all_attributes: dict[str, Any] = {"FifoQueue": "true", **attributes}
        url = sqs.create_queue(QueueName=full, Attributes=all_attributes)["QueueUrl"]  # type: ignore[arg-type]
        created.append(url)
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        return FifoQueue(url, arn)

    yield create
    for url in created:
        with contextlib.suppress(sqs.exceptions.QueueDoesNotExist):  # the test may have deleted it
            sqs.delete_queue(QueueUrl=url)


@pytest.fixture
def table(target: Target, dynamodb: DynamoDBClient, request: pytest.FixtureRequest) -> Iterator[str]:
    """An on-demand table with partition key ``id`` (S), deleted after the test."""
    name = f"cfconf-{target.run_id}-{request.node.name[:40]}"
    name = "".join(c if c.isalnum() or c in "-_." else "-" for c in name)
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamodb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 2, "MaxAttempts": 60})
    yield name
    dynamodb.delete_table(TableName=name)
