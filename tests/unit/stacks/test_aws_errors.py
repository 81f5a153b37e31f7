"""Botocore errors of the environment become one-line errors with a fix; others are left alone."""

from __future__ import annotations

import pytest
from botocore.exceptions import (
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    ProfileNotFound,
    ReadTimeoutError,
)

from constructs_fifo.stacks import extras
from constructs_fifo.stacks.aws_errors import explain_aws_error, explain_error_code
from constructs_fifo.stacks.errors import (
    AwsAccessDeniedError,
    AwsConnectionError,
    AwsCredentialsError,
    AwsThrottledError,
)


def _client_error(code: str, message: str, operation: str = "DescribeStacks") -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": message}}, operation)


@pytest.mark.parametrize("error", [NoCredentialsError(), ProfileNotFound(profile="prod")])
def test_missing_credentials_say_how_to_configure_them(error: Exception) -> None:
    explained = explain_aws_error(error, doing="drain", endpoint_url=None)
    assert isinstance(explained, AwsCredentialsError)
    assert explained.message.startswith("drain: no usable AWS credentials for AWS")
    assert "aws configure" in explained.fix
    assert "--endpoint-url" in explained.fix


def test_a_refused_local_endpoint_says_to_start_the_emulator_on_its_port() -> None:
    error = EndpointConnectionError(endpoint_url="http://localhost:4599/")
    explained = explain_aws_error(error, doing="deploy", endpoint_url="http://localhost:4599")
    assert isinstance(explained, AwsConnectionError)
    assert explained.one_line() == (
        "deploy: could not connect to http://localhost:4599/ (EndpointConnectionError). Fix: start the "
        "emulator there (`constructs-fifo local serve --port 4599`), or pass the --endpoint-url of a "
        "running one."
    )


def test_a_refused_local_endpoint_on_a_plain_install_names_the_extra_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN an installation without the 'local' extra (moto's server missing)
    monkeypatch.setattr(extras, "SERVER_PACKAGES", ("constructs_fifo_no_such_package",))
    # WHEN a local endpoint refuses the connection
    error = EndpointConnectionError(endpoint_url="http://localhost:4599/")
    explained = explain_aws_error(error, doing="drain", endpoint_url="http://localhost:4599")
    # THEN the fix installs the extra before serving (`local serve` alone would only ask for it)
    assert explained is not None
    assert explained.fix == (
        "start the emulator there (`pip install 'constructs-fifo[local]'`, then "
        "`constructs-fifo local serve --port 4599`), or pass the --endpoint-url of a running one"
    )


def test_a_remote_timeout_says_to_check_the_network() -> None:
    error = ReadTimeoutError(endpoint_url="https://sqs.eu-west-1.amazonaws.com/")
    explained = explain_aws_error(error, doing="drain", endpoint_url=None)
    assert isinstance(explained, AwsConnectionError)
    assert "https://sqs.eu-west-1.amazonaws.com/" in explained.message
    assert "check the network connection" in explained.fix


def test_throttling_names_the_call_and_how_to_retry_longer() -> None:
    error = _client_error("ThrottlingException", "Rate exceeded", "ListEventSourceMappings")
    explained = explain_aws_error(error, doing="drain", endpoint_url=None)
    assert isinstance(explained, AwsThrottledError)
    assert explained.message == (
        "drain: AWS throttled ListEventSourceMappings (ThrottlingException: Rate exceeded) after "
        "botocore's retries"
    )
    assert "AWS_MAX_ATTEMPTS" in explained.fix


def test_access_denied_names_the_call_it_denied() -> None:
    error = _client_error("AccessDenied", "User: arn:aws:iam::1:user/x is not authorized", "GetTemplate")
    explained = explain_aws_error(error, doing="demo", endpoint_url="http://localhost:4566")
    assert isinstance(explained, AwsAccessDeniedError)
    assert explained.message.startswith("demo: http://localhost:4566 denied GetTemplate to these credentials")
    assert "allowed GetTemplate" in explained.fix


def test_rejected_credentials_say_to_refresh_them() -> None:
    explained = explain_aws_error(_client_error("ExpiredToken", "expired"), doing="drain", endpoint_url=None)
    assert isinstance(explained, AwsCredentialsError)
    assert "aws sso login" in explained.fix


def test_other_errors_are_left_for_a_traceback() -> None:
    assert (
        explain_aws_error(_client_error("ValidationError", "bad"), doing="drain", endpoint_url=None) is None
    )
    assert explain_aws_error(ValueError("bug"), doing="drain", endpoint_url=None) is None


def test_a_batch_entrys_error_code_is_explained_the_same_way() -> None:
    explained = explain_error_code(
        "AccessDenied", "no", operation="SendMessageBatch", doing="demo", endpoint_url=None
    )
    assert isinstance(explained, AwsAccessDeniedError)
    assert (
        explain_error_code("InvalidParameterValue", "x", operation="Op", doing="demo", endpoint_url=None)
        is None
    )
