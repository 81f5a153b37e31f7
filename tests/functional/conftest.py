"""Fixtures of the runtime's functional tests: moto in-process with a claim table and a FIFO queue."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING

import boto3
import pytest
from moto import mock_aws

from benchmarks.workload import REGION as BENCH_REGION

from .runtime_harness import DLQ_NAME, QUEUE_NAME, REGION, Harness, create_tables

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("AWS_ENDPOINT_URL", "AWS_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", REGION)
    with mock_aws():
        yield


@pytest.fixture
def bench_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The benchmark's fake AWS environment, without moto: the benchmark starts its own moto or answers
    from memory. It fills these in with setdefault/pop; setting them here leaves no trace."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", BENCH_REGION)


@pytest.fixture
def dynamodb(aws: None) -> DynamoDBClient:
    client = boto3.client("dynamodb", region_name=REGION)
    create_tables(client)
    return client


@pytest.fixture
def sqs(aws: None) -> SQSClient:
    return boto3.client("sqs", region_name=REGION)


@pytest.fixture
def queue_url(sqs: SQSClient) -> str:
    return sqs.create_queue(
        QueueName=QUEUE_NAME,
        Attributes={"FifoQueue": "true", "VisibilityTimeout": "120"},
    )["QueueUrl"]


@pytest.fixture
def dlq_url(sqs: SQSClient) -> str:
    return sqs.create_queue(QueueName=DLQ_NAME, Attributes={"FifoQueue": "true"})["QueueUrl"]


@pytest.fixture
def harness(dynamodb: DynamoDBClient, sqs: SQSClient, queue_url: str, dlq_url: str) -> Harness:
    return Harness(dynamodb=dynamodb, sqs=sqs, queue_url=queue_url, dlq_url=dlq_url)


@pytest.fixture
def bare_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """No region, no credentials, no endpoint, no config files, no retries: a new user's shell."""
    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_PROFILE",
        "AWS_ENDPOINT_URL",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    monkeypatch.setattr(boto3, "DEFAULT_SESSION", None)  # it keeps the credentials an earlier test found
