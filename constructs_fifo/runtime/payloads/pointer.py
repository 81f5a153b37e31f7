"""Pointers to large bodies and results in the payload bucket (``large_payloads=True``).

The format is the AWS SQS Extended Client Library's (``amazon-sqs-extended-client`` on PyPI, the Java
``amazon-sqs-java-extended-client-lib``), so its producers and consumers interoperate with this queue:

* the message body is ``["software.amazon.payloadoffloading.PayloadS3Pointer", {"s3BucketName": B,
  "s3Key": K}]`` (the legacy class ``com.amazon.sqs.javamessaging.MessageS3Pointer`` is read too);
* the message attribute ``ExtendedPayloadSize`` (``Number``) holds the original body's size in bytes
  (``SQSLargePayloadSize``, the legacy name, is accepted on reading; neither is needed to resolve).

Of the library's options this follows: a body goes through S3 only when it exceeds SQS's limit (its
``always_through_s3`` off; the threshold is SQS's 1 MiB, the library's 256 KiB default predating it); the
key is a fresh ``uuid4``; the bucket is the one the construct creates. Results use no SQS message: a
SUCCEEDED claim stores a pointer body to its result's object in ``ATTR_RESULT_POINTER``.

Standard library only; S3 is a client passed in (``get_object``/``put_object``), the runtime's own made
only when a pointer is met, so a queue without the option pays nothing.
"""

from __future__ import annotations

import json
import uuid
from typing import Any, Final

__all__ = [
    "ATTR_RESULT_POINTER",
    "ENV_PAYLOAD_BUCKET",
    "LEGACY_POINTER_CLASS",
    "LEGACY_SIZE_ATTRIBUTE",
    "POINTER_CLASS",
    "SIZE_ATTRIBUTE",
    "MissingPayloadError",
    "PayloadPointer",
    "new_key",
    "parse_pointer",
    "pointer_body",
    "read_object",
    "size_attribute",
]

#: The variable naming the payload bucket in the consumer's and a client's environment.
ENV_PAYLOAD_BUCKET: Final = "CONSTRUCTS_FIFO_PAYLOAD_BUCKET"
#: On a SUCCEEDED claim whose return value went to the payload bucket: the pointer (a pointer body) to
#: its JSON there.
ATTR_RESULT_POINTER: Final = "result_pointer"
#: The Extended Client's pointer class (the first element of a pointer body).
POINTER_CLASS: Final = "software.amazon.payloadoffloading.PayloadS3Pointer"
#: The Java library's older class, still written by its ``use_legacy_attribute`` option.
LEGACY_POINTER_CLASS: Final = "com.amazon.sqs.javamessaging.MessageS3Pointer"
#: The message attribute holding the original body's size in bytes (``Number``).
SIZE_ATTRIBUTE: Final = "ExtendedPayloadSize"
LEGACY_SIZE_ATTRIBUTE: Final = "SQSLargePayloadSize"

PayloadPointer = tuple[str, str]
"""A pointer's ``(bucket, key)``."""


class MissingPayloadError(LookupError):
    """The object a pointer names is not in the bucket (expired, deleted, or another bucket)."""


def parse_pointer(raw: object) -> PayloadPointer | None:
    """The ``(bucket, key)`` of an Extended Client pointer body; ``None`` for any other body.

    Cheap on an envelope: a body not starting with ``[`` is never decoded here.

    >>> parse_pointer(pointer_body("b", "k"))
    ('b', 'k')
    >>> parse_pointer('{"jobId": "j1", "type": "t"}') is None
    True
    """
    if not isinstance(raw, str) or not raw.lstrip().startswith("["):
        return None
    try:
        decoded = json.loads(raw)
    except ValueError:
        return None
    if not (
        isinstance(decoded, list)
        and len(decoded) == 2
        and decoded[0] in (POINTER_CLASS, LEGACY_POINTER_CLASS)
    ):
        return None
    target = decoded[1]
    if not isinstance(target, dict):
        return None
    bucket, key = target.get("s3BucketName"), target.get("s3Key")
    if not isinstance(bucket, str) or not bucket or not isinstance(key, str) or not key:
        return None
    return bucket, key


def pointer_body(bucket: str, key: str) -> str:
    """The message body pointing at ``key`` in ``bucket``, as the Extended Client writes it."""
    return json.dumps([POINTER_CLASS, {"s3BucketName": bucket, "s3Key": key}])


def size_attribute(body_bytes: int) -> dict[str, dict[str, str]]:
    """The message attribute the Extended Client sends beside a pointer: the original body's size."""
    return {SIZE_ATTRIBUTE: {"DataType": "Number", "StringValue": str(body_bytes)}}


def new_key() -> str:
    """A fresh object key (the Extended Client's: a ``uuid4``)."""
    return str(uuid.uuid4())


def read_object(s3: Any, bucket: str, key: str) -> str:
    """The UTF-8 text of ``key`` in ``bucket``.

    Raises
    ------
    MissingPayloadError
        No such key or bucket (``NoSuchKey``/``NoSuchBucket``/404): its message says which, and why it
        may be gone.
    """
    try:
        response = s3.get_object(Bucket=bucket, Key=key)
    except Exception as exc:
        code = str(getattr(exc, "response", {}).get("Error", {}).get("Code", ""))
        if code in ("NoSuchKey", "NoSuchBucket", "404"):
            raise MissingPayloadError(
                f"s3://{bucket}/{key} is not there ({code}): the payload expired (the bucket keeps objects "
                "claim_ttl days), was deleted, or the pointer names another bucket"
            ) from None
        raise
    text: str = response["Body"].read().decode("utf-8")
    return text
