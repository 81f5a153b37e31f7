"""Fidelity patches of moto's SQS backend: what SQS refuses or ignores in a request (``moto/sqs/models.py``).

Each function replaces one ``SQSBackend`` method of moto 5.2.5, names the AWS page of the behaviour
and, where no page states it, the observation on AWS it restores (issue 14; facts.md):

- :func:`_delete_message`, :func:`_delete_message_batch`: on a FIFO queue, a receipt handle whose
  visibility timeout has ended is refused (``InvalidParameterValue``, "The receipt handle has
  expired."); moto deleted the message, even by a receipt handle of an earlier receive;
- :func:`_send_message`: a FIFO queue has no per-message delay, so ``DelaySeconds=0`` on a send does
  not override the queue's ``DelaySeconds``; moto delivered at once;
- :func:`_send_message_batch`: a FIFO batch entry without ``MessageGroupId`` fails the request with
  ``InvalidParameterValue``; moto answered ``MissingParameter`` (right for SendMessage only);
- :func:`_create_queue`, :func:`_set_queue_attributes`: a standard queue given ``FifoQueue``, a
  FIFO-only attribute or a ``.fifo`` name is refused; moto created or changed it.
"""

from __future__ import annotations

from typing import Any, Final

from moto.sqs.exceptions import InvalidAttributeName, InvalidParameterValue, ReceiptHandleIsInvalid
from moto.sqs.models import SQSBackend

from constructs_fifo.local.emulator.patches.registry import original, replace
from constructs_fifo.local.emulator.patches.sqs_models import SQS_LOCK

__all__ = ["EXPIRED_RECEIPT_MESSAGE", "FIFO_ONLY_ATTRIBUTES", "patch"]

EXPIRED_RECEIPT_MESSAGE: Final = "The receipt handle has expired."
"""AWS's text for a FIFO DeleteMessage whose receipt handle's visibility timeout ended (observed)."""

FIFO_ONLY_ATTRIBUTES: Final = (
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
)
"""Queue attributes a standard queue does not have (API_CreateQueue, "FIFO queue attributes")."""

_QUEUE_NAME_RULE: Final = (
    "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length"
)


def _delete_message(self: Any, queue_name: str, receipt_handle: str) -> None:
    """DeleteMessage; on a FIFO queue a receipt handle whose visibility timeout ended is refused.

    AWS: API_DeleteMessage ("you must provide the most recently received ReceiptHandle") and
    observed on AWS: on a FIFO queue, a receipt handle whose visibility timeout expired gives
    ``InvalidParameterValue``, "The receipt handle has expired.", and the message stays (Lambda's
    mapping then sees it again). A receipt handle of an earlier receive has expired too (the message
    was received again only after it became visible). A message already deleted is still accepted.
    """
    with SQS_LOCK:
        queue = self.get_queue(queue_name)
        if queue.fifo_queue and receipt_handle not in queue.deleted_messages:
            for message in queue._messages:
                if not message.had_receipt_handle(receipt_handle):
                    continue
                current = message.receipt_handle == receipt_handle
                if not current or not message.approximate_receive_count or message.visible:
                    raise InvalidParameterValue(EXPIRED_RECEIPT_MESSAGE)
                break
        original(SQSBackend, "delete_message")(self, queue_name, receipt_handle)


def _delete_message_batch(
    self: Any, queue_name: str, receipts: list[dict[str, Any]]
) -> tuple[list[str], list[dict[str, Any]]]:
    """DeleteMessageBatch: each entry as :func:`_delete_message`, a refused one reported in ``Failed``.

    AWS: API_DeleteMessageBatch (each entry succeeds or fails on its own, ``SenderFault`` with the
    error code). moto caught only ``ReceiptHandleIsInvalid``.
    """
    successful: list[str] = []
    failed: list[dict[str, Any]] = []
    for entry in receipts:
        try:
            self.delete_message(queue_name, entry["ReceiptHandle"])
            successful.append(entry["Id"])
        except ReceiptHandleIsInvalid:
            failed.append(
                {
                    "Id": entry["Id"],
                    "SenderFault": True,
                    "Code": "ReceiptHandleIsInvalid",
                    "Message": f'The input receipt handle "{entry["ReceiptHandle"]}" is not a valid '
                    "receipt handle.",
                }
            )
        except InvalidParameterValue as err:
            failed.append({"Id": entry["Id"], "SenderFault": True, "Code": err.code, "Message": err.message})
    return successful, failed


