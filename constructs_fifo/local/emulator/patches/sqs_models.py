"""Fidelity patches of moto's SQS models: state and behaviour (``moto/sqs/models.py``).

Each function below replaces or adds one method of moto 5.2.5's ``Message``, ``Queue`` or
``SQSBackend`` and names the AWS page of the behaviour it restores. :func:`patch` applies them; the
package's :func:`~constructs_fifo.local.emulator.patches.apply` calls it.
"""

from __future__ import annotations

import json
import string
import threading
import time
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import Any, Final

# moto is the optional "local" extra; these are the seams the patches replace (moto 5.2.5).
from moto.sqs.exceptions import InvalidParameterValue, MissingParameter
from moto.sqs.models import Message, Queue, SQSBackend, _filter_message_attributes

from constructs_fifo.local.emulator import fifo_rule
from constructs_fifo.local.emulator.patches.registry import original, replace
from constructs_fifo.runtime.aws_limits import (
    SQS_DEDUPLICATION_INTERVAL_SECONDS,
    SQS_ID_PUNCTUATION,
    SQS_MAX_ID_LENGTH,
)

__all__ = [
    "NOT_FOR_THIS_QUEUE_TYPE",
    "SQS_LOCK",
    "dead_letter_source",
    "next_sequence_number",
    "patch",
]

_ID_CHARACTERS: Final = frozenset(string.ascii_letters + string.digits + SQS_ID_PUNCTUATION)

#: The attribute a message moved to a DLQ keeps its source queue's ARN in (AWS records it too: a
#: redrive without DestinationArn returns each message to "its respective original source queue").
_SOURCE_ARN: Final = "_constructs_fifo_source_arn"

#: One lock for every SQS state change the patches make. moto's server answers each request on its
#: own thread and moto's own receive is not atomic: two concurrent receives could hand out the same
#: group. A single lock is simple and far from the bottleneck of a local run.
SQS_LOCK: Final = threading.RLock()


@dataclass(frozen=True)
class _DedupRecord:
    sent_ms: float
    message_id: str
    sequence_number: str


def _queue_state(queue: Any) -> dict[str, Any]:
    """Per-queue state the patches keep on moto's Queue object (created on first use)."""
    state: dict[str, Any] | None = queue.__dict__.get("_constructs_fifo_state")
    if state is None:
        # AWS sequence numbers are 20 digits and grow; start from the clock so that a queue
        # recreated under the same name does not reuse numbers.
        state = {"dedup": {}, "sequence": 10**19 + int(time.time() * 1000) * 1000}
        queue.__dict__["_constructs_fifo_state"] = state
    return state


def _next_sequence_number(queue: Any) -> str:
    # AWS: API_SendMessage, "SequenceNumber ... The length of SequenceNumber is 128 bits" and
    # it "continues to increase for a particular MessageGroupId"; AWS shows 20 digits.
    state = _queue_state(queue)
    state["sequence"] += 1
    return f"{state['sequence']:020d}"


def _validate_id(name: str, value: str | None) -> None:
    # AWS: quotas-messages / API_SendMessage, MessageGroupId and MessageDeduplicationId: up to 128
    # characters, alphanumerics and punctuation. moto 5.2.5 accepts anything.
    if value is None:
        return
    if not 1 <= len(value) <= SQS_MAX_ID_LENGTH or not set(value) <= _ID_CHARACTERS:
        # AWS's text, observed: the whole value, no count of characters.
        raise InvalidParameterValue(
            f"Value {value} for parameter {name} is invalid. Reason: {name} can only include "
            f"alphanumeric and punctuation characters. 1 to {SQS_MAX_ID_LENGTH} in length."
        )


NOT_FOR_THIS_QUEUE_TYPE: Final = "The request include parameter that is not valid for this queue type."
"""AWS's reason for a parameter the queue's type does not take (per-message delay on FIFO, ...)."""


