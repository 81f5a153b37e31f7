"""A received SQS message in Lambda's record shape: what any caller of the batch seam passes.

Lambda's event source mapping and the container worker (:mod:`constructs_fifo.worker`) both turn
ReceiveMessage messages into the record Lambda gives a function (``eventSource`` ``aws:sqs``,
``eventSourceARN``, ``awsRegion``, ``md5OfBody``, message attributes in Lambda's camelCase). Pure
functions: no AWS calls.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["build_record"]


def _lambda_message_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for name, value in attributes.items():
        binary = value.get("BinaryValue")
        converted[name] = {
            "stringValue": value.get("StringValue"),
            "binaryValue": base64.b64encode(binary).decode() if isinstance(binary, bytes) else binary,
            "stringListValues": list(value.get("StringListValues", [])),
            "binaryListValues": [
                base64.b64encode(b).decode() if isinstance(b, bytes) else b
                for b in value.get("BinaryListValues", [])
            ],
            "dataType": value.get("DataType"),
        }
    return converted


def build_record(
    message: MessageTypeDef | Mapping[str, Any], *, queue_arn: str, region: str
) -> dict[str, Any]:
    """Turn one ReceiveMessage message into a Lambda SQS event record.

    Parameters
    ----------
    message:
        A message as ReceiveMessage returns it (with ``Attributes`` and ``MessageAttributes``).
    queue_arn:
        The queue's ARN (``eventSourceARN``).
    region:
        ``awsRegion``.
    """
    body = message["Body"]
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": body,
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": _lambda_message_attributes(message.get("MessageAttributes", {})),
        "md5OfBody": message.get("MD5OfBody") or hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }
    if message.get("MD5OfMessageAttributes"):
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record
