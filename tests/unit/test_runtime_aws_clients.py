"""The runtime's own boto3 clients (constructs_fifo.runtime.aws_clients)."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ParamValidationError

from constructs_fifo.runtime import aws_clients
from constructs_fifo.runtime.aws_clients import runtime_client
from constructs_fifo.runtime.constants import DeadJobPolicy
from constructs_fifo.runtime.entrypoint import build_processor
from constructs_fifo.runtime.settings.config import RuntimeConfig


@pytest.fixture(autouse=True)
def _fake_aws(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_DEFAULT_REGION", "eu-west-1")


def test_runtime_client_is_boto3s_client_for_the_service_in_boto3s_region_or_the_one_given() -> None:
    # given / when
    sqs = runtime_client("sqs")
    dynamodb = runtime_client("dynamodb", region_name="us-east-2")

    # then
    assert sqs.meta.service_model.service_name == "sqs"
    assert sqs.meta.region_name == "eu-west-1"
    assert dynamodb.meta.service_model.service_name == "dynamodb"
    assert dynamodb.meta.region_name == "us-east-2"


def test_boto3s_default_client_refuses_before_sending_what_the_runtime_client_sends() -> None:
    # given boto3's own client
    dynamodb = boto3.client("dynamodb")

    # when / then: botocore's client-side validation names the missing member
    with pytest.raises(ParamValidationError, match="Key"):
        dynamodb.get_item(TableName="claims")  # type: ignore[call-arg]  # the point: Key missing


def test_a_request_botocore_would_refuse_is_sent_for_the_service_to_judge() -> None:
    # given a runtime client whose requests are answered before the network
    dynamodb = runtime_client("dynamodb")
    sent: list[bytes] = []

    def answer(request: Any, **_: Any) -> None:
        sent.append(request.body)
        raise RuntimeError("answered")

    dynamodb.meta.events.register("before-send", answer)

    # when a request lacks a member the model requires (Key)
    with pytest.raises(RuntimeError, match="answered"):
        dynamodb.get_item(TableName="claims")

    # then it reached the wire, where DynamoDB's own validation refuses it
    assert len(sent) == 1
    assert b'"TableName": "claims"' in sent[0]


def test_build_processor_makes_its_missing_clients_with_runtime_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given
    asked: list[str] = []

    def recording(service: str, **kwargs: Any) -> Any:
        asked.append(service)
        return runtime_client(service, **kwargs)

    monkeypatch.setattr(aws_clients, "runtime_client", recording)

    # when
    config = RuntimeConfig(
        "claims", "https://sqs.eu-west-1.amazonaws.com/1/q.fifo", on_dead_job=DeadJobPolicy.CONTINUE
    )
    build_processor(config, job_handler=print)

    # then
    assert sorted(asked) == ["dynamodb", "sqs"]