def _refuse_deduplication_id_on_standard(queue: Any, deduplication_id: str | None) -> None:
    """A standard queue refuses ``MessageDeduplicationId`` (it accepts ``MessageGroupId``: fair queues).

    AWS: API_SendMessage (MessageDeduplicationId "applies only to FIFO queues"; MessageGroupId on a
    standard queue "enables fair queues", using-messagegroupid-property) and observed on AWS
    (cdklabs/construct-hub issue 905): ``InvalidParameterValue``, "Value V for parameter
    MessageDeduplicationId is invalid. Reason: The request include parameter that is not valid for
    this queue type.". moto 5.2.5 accepted it.
    """
    if not queue.fifo_queue and deduplication_id is not None:
        raise InvalidParameterValue(
            f"Value {deduplication_id} for parameter MessageDeduplicationId is invalid. Reason: "
            + NOT_FOR_THIS_QUEUE_TYPE
        )


def _validate_message(  # noqa: PLR0917 - moto's positional signature
    self: Any,
    queue: Any,
    message_body: str,
    delay_seconds: int,
    deduplication_id: str | None = None,
    group_id: str | None = None,
    validate_group_id: bool = True,
) -> None:
    """moto's SendMessage checks plus the id rules; reads queue fields, not ``queue.attributes``.

    moto's own version reads ``queue.attributes`` twice per message, which counts every message of
    the queue with a 20 µs clock call each: sending n messages cost O(n²) (500 sends: ~40 s).
    """
    _validate_id("MessageGroupId", group_id)
    _validate_id("MessageDeduplicationId", deduplication_id)
    _refuse_deduplication_id_on_standard(queue, deduplication_id)
    if queue.fifo_queue:
        content_based = bool(queue.content_based_deduplication)
        if not group_id:
            raise MissingParameter("MessageGroupId")
        if not content_based and not deduplication_id:
            raise InvalidParameterValue(
                "The queue should either have ContentBasedDeduplication enabled or "
                "MessageDeduplicationId provided explicitly"
            )
        if delay_seconds > 0:
            raise InvalidParameterValue(
                f"Value {delay_seconds} for parameter DelaySeconds is invalid. Reason: "
                + NOT_FOR_THIS_QUEUE_TYPE
            )
    if len(message_body) > queue.maximum_message_size:
        raise InvalidParameterValue(
            "One or more parameters are invalid. Reason: Message must be shorter than "
            f"{queue.maximum_message_size} bytes."
        )


def _now_ms() -> float:
    return time.time() * 1000


def _message_visible(self: Any) -> bool:
    # Same rule as moto (visible once the clock passes visible_at), with a cheap clock: moto's
    # unix_time_millis() builds datetimes (~20 µs) and runs once per message per receive/count.
    return bool(_now_ms() > self.visible_at)


def _message_delayed(self: Any) -> bool:
    return bool(_now_ms() < self.delayed_until)


def _add_message(self: Any, message: Any) -> None:
    """Queue.add_message without moto's event source mapping invocations, with AWS deduplication.

    moto 5.2.5 invokes the mapped Lambda function (in Docker) from every SendMessage, raising
    ApproximateReceiveCount even when the invoke fails. constructs-fifo's local drain runner is the
    event source mapping, so the emulator never acts on mappings (AWS: a mapping is a poller
    outside SQS; SendMessage itself never invokes anything).
    """
    with SQS_LOCK:
        if self.fifo_queue:
            records = _live_dedup_records(self, message)
            keys = _dedup_keys(self, message)
            prior = next((records[k] for k in keys if k in records), None)
            if prior is not None:
                # The caller (SendMessage) answers with the original MessageId and SequenceNumber.
                message.id = prior.message_id
                message.sequence_number = prior.sequence_number
                return
            message.sequence_number = _next_sequence_number(self)
            if keys:
                records[keys[0]] = _DedupRecord(_sent_ms(message), message.id, message.sequence_number)
        with self._messages_lock:
            self._messages.append(message)
            self._messages_lock.notify_all()


def _sent_ms(message: Any) -> float:
    return float(message.sent_timestamp or time.time() * 1000)


def _live_dedup_records(queue: Any, message: Any) -> dict[tuple[str | None, str], _DedupRecord]:
    """The queue's deduplication records younger than the deduplication interval.

    AWS: FIFO-key-terms / using-messagededuplicationid-property. A deduplication id is remembered
    for 5 minutes after the send that used it, even if that message was received and deleted.
    A duplicate send is accepted (success, with the original MessageId) but not delivered.
    moto 5.2.5 compared only against messages still in the queue and returned a new MessageId.
    """
    records: dict[tuple[str | None, str], _DedupRecord] = _queue_state(queue)["dedup"]
    horizon = _sent_ms(message) - SQS_DEDUPLICATION_INTERVAL_SECONDS * 1000
    for key in [k for k, r in records.items() if r.sent_ms <= horizon]:
        del records[key]
    return records


