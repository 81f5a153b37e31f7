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
- :func:`_send_message_batch` (:func:`_standard_entries_with_deduplication_id`): on a standard
  queue an entry with ``MessageDeduplicationId`` fails on its own; moto sent it;
- :func:`_create_queue`, :func:`_set_queue_attributes`: a standard queue given ``FifoQueue``, a
  FIFO-only attribute or a ``.fifo`` name is refused; moto created or changed it;
- :func:`_create_queue` (:func:`_refuse_a_different_existing_queue`): CreateQueue of an existing
  queue with a different attribute value names the attribute; moto said only "The specified queue
  already exists.";
- :func:`_set_queue_attributes` (:func:`_refuse_a_queue_type_change`): ``FifoQueue`` cannot be
  changed after creation; moto turned a FIFO queue into a standard one.
"""

from __future__ import annotations

from typing import Any, Final

from moto.sqs.exceptions import (
    InvalidAttributeName,
    InvalidParameterValue,
    QueueAlreadyExists,
    ReceiptHandleIsInvalid,
)
from moto.sqs.models import Queue, SQSBackend

from constructs_fifo.local.emulator.patches.registry import original, replace
from constructs_fifo.local.emulator.patches.sqs_models import NOT_FOR_THIS_QUEUE_TYPE, SQS_LOCK

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

_MAX_BATCH_ENTRIES: Final = 10  # API_SendMessageBatch: "up to 10 messages"; moto refuses more itself

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
    text; moto answered that for the batch too). On a standard queue the entries with
    ``MessageDeduplicationId`` fail one by one (:func:`_standard_entries_with_deduplication_id`).
    """
    queue = self.get_queue(queue_name)
    if queue.fifo_queue and any(not entry.get("MessageGroupId") for entry in entries.values()):
        raise InvalidParameterValue("The request must contain the parameter MessageGroupId.")
    refused = _standard_entries_with_deduplication_id(queue, entries)
    kept = {key: entry for key, entry in entries.items() if key not in refused}
    successful, failed = original(SQSBackend, "send_message_batch")(self, queue_name, kept)
    return successful, [*refused.values(), *failed]


def _standard_entries_with_deduplication_id(
    queue: Any, entries: dict[str, dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The failure of each standard-queue batch entry that carries ``MessageDeduplicationId``.

    AWS: API_SendMessageBatch (each entry succeeds or fails on its own: BatchResultErrorEntry,
    ``SenderFault``) and observed on AWS (suredone/qdone issue 55): entries failed with
    ``InvalidParameterValue``, "The request include parameter that is not valid for this queue
    type" (no "Value V for parameter P": SendMessage's text is longer). Which parameter those entries
    carried the issue does not say; a deduplication id on a standard queue is the one it can be
    (a group id is accepted: fair queues). moto 5.2.5 sent them. A batch moto refuses as a whole
    (over 10 entries, ids not distinct) is left to moto.
    """
    ids = [entry["Id"] for entry in entries.values()]
    if queue.fifo_queue or len(entries) > _MAX_BATCH_ENTRIES or len(set(ids)) != len(ids):
        return {}
    return {
        key: {
            "Id": entry["Id"],
            "SenderFault": True,
            "Code": "InvalidParameterValue",
            "Message": NOT_FOR_THIS_QUEUE_TYPE.rstrip("."),
        }
        for key, entry in entries.items()
        if entry.get("MessageDeduplicationId") is not None
    }


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
    _refuse_a_different_existing_queue(self, name, kwargs)
    return original(SQSBackend, "create_queue")(self, name, tags, **kwargs)


def _refuse_a_different_existing_queue(backend: Any, name: str, attributes: dict[str, Any]) -> None:
    """CreateQueue of an existing queue with a different value for an attribute it names.

    AWS: API_CreateQueue ("If you provide the name of an existing queue along with the exact names
    and values of all the queue's attributes, CreateQueue returns the queue URL"; QueueNameExists,
    "returned only if the request includes attributes whose values differ from those of the
    existing queue") and observed on AWS (freeCodeCamp/mail-for-good issue 159, JustSaying issues
    208 and 331): ``QueueAlreadyExists``, "A queue already exists with the same name and a different
    value for attribute DelaySeconds" (no final period). Only the attributes given are compared, as
    moto does; moto said "The specified queue already exists." for every one.
    """
    queue = backend.queues.get(name)
    if queue is None:
        return
    given = {key: value for key, value in attributes.items() if key != "region"}
    queue_class: Any = Queue  # moto's model class; mypy sees an abstract CloudFormationModel
    wanted = queue_class(name, region=backend.region_name, account_id=backend.account_id, **given).attributes
    existing = queue.attributes
    for key in given:
        if existing.get(key) != wanted.get(key):
            raise QueueAlreadyExists(
                f"A queue already exists with the same name and a different value for attribute {key}"
            )


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
    _refuse_a_queue_type_change(attributes)
    return original(SQSBackend, "set_queue_attributes")(self, queue_name, attributes)


def _refuse_a_queue_type_change(attributes: dict[str, Any]) -> None:
    """SetQueueAttributes refuses ``FifoQueue``: a queue's type is fixed at creation.

    AWS: API_CreateQueue (FifoQueue: "You can't change it for an existing queue"; "You can't change
    the queue type after you create it") and API_SetQueueAttributes (FifoQueue is not among its
    attributes). The answer, ``InvalidAttributeName`` "Unknown Attribute FifoQueue.", is AWS's for
    CreateQueue of a standard queue given FifoQueue (observed, aws-sdk-php issue 1331); for
    SetQueueAttributes it is inferred (LocalStack refuses it the same way), not observed. moto 5.2.5
    stored it: ``FifoQueue=false`` turned a FIFO queue into a standard one, its messages kept.
    """
    if "FifoQueue" in attributes:
        raise InvalidAttributeName("FifoQueue")


def patch() -> None:
    """Apply the request patches (item 11 of the package docstring)."""
    replace(SQSBackend, "delete_message", _delete_message)
    replace(SQSBackend, "delete_message_batch", _delete_message_batch)
    replace(SQSBackend, "send_message", _send_message)
    replace(SQSBackend, "send_message_batch", _send_message_batch)
    replace(SQSBackend, "create_queue", _create_queue)
    replace(SQSBackend, "set_queue_attributes", _set_queue_attributes)
