"""The receipt-handle path of a drain: delete what succeeded, release what was received but not run.

- :func:`delete`: DeleteMessageBatch, ten at a time, for the records a batch leaves no failure for. A
  delete SQS refuses (on a FIFO queue, a receipt handle whose visibility timeout ended during a long
  invocation: "The receipt handle has expired.") leaves the record, which is received again, as
  Lambda's does; each is counted and written as one JSON line ``{"event": "delete_refused", ...}``
  to the function log.
- :func:`release`: ChangeMessageVisibility 0, ten at a time, for records received as a drain stopped
  at once (or whose worker the stop killed), so the next drain takes them at once instead of after
  the visibility timeout. Best effort: they come back anyway.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence
from typing import IO, TYPE_CHECKING

from botocore.exceptions import BotoCoreError, ClientError

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = ["delete", "release"]


def release(sqs: SQSClient, queue_url: str, messages: Sequence[MessageTypeDef]) -> None:
    """Make received messages visible again at once (best effort: they come back anyway)."""
    for start in range(0, len(messages), SQS_MAX_BATCH_ENTRIES):
        entries = [
            {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"], "VisibilityTimeout": 0}
            for i, m in enumerate(messages[start : start + SQS_MAX_BATCH_ENTRIES])
        ]
        with contextlib.suppress(ClientError, BotoCoreError):
            sqs.change_message_visibility_batch(QueueUrl=queue_url, Entries=entries)  # type: ignore[arg-type]


def delete(
    sqs: SQSClient, queue_url: str, messages: Sequence[MessageTypeDef], log: IO[bytes]
) -> tuple[list[str], int]:
    """Delete ``messages``; return the message ids deleted and how many deletes SQS refused.

    Each refused delete is one line in ``log`` (the function log): the record stays on the queue.
    """
    deleted: list[str] = []
    failures = 0
    for start in range(0, len(messages), SQS_MAX_BATCH_ENTRIES):
        chunk = messages[start : start + SQS_MAX_BATCH_ENTRIES]
        entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)]
        try:
            response = sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries)  # type: ignore[arg-type]
        except ClientError as err:
            failures += len(chunk)
            error = err.response.get("Error", {})
            for message in chunk:
                _delete_refused(log, message, str(error.get("Code")), str(error.get("Message")))
            continue
        deleted.extend(chunk[int(ok["Id"])]["MessageId"] for ok in response.get("Successful", []))
        for failed in response.get("Failed", []):
            failures += 1
            _delete_refused(log, chunk[int(failed["Id"])], failed.get("Code", ""), failed.get("Message", ""))
    return deleted, failures


def _delete_refused(log: IO[bytes], message: MessageTypeDef, code: str, text: str) -> None:
    """One line in the function log: the record stays on the queue and is received again."""
    line = {
        "event": "delete_refused",
        "messageId": message["MessageId"],
        "group": message.get("Attributes", {}).get("MessageGroupId", ""),
        "error": f"{code}: {text}",
        "action": "the record stays on the queue and is received again, as with Lambda",
    }
    log.write(json.dumps(line).encode() + b"\n")
    log.flush()