def _dedup_keys(queue: Any, message: Any) -> list[tuple[str | None, str]]:
    """The deduplication records a send is checked against; the first is the one it records.

    AWS: enable-high-throughput-fifo, DeduplicationScope=messageGroup makes the key
    (MessageGroupId, MessageDeduplicationId); moto 5.2.5 ignored the scope. Observed on AWS: a queue
    switched from scope ``queue`` to ``messageGroup`` goes on deduplicating an id it saw before the
    switch in every group (within the 5 minutes), so a send under ``messageGroup`` is also checked
    against the queue-wide record. The other way (``messageGroup`` to ``queue``) is not observed;
    ids recorded per group are then not checked across groups.
    """
    if message.deduplication_id is None:
        return []
    queue_wide = (None, message.deduplication_id)
    if getattr(queue, "deduplication_scope", "queue") == "messageGroup":
        return [(message.group_id, message.deduplication_id), queue_wide]
    return [queue_wide]


def _purge_queue(self: Any, queue_name: str) -> None:
    """PurgeQueue, which also forgets the queue's deduplication ids.

    AWS: API_PurgeQueue, and observed on AWS: after a purge, a resend with a deduplication id sent
    before it is delivered. moto 5.2.5 gets this right (its deduplication looks only at messages in
    the queue); the emulator's own deduplication records (:func:`_live_dedup_records`) kept the ids,
    and dropped the resend: a regression of these patches, fixed here.
    """
    with SQS_LOCK:
        original(SQSBackend, "purge_queue")(self, queue_name)
        _queue_state(self.get_queue(queue_name))["dedup"].clear()


def _in_flight(message: Any, now_ms: float) -> bool:
    return bool(message.approximate_receive_count) and message.visible_at >= now_ms


def _move_to_dead_letter_queue(queue: Any, message: Any) -> None:
    """Move a message to the queue's DLQ as AWS does.

    AWS: sqs-dead-letter-queues. The message keeps its MessageId, body, attributes and
    MessageGroupId; the DLQ's deduplication does not apply to the move. moto 5.2.5 re-sent it
    through the DLQ's add_message, where FIFO deduplication could drop it. The message remembers its
    source queue (:func:`dead_letter_source`), for a redrive without DestinationArn
    (:mod:`.sqs_move_tasks`).
    """
    dlq = queue.dead_letter_queue
    message.__dict__[_SOURCE_ARN] = queue.queue_arn  # where a redrive without destination returns it
    queue._messages.remove(message)
    queue.pending_messages.discard(message)
    message.visible_at = 0.0
    if dlq.fifo_queue:
        message.sequence_number = _next_sequence_number(dlq)
    with dlq._messages_lock:
        dlq._messages.append(message)
        dlq._messages_lock.notify_all()


def next_sequence_number(queue: Any) -> str:
    """The next SequenceNumber of a FIFO queue (20 digits, increasing), for a message put into it."""
    return _next_sequence_number(queue)


def dead_letter_source(message: Any) -> str | None:
    """The ARN of the queue whose redrive policy moved ``message`` to a DLQ (``None``: sent there)."""
    source: str | None = message.__dict__.get(_SOURCE_ARN)
    return source


