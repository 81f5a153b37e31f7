"""Where the producer's default client sends, and what the environment's failures mean for its user.

The default SQS client reads ``AWS_REGION`` before boto3's own region (``AWS_DEFAULT_REGION``, the
profile's): ``constructs-fifo`` reads it first too and Lambda sets it, so the CLI and the producer
agree on where a queue is, though boto3 alone (botocore 1.44) does not read it. A missing region, no
credentials or an unreachable endpoint become the client package's own errors
(:class:`~constructs_fifo.client.errors.ProducerEnvironmentError`), each with its fix.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Final

import boto3
from botocore.exceptions import (
    BotoCoreError,
    ConnectionError,
    CredentialRetrievalError,
    HTTPClientError,
    NoCredentialsError,
    NoRegionError,
    PartialCredentialsError,
    ProfileNotFound,
)

from constructs_fifo.client.errors import (
    CredentialsNotFoundError,
    EndpointNotReachableError,
    ProducerEnvironmentError,
    RegionNotSetError,
)
from constructs_fifo.client.results import SendResult

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = ["REGION_VARIABLE", "default_sqs_client", "environment_error"]

#: Read by ``constructs-fifo`` before ``AWS_DEFAULT_REGION``, and set by Lambda; boto3 reads only the
#: latter (botocore 1.44), so the default client reads it here to agree with the CLI.
REGION_VARIABLE: Final = "AWS_REGION"


def default_sqs_client() -> SQSClient:
    """``boto3.client("sqs")`` in ``AWS_REGION`` when set, else boto3's region.

    Raises
    ------
    RegionNotSetError
        No region anywhere.
    """
    try:
        return boto3.client("sqs", region_name=os.environ.get(REGION_VARIABLE) or None)
    except NoRegionError as exc:
        raise RegionNotSetError(
            "JobProducer found no AWS region for its SQS client (none in region_name, AWS_REGION, "
            "AWS_DEFAULT_REGION or the profile). Fix: set AWS_REGION or AWS_DEFAULT_REGION (e.g. "
            "us-east-1, the emulator's too), or pass sqs_client=boto3.client('sqs', region_name=...)."
        ) from exc


def environment_error(
    exc: BotoCoreError, what: str, queue_url: str, succeeded: list[SendResult] | None = None
) -> ProducerEnvironmentError | None:
    """The producer's error for a botocore error of the environment, or ``None`` for another kind."""
    if isinstance(
        exc, NoCredentialsError | PartialCredentialsError | ProfileNotFound | CredentialRetrievalError
    ):
        return CredentialsNotFoundError(
            f"{what} not sent to {queue_url}: no usable AWS credentials ({type(exc).__name__}: {exc}). "
            "Fix: configure them (AWS_PROFILE, `aws configure`, or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY); the local emulator takes any, e.g. AWS_ACCESS_KEY_ID=testing "
            "AWS_SECRET_ACCESS_KEY=testing.",
            succeeded,
        )
    if isinstance(exc, ConnectionError | HTTPClientError):
        endpoint = exc.kwargs.get("endpoint_url") or queue_url
        return EndpointNotReachableError(
            f"{what} not sent to {queue_url}: could not connect to {endpoint} ({type(exc).__name__}). "
            "Fix: check the network and the region; for the local emulator, start it "
            "(`constructs-fifo local serve`) and set AWS_ENDPOINT_URL to its URL.",
            succeeded,
        )
    return None
