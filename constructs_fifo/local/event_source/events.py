"""The shapes Lambda uses with SQS: the event it sends and the batch response it reads back.

:func:`build_event` turns ReceiveMessage messages into the SQS event Lambda gives a function
(``eventSource`` ``aws:sqs``, ``eventSourceARN``, ``awsRegion``, ``md5OfBody``...);
:func:`parse_batch_response` reads a response as Lambda does with ``ReportBatchItemFailures``.
Pure functions: no AWS calls.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.sqs_records import build_record

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["build_event", "build_record", "parse_batch_response"]


def build_event(
    messages: Sequence[MessageTypeDef | Mapping[str, Any]], *, queue_arn: str, region: str
) -> dict[str, Any]:
    """Return the Lambda SQS event ``{"Records": [...]}`` for a received batch."""
    return {"Records": [build_record(m, queue_arn=queue_arn, region=region) for m in messages]}


def parse_batch_response(result: Any, message_ids: Sequence[str]) -> tuple[set[str], str | None]:
    """Read a handler's response as Lambda reads it with ReportBatchItemFailures.

    Returns
    -------
    tuple[set[str], str | None]
        The message ids reported failed, and ``None``; or every id and the reason when the response
        is invalid (Lambda then treats the whole batch as failed).

    Notes
    -----
    ``None``, an empty dict or an empty ``batchItemFailures`` mean complete success. An item with a
    missing, empty or unknown ``itemIdentifier`` makes the whole batch fail.
    """
    if result is None or result in ({}, ""):
        return set(), None
    if not isinstance(result, dict):
        return set(message_ids), f"InvalidResponse: the response is a {type(result).__name__}, not an object"
    failures = result.get("batchItemFailures")
    if failures is None:
        return set(), None
    if not isinstance(failures, list):
        return set(message_ids), "InvalidResponse: batchItemFailures is not a list"
    failed: set[str] = set()
    known = set(message_ids)
    for item in failures:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or identifier not in known:
            return set(
                message_ids
            ), f"InvalidResponse: itemIdentifier {identifier!r} is not a record of the batch"
        failed.add(identifier)
    return failed, None