def _select_fifo(
    backend: Any, queue: Any, count: int, visibility_timeout: int, names: list[str]
) -> list[Any]:
    """Pick up to ``count`` messages of a FIFO queue as AWS does: the project's one FIFO rule.

    AWS: FIFO-key-terms, knowledge-center sqs-fifo-messages-not-returned and the observations of
    :mod:`constructs_fifo.local.emulator.fifo_rule`, which states the rule (a group served from its
    front while its messages are visible, up to the first in flight; one group's messages first;
    groups in the order they last became available) and decides here. moto 5.2.5 skipped a group's
    first message while a later one of the same group was still marked pending, so m2 could be
    delivered before m1 after both became visible again, and ordered groups by their oldest message.
    """
    now_ms = _now_ms()
    retention_ms = int(queue.message_retention_period) * 1000
    for message in [m for m in queue._messages if now_ms - (m.sent_timestamp or now_ms) > retention_ms]:
        queue._messages.remove(message)
        queue.pending_messages.discard(message)

    messages = list(queue._messages)
    redrive = queue.redrive_policy if queue.dead_letter_queue is not None else None
    selection = fifo_rule.select(
        [_queued(m) for m in messages],
        now_ms=now_ms,
        count=count,
        max_receive_count=int(redrive["maxReceiveCount"]) if redrive else None,
    )
    for index in selection.dead_letter:
        _move_to_dead_letter_queue(queue, messages[index])

    result: list[Any] = []
    for index in selection.receive:
        message = messages[index]
        queue.pending_messages.discard(message)
        message.mark_received(visibility_timeout=visibility_timeout)
        # moto leaves visible_at alone for a timeout of 0; the FIFO rule ranks the group by the
        # time it becomes available again, which is now.
        message.visible_at = _now_ms() + visibility_timeout * 1000
        if _in_flight(message, _now_ms()):
            queue.pending_messages.add(message)
        copy = deepcopy(message)
        _filter_message_attributes(copy, names)
        result.append(copy)
    return result


def _queued(message: Any) -> fifo_rule.QueuedMessage:
    """What the FIFO rule needs of one moto message (see :class:`fifo_rule.QueuedMessage`)."""
    received = bool(message.approximate_receive_count)
    available_ms = (
        float(message.visible_at)
        if received
        else max(float(message.sent_timestamp or 0), float(message.delayed_until or 0))
    )
    return fifo_rule.QueuedMessage(
        message.group_id, available_ms, received, int(message.approximate_receive_count)
    )


def _receive_message(  # noqa: PLR0917 - moto's positional signature
    self: Any,
    queue_name: str,
    count: int,
    wait_seconds_timeout: int,
    visibility_timeout: int,
    message_attribute_names: list[str] | None = None,
) -> list[Any]:
    queue = self.get_queue(queue_name)
    if not queue.fifo_queue:
        moto_receive = original(SQSBackend, "receive_message")
        return list(
            moto_receive(
                self, queue_name, count, wait_seconds_timeout, visibility_timeout, message_attribute_names
            )
        )
    names = message_attribute_names or []
    deadline = time.monotonic() + int(wait_seconds_timeout or 0)
    while True:
        with SQS_LOCK:
            result = _select_fifo(self, queue, int(count), int(visibility_timeout or 0), names)
        remaining = deadline - time.monotonic()
        if result or remaining <= 0:
            return result
        # Long polling: woken by a send; visibility expiry is checked at least every 0.2 s.
        with queue._messages_lock:
            queue._messages_lock.wait(timeout=min(0.2, remaining))


def _locked(owner: Any, name: str) -> Callable[..., Any]:
    unlocked = owner.__dict__[name]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with SQS_LOCK:
            return unlocked(*args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = unlocked.__doc__
    return wrapper


def _queue_attributes(self: Any) -> dict[str, Any]:
    # AWS: API_SetQueueAttributes, RedriveAllowPolicy is a queue attribute returned by
    # GetQueueAttributes. moto 5.2.5 stored it but never returned it.
    result: dict[str, Any] = original(Queue, "attributes").fget(self)
    policy = self.__dict__.get("redrive_allow_policy")
    if policy:
        result["RedriveAllowPolicy"] = policy if isinstance(policy, str) else json.dumps(policy)
    return result


def patch() -> None:
    """Apply the SQS model patches (see the package docstring, items 1 to 6 and 9)."""
    replace(Message, "visible", property(_message_visible))
    replace(Message, "delayed", property(_message_delayed))
    replace(Queue, "add_message", _add_message)
    replace(Queue, "attributes", property(_queue_attributes))
    replace(SQSBackend, "_validate_message", _validate_message)
    replace(SQSBackend, "receive_message", _receive_message)
    replace(SQSBackend, "change_message_visibility", _locked(SQSBackend, "change_message_visibility"))
    replace(SQSBackend, "purge_queue", _purge_queue)
