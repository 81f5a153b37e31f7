"""Where the client's default AWS clients send, and what the environment's failures mean for its user.

Every client class (:class:`~constructs_fifo.client.producer.JobProducer`,
:class:`~constructs_fifo.client.outcomes.JobOutcomes`,
:class:`~constructs_fifo.client.state_reader.GroupStateReader`,
:class:`~constructs_fifo.client.parked.ParkedGroups`, :class:`~constructs_fifo.client.queue.QueueClient`)
builds its default boto3 clients here, so they all find the same region and fail the same way.

The default clients read ``AWS_REGION`` before boto3's own region (``AWS_DEFAULT_REGION``, the
profile's): ``constructs-fifo`` reads it first too and Lambda sets it, so the CLI and the client agree
on where a queue is, though boto3 alone (botocore 1.44) does not read it. A missing region, no
credentials or an unreachable endpoint become the client package's own errors
(:class:`~constructs_fifo.client.errors.ProducerEnvironmentError`), each with its fix, whichever class
met them.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

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

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.client.results import SendResult

__all__ = [
    "REGION_VARIABLE",
    "default_client",
    "default_s3_client",
    "default_sqs_client",
    "environment_error",
    "environment_errors",
]

#: Read by ``constructs-fifo`` before ``AWS_DEFAULT_REGION``, and set by Lambda; boto3 reads only the
#: latter (botocore 1.44), so the default clients read it here to agree with the CLI.
REGION_VARIABLE: Final = "AWS_REGION"


def default_client(service: str, who: str, *, argument: str) -> Any:
    """``boto3.client(service)`` in ``AWS_REGION`` when set, else boto3's region.

    Parameters
    ----------
    service:
        ``"sqs"``, ``"dynamodb"``, ``"cloudformation"``.
    who:
        The class that needs it, named in the error (``"JobOutcomes"``).
    argument:
        That class's parameter taking a client instead, named in the fix (``"dynamodb"``).

    Raises
    ------
    RegionNotSetError
        No region anywhere.
    """
    try:
        return boto3.client(service, region_name=os.environ.get(REGION_VARIABLE) or None)  # type: ignore[call-overload]
    except NoRegionError as exc:
        raise RegionNotSetError(
            f"{who} found no AWS region for its {service} client (none in region_name, AWS_REGION, "
            "AWS_DEFAULT_REGION or the profile). Fix: set AWS_REGION or AWS_DEFAULT_REGION (e.g. "
            f"us-east-1, the emulator's too), or pass {argument}=boto3.client({service!r}, region_name=...)."
        ) from exc


def default_sqs_client() -> SQSClient:
    """The producer's default SQS client (:func:`default_client`).

    Raises
    ------
    RegionNotSetError
        No region anywhere.
    """
    client: SQSClient = default_client("sqs", "JobProducer", argument="sqs_client")
    return client


def default_s3_client() -> Any:
    """The producer's and the outcome reader's S3 client for the payload bucket (:func:`default_client`),
    made only when a large body or result is met.

    Raises
    ------
    RegionNotSetError
        No region anywhere.
    """
    return default_client("s3", "JobProducer", argument="s3_client")


def environment_error(
    exc: BotoCoreError, failed: str, succeeded: list[SendResult] | None = None, *, target: str = ""
) -> ProducerEnvironmentError | None:
    """The client's error for a botocore error of the environment, or ``None`` for another kind.

    Parameters
    ----------
    exc:
        What botocore raised.
    failed:
        What did not happen, as the message's start: ``"job 'j-1' was not sent to URL"``.
    succeeded:
        A batch's jobs sent before it happened.
    target:
        Where the request went (a queue URL, a table), when the endpoint is not in the error.
    """
    if isinstance(
        exc, NoCredentialsError | PartialCredentialsError | ProfileNotFound | CredentialRetrievalError
    ):
        return CredentialsNotFoundError(
            f"{failed}: no usable AWS credentials ({type(exc).__name__}: {exc}). "
            "Fix: configure them (AWS_PROFILE, `aws configure`, or AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY); the local emulator takes any, e.g. AWS_ACCESS_KEY_ID=testing "
            "AWS_SECRET_ACCESS_KEY=testing.",
            succeeded,
        )
    if isinstance(exc, ConnectionError | HTTPClientError):
        endpoint = exc.kwargs.get("endpoint_url") or target
        return EndpointNotReachableError(
            f"{failed}: could not connect to {endpoint} ({type(exc).__name__}). "
            "Fix: check the network and the region; for the local emulator, start it "
            "(`constructs-fifo local serve`) and set AWS_ENDPOINT_URL to its URL.",
            succeeded,
        )
    return None


@contextmanager
def environment_errors(failed: str, *, target: str = "") -> Iterator[None]:
    """Turn botocore's errors of the environment met inside the block into :func:`environment_error`'s."""
    try:
        yield
    except BotoCoreError as exc:
        error = environment_error(exc, failed, target=target)
        if error is None:
            raise
        raise error from exc