def _send_message(
    self: Any,
    queue_name: str,
    message_body: str,
    message_attributes: dict[str, Any] | None = None,
    delay_seconds: int | None = None,
    **kwargs: Any,
) -> Any:
    """SendMessage; on a FIFO queue ``DelaySeconds=0`` leaves the queue's delay in force.

    AWS: API_SendMessage (DelaySeconds: "FIFO queues don't support per-message delays, only
    per-queue delays") and observed on AWS: a send with ``DelaySeconds=0`` to a FIFO queue with
    ``DelaySeconds=N`` is received only after N seconds. moto took the 0 as the message's delay. A
    positive value is still refused, as before.
    """
    queue = self.get_queue(queue_name)
    if queue.fifo_queue and delay_seconds is not None and int(delay_seconds) <= 0:
        delay_seconds = None  # moto then applies the queue's DelaySeconds
    return original(SQSBackend, "send_message")(
        self, queue_name, message_body, message_attributes, delay_seconds, **kwargs
    )


def _send_message_batch(self: Any, queue_name: str, entries: dict[str, dict[str, Any]]) -> Any:
    """SendMessageBatch; a FIFO entry without ``MessageGroupId`` fails the whole request.

    AWS: API_SendMessageBatch and observed on AWS: ``InvalidParameterValue``, "The request must
    contain the parameter MessageGroupId." (SendMessage answers ``MissingParameter`` with the same
    text; moto answered that for the batch too).
    """
    queue = self.get_queue(queue_name)
    if queue.fifo_queue and any(not entry.get("MessageGroupId") for entry in entries.values()):
        raise InvalidParameterValue("The request must contain the parameter MessageGroupId.")
    return original(SQSBackend, "send_message_batch")(self, queue_name, entries)


def _create_queue(self: Any, name: str, tags: dict[str, str] | None = None, **kwargs: Any) -> Any:
    """CreateQueue; a standard queue given FIFO attributes or a ``.fifo`` name is refused.

    AWS: API_CreateQueue ("FIFO queue attributes" apply to FIFO queues only; "A FIFO queue name must
    end with the .fifo suffix", and FifoQueue "can be set only when you create a queue") and observed
    on AWS: ``FifoQueue`` (even ``false``) or ``ContentBasedDeduplication``, ``DeduplicationScope``,
    ``FifoThroughputLimit`` on a standard queue: ``InvalidAttributeName``; a ``.fifo`` name without
    ``FifoQueue=true``: ``InvalidParameterValue``. moto created a standard queue.
    """
    if str(kwargs.get("FifoQueue", "")).lower() != "true":
        for attribute in FIFO_ONLY_ATTRIBUTES:
            if attribute in kwargs:
                raise InvalidAttributeName(attribute)
        if name.endswith(".fifo"):
            raise InvalidParameterValue(_QUEUE_NAME_RULE)
    return original(SQSBackend, "create_queue")(self, name, tags, **kwargs)


def _set_queue_attributes(self: Any, queue_name: str, attributes: dict[str, Any]) -> Any:
    """SetQueueAttributes; FIFO attributes on a standard queue are refused.

    AWS: API_SetQueueAttributes (the FIFO attributes apply to FIFO queues only) and observed on AWS:
    ``InvalidAttributeName``. moto stored them.
    """
    queue = self.get_queue(queue_name)
    if not queue.fifo_queue:
        for attribute in FIFO_ONLY_ATTRIBUTES:
            if attribute in attributes:
                raise InvalidAttributeName(attribute)
    return original(SQSBackend, "set_queue_attributes")(self, queue_name, attributes)


def patch() -> None:
    """Apply the request patches (item 11 of the package docstring)."""
    replace(SQSBackend, "delete_message", _delete_message)
    replace(SQSBackend, "delete_message_batch", _delete_message_batch)
    replace(SQSBackend, "send_message", _send_message)
    replace(SQSBackend, "send_message_batch", _send_message_batch)
    replace(SQSBackend, "create_queue", _create_queue)
    replace(SQSBackend, "set_queue_attributes", _set_queue_attributes)
