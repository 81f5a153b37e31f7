"""Fidelity patches: make moto 5.2.5 behave like AWS where constructs-fifo depends on it.

This is the one module that changes moto. Every patch restores one documented AWS behaviour, names
the AWS page it comes from and is applied by :func:`apply`, which is idempotent and refuses any moto
version other than :data:`MOTO_VERSION` (the seams below are moto 5.2.5's private functions; on
another version they may have moved, and a silently half-applied patch is worse than none).
:func:`revert` undoes every patch (tests use it to compare with moto as shipped).

What is corrected (see ``docs/emulator.md`` for the table with observations):

1. Lambda event source mappings are inert: moto invoked the function (in Docker) from every
   SendMessage to a queue with a mapping. Mappings stay creatable and listable; nothing invokes.
2. FIFO receive: in-group order, no group with a message in flight, one group's messages first.
3. FIFO deduplication: 5 minutes from the first send, also after delete; ``DeduplicationScope``
   ``messageGroup``; a duplicate send succeeds with the original MessageId and delivers nothing.
4. SequenceNumber: 20 digits, increasing per queue.
5. Moves to a FIFO dead-letter queue bypass the DLQ's deduplication and keep the message as it was.
6. MessageGroupId / MessageDeduplicationId: 1 to 128 alphanumeric or punctuation characters.
7. ``StartMessageMoveTask`` / ``ListMessageMoveTasks`` (DLQ redrive), done synchronously.
8. CloudFormation: a FIFO queue without ``QueueName`` gets a ``.fifo`` name; ``RedriveAllowPolicy``
   is kept and returned; a table's ``TimeToLiveSpecification`` is applied; a stack created or
   updated by executing a change set (what ``cdk deploy`` does) has its ``Outputs``.
9. Speed (same behaviour): a cheap clock for message visibility and a send-path check that does not
   count the whole queue; moto 5.2.5 took O(n²) time to send n messages to one queue.

Examples
--------
>>> from constructs_fifo.local import fidelity
>>> fidelity.apply()  # doctest: +SKIP
>>> fidelity.is_applied()  # doctest: +SKIP
True
"""

from __future__ import annotations

import json
import string
import threading
import time
import uuid
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from importlib import metadata
from typing import Any

# moto is the optional "local" extra; these are the seams the patches replace (moto 5.2.5).
from moto.core.responses import ActionResult
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.table import Table
from moto.sqs.exceptions import InvalidParameterValue, MissingParameter, QueueDoesNotExist
from moto.sqs.models import Message, Queue, SQSBackend, _filter_message_attributes
from moto.sqs.responses import SQSResponse

__all__ = [
    "DEDUPLICATION_INTERVAL_SECONDS",
    "MAX_ID_LENGTH",
    "MOTO_VERSION",
    "FidelityError",
    "UnsupportedMotoVersionError",
    "apply",
    "is_applied",
    "revert",
]

MOTO_VERSION = "5.2.5"
"""The one moto version these patches were written and tested against."""

DEDUPLICATION_INTERVAL_SECONDS = 300
"""AWS: FIFO-key-terms, "the 5-minute deduplication interval"."""

MAX_ID_LENGTH = 128
"""AWS: quotas-messages, MessageGroupId and MessageDeduplicationId are at most 128 characters."""

_ID_CHARACTERS = frozenset(string.ascii_letters + string.digits + string.punctuation)

# One lock for every SQS state change the patches make. moto's server answers each request on its
# own thread and moto's own receive is not atomic: two concurrent receives could hand out the same
# group. A single lock is simple and far from the bottleneck of a local run.
_SQS_LOCK = threading.RLock()

# (owner, attribute name) -> original value, so revert() can put moto back as it was.
_ORIGINALS: dict[tuple[Any, str], Any] = {}
_ABSENT = object()  # marks an attribute the patches added (revert deletes it)


class FidelityError(Exception):
    """Base class of the errors of :mod:`constructs_fifo.local`."""


class UnsupportedMotoVersionError(FidelityError):
    """The installed moto is not the version the fidelity patches target."""


def is_applied() -> bool:
    """Return whether :func:`apply` has patched moto (and :func:`revert` has not undone it)."""
    return bool(_ORIGINALS)


def apply() -> None:
    """Patch moto so that it behaves like AWS where constructs-fifo depends on it.

    Idempotent: a second call does nothing.

    Raises
    ------
    UnsupportedMotoVersionError
        When the installed moto is not :data:`MOTO_VERSION`.
    """
    installed = _installed_moto_version()
    if installed != MOTO_VERSION:
        raise UnsupportedMotoVersionError(
            f"moto {installed} is installed, but the constructs-fifo fidelity patches target moto "
            f"{MOTO_VERSION} only (they replace private moto functions that change between versions). "
            f"Install the pinned version: pip install 'moto[server]=={MOTO_VERSION}' "
            "(or pip install 'constructs-fifo[local]')."
        )
    with _SQS_LOCK:
        if _ORIGINALS:
            return
        _patch_sqs()
        _patch_cloudformation()


def revert() -> None:
    """Undo every patch :func:`apply` made (state already in moto's backends stays)."""
    with _SQS_LOCK:
        for (owner, name), original in _ORIGINALS.items():
            if original is _ABSENT:
                delattr(owner, name)
            else:
                setattr(owner, name, original)
        _ORIGINALS.clear()


def _installed_moto_version() -> str:
    try:
        return metadata.version("moto")
    except metadata.PackageNotFoundError:
        return "(none)"


def _replace(owner: Any, name: str, replacement: Callable[..., Any] | Any) -> None:
    _ORIGINALS[(owner, name)] = owner.__dict__.get(name, _ABSENT)
    setattr(owner, name, replacement)


def _original(owner: Any, name: str) -> Any:
    return _ORIGINALS[(owner, name)]


# --------------------------------------------------------------------------------------------
# SQS
# --------------------------------------------------------------------------------------------


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
        state = {"dedup": {}, "sequence": 10**19 + int(time.time() * 1000) * 1000, "tasks": []}
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
    if not 1 <= len(value) <= MAX_ID_LENGTH or not set(value) <= _ID_CHARACTERS:
        shown = value if len(value) <= 40 else value[:40] + "..."
        raise InvalidParameterValue(
            f"Value {shown} for parameter {name} is invalid. Reason: {name} can only include "
            f"alphanumeric and punctuation characters. 1 to {MAX_ID_LENGTH} in length "
            f"(given {len(value)} characters)."
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
                "The request include parameter that is not valid for this queue type."
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
    with _SQS_LOCK:
        if self.fifo_queue:
            records = _live_dedup_records(self, message)
            key = _dedup_key(self, message)
            prior = records.get(key) if key is not None else None
            if prior is not None:
                # The caller (SendMessage) answers with the original MessageId and SequenceNumber.
                message.id = prior.message_id
                message.sequence_number = prior.sequence_number
                return
            message.sequence_number = _next_sequence_number(self)
            if key is not None:
                records[key] = _DedupRecord(_sent_ms(message), message.id, message.sequence_number)
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
    horizon = _sent_ms(message) - DEDUPLICATION_INTERVAL_SECONDS * 1000
    for key in [k for k, r in records.items() if r.sent_ms <= horizon]:
        del records[key]
    return records


def _dedup_key(queue: Any, message: Any) -> tuple[str | None, str] | None:
    # AWS: enable-high-throughput-fifo, DeduplicationScope=messageGroup makes the key
    # (MessageGroupId, MessageDeduplicationId). moto 5.2.5 ignored the scope.
    if message.deduplication_id is None:
        return None
    scope_group = getattr(queue, "deduplication_scope", "queue") == "messageGroup"
    return (message.group_id if scope_group else None, message.deduplication_id)


def _in_flight(message: Any, now_ms: float) -> bool:
    return bool(message.approximate_receive_count) and message.visible_at >= now_ms


def _move_to_dead_letter_queue(queue: Any, message: Any) -> None:
    """Move a message to the queue's DLQ as AWS does.

    AWS: sqs-dead-letter-queues. The message keeps its MessageId, body, attributes and
    MessageGroupId; the DLQ's deduplication does not apply to the move. moto 5.2.5 re-sent it
    through the DLQ's add_message, where FIFO deduplication could drop it.
    """
    dlq = queue.dead_letter_queue
    queue._messages.remove(message)
    queue.pending_messages.discard(message)
    message.visible_at = 0.0
    if dlq.fifo_queue:
        message.sequence_number = _next_sequence_number(dlq)
    with dlq._messages_lock:
        dlq._messages.append(message)
        dlq._messages_lock.notify_all()


def _select_fifo(
    backend: Any, queue: Any, count: int, visibility_timeout: int, names: list[str]
) -> list[Any]:
    """Pick up to ``count`` messages of a FIFO queue as AWS does.

    AWS: knowledge-center sqs-fifo-messages-not-returned and FIFO-key-terms. Messages of one group
    come in order; a group with a message in flight returns nothing until that message is deleted
    or visible again; a receive returns as many messages of one group as possible, then others.
    moto 5.2.5 skipped a group's first message while a later one of the same group was still
    marked pending, so m2 could be delivered before m1 after both became visible again.
    """
    now_ms = _now_ms()
    retention_ms = int(queue.message_retention_period) * 1000
    for message in [m for m in queue._messages if now_ms - (m.sent_timestamp or now_ms) > retention_ms]:
        queue._messages.remove(message)
        queue.pending_messages.discard(message)

    blocked: set[str | None] = {m.group_id for m in queue._messages if _in_flight(m, now_ms)}
    redrive = queue.redrive_policy if queue.dead_letter_queue is not None else None
    to_dead_letter: list[Any] = []
    by_group: dict[str | None, list[Any]] = {}
    for message in queue._messages:
        group = message.group_id
        if group in blocked:
            continue
        if message.delayed:
            blocked.add(group)
            continue
        if redrive and message.approximate_receive_count >= int(redrive["maxReceiveCount"]):
            to_dead_letter.append(message)
            continue
        by_group.setdefault(group, []).append(message)
    for message in to_dead_letter:
        _move_to_dead_letter_queue(queue, message)

    result: list[Any] = []
    for messages in by_group.values():  # groups ordered by their oldest deliverable message
        for message in messages:
            if len(result) >= count:
                return result
            queue.pending_messages.discard(message)
            message.mark_received(visibility_timeout=visibility_timeout)
            if _in_flight(message, _now_ms()):
                queue.pending_messages.add(message)
            copy = deepcopy(message)
            _filter_message_attributes(copy, names)
            result.append(copy)
    return result


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
        original = _original(SQSBackend, "receive_message")
        return list(
            original(
                self, queue_name, count, wait_seconds_timeout, visibility_timeout, message_attribute_names
            )
        )
    names = message_attribute_names or []
    deadline = time.monotonic() + int(wait_seconds_timeout or 0)
    while True:
        with _SQS_LOCK:
            result = _select_fifo(self, queue, int(count), int(visibility_timeout or 0), names)
        remaining = deadline - time.monotonic()
        if result or remaining <= 0:
            return result
        # Long polling: woken by a send; visibility expiry is checked at least every 0.2 s.
        with queue._messages_lock:
            queue._messages_lock.wait(timeout=min(0.2, remaining))


def _locked(owner: Any, name: str) -> Callable[..., Any]:
    original = owner.__dict__[name]

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with _SQS_LOCK:
            return original(*args, **kwargs)

    wrapper.__name__ = name
    wrapper.__doc__ = original.__doc__
    return wrapper


def _queue_attributes(self: Any) -> dict[str, Any]:
    # AWS: API_SetQueueAttributes, RedriveAllowPolicy is a queue attribute returned by
    # GetQueueAttributes. moto 5.2.5 stored it but never returned it.
    result: dict[str, Any] = _original(Queue, "attributes").fget(self)
    policy = self.__dict__.get("redrive_allow_policy")
    if policy:
        result["RedriveAllowPolicy"] = policy if isinstance(policy, str) else json.dumps(policy)
    return result


# --- StartMessageMoveTask: DLQ redrive -----------------------------------------------------------


def _start_message_move_task(
    self: Any, source_arn: str, destination_arn: str | None, max_per_second: int | None
) -> str:
    """Move every message of a dead-letter queue back, at once.

    AWS: API_StartMessageMoveTask. Moves messages from a DLQ to its source queue (or the given
    destination). Redriven messages get a new MessageId; FIFO keeps MessageGroupId. The emulator
    moves synchronously; ListMessageMoveTasks then reports the task COMPLETED. Not in moto 5.2.5.
    """
    source = _queue_by_arn(self, source_arn)
    if destination_arn is None:
        sources = [q for q in self.queues.values() if q.dead_letter_queue is source]
        if len(sources) != 1:
            raise InvalidParameterValue(
                f"Value {source_arn} for parameter SourceArn is invalid. Reason: without "
                f"DestinationArn the source must be the dead-letter queue of exactly one queue "
                f"(found {len(sources)}). Pass DestinationArn."
            )
        destination = sources[0]
    else:
        destination = _queue_by_arn(self, destination_arn)
    if destination.fifo_queue != source.fifo_queue:
        raise InvalidParameterValue(
            f"Value {destination.queue_arn} for parameter DestinationArn is invalid. Reason: source "
            "and destination must both be FIFO or both standard queues."
        )
    with _SQS_LOCK:
        moved = [m for m in source._messages if not _in_flight(m, _now_ms())]
        for message in moved:
            source._messages.remove(message)
            source.pending_messages.discard(message)
            message.id = str(uuid.uuid4())
            message.visible_at = 0.0
            message.approximate_receive_count = 0
            message.approximate_first_receive_timestamp = None
            if destination.fifo_queue:
                message.sequence_number = _next_sequence_number(destination)
            with destination._messages_lock:
                destination._messages.append(message)
                destination._messages_lock.notify_all()
        handle = str(uuid.uuid4())
        _queue_state(source)["tasks"].append(
            {
                "TaskHandle": handle,
                "Status": "COMPLETED",
                "SourceArn": source.queue_arn,
                "DestinationArn": destination.queue_arn,
                "MaxNumberOfMessagesPerSecond": max_per_second,
                "ApproximateNumberOfMessagesMoved": len(moved),
                "ApproximateNumberOfMessagesToMove": len(moved),
                "StartedTimestamp": int(time.time() * 1000),
            }
        )
    return handle


def _queue_by_arn(backend: Any, arn: str) -> Any:
    for queue in backend.queues.values():
        if queue.queue_arn == arn:
            return queue
    raise QueueDoesNotExist()


def _response_start_message_move_task(self: Any) -> Any:
    handle = _start_message_move_task(
        self.sqs_backend,
        self._get_param("SourceArn"),
        self._get_param("DestinationArn"),
        self._get_param("MaxNumberOfMessagesPerSecond"),
    )
    return ActionResult({"TaskHandle": handle})


def _response_list_message_move_tasks(self: Any) -> Any:
    source = _queue_by_arn(self.sqs_backend, self._get_param("SourceArn"))
    max_results = int(self._get_param("MaxResults") or 1)
    tasks = [
        {k: v for k, v in task.items() if k != "TaskHandle" and v is not None}
        for task in reversed(_queue_state(source)["tasks"])
    ]
    return ActionResult({"Results": tasks[:max_results]})


def _patch_sqs() -> None:
    _replace(Message, "visible", property(_message_visible))
    _replace(Message, "delayed", property(_message_delayed))
    _replace(Queue, "add_message", _add_message)
    _replace(Queue, "attributes", property(_queue_attributes))
    _replace(SQSBackend, "_validate_message", _validate_message)
    _replace(SQSBackend, "receive_message", _receive_message)
    for name in ("delete_message", "change_message_visibility", "purge_queue"):
        _replace(SQSBackend, name, _locked(SQSBackend, name))
    _replace(SQSResponse, "start_message_move_task", _response_start_message_move_task)
    _replace(SQSResponse, "list_message_move_tasks", _response_list_message_move_tasks)


# --------------------------------------------------------------------------------------------
# CloudFormation
# --------------------------------------------------------------------------------------------


def _queue_from_cloudformation(
    cls: Any,
    /,
    resource_name: str,
    cloudformation_json: Any,
    account_id: str,
    region_name: str,
    **kwargs: Any,
) -> Any:
    # AWS: aws-resource-sqs-queue, "If you don't specify a name, AWS CloudFormation generates a
    # unique physical ID"; a FIFO queue's generated name ends in .fifo. moto 5.2.5 generated a
    # name without the suffix and then rejected the FIFO queue.
    properties = cloudformation_json.get("Properties", {})
    fifo = str(properties.get("FifoQueue", "false")).lower() == "true"
    name = str(resource_name)
    if fifo and "QueueName" not in properties and not name.endswith(".fifo"):
        name = name[:75] + ".fifo"
    original = _original(cls, "create_from_cloudformation_json").__func__
    return original(cls, name, cloudformation_json, account_id, region_name, **kwargs)


def _table_from_cloudformation(
    cls: Any,
    /,
    resource_name: str,
    cloudformation_json: Any,
    account_id: str,
    region_name: str,
    **kwargs: Any,
) -> Any:
    # AWS: aws-resource-dynamodb-table, TimeToLiveSpecification. moto 5.2.5 ignored it, so
    # DescribeTimeToLive reported TTL disabled. (moto never expires items either way; the runtime
    # compares expiration times itself, as it must on AWS too.)
    original = _original(cls, "create_from_cloudformation_json").__func__
    table = original(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
    spec = cloudformation_json.get("Properties", {}).get("TimeToLiveSpecification")
    if spec and "AttributeName" in spec:
        enabled = str(spec.get("Enabled", "false")).lower() == "true"
        dynamodb_backends[account_id][region_name].update_time_to_live(
            table.name, {"Enabled": enabled, "AttributeName": spec["AttributeName"]}
        )
    return table


def _apply_change_set(self: Any) -> None:
    # AWS: API_DescribeStacks, "Outputs: A list of output structures", and
    # using-cfn-updating-stacks-changesets: executing a change set creates or updates the stack
    # from the change set's template, outputs included. moto 5.2.5's ChangeSet.apply updated the
    # resources only: the stack kept the output map built from the empty template of
    # CreateChangeSet (or the previous template on an update), so DescribeStacks had no Outputs
    # after `cdk deploy`. Rebuilt here as moto's own CreateStack and UpdateStack do.
    from moto.cloudformation.models import ChangeSet  # noqa: PLC0415 - loaded by apply() already

    _original(ChangeSet, "apply")(self)
    stack = self.stack
    stack.template_dict = self.template_dict
    stack.description = self.template_dict.get("Description")
    stack.output_map = stack._create_output_map()


def _patch_cloudformation() -> None:
    # Imported here, not at the top: moto.cloudformation loads most of moto's services (~2.5 s on
    # 2 cores), which a process importing this module without applying the patches should not pay.
    from moto.cloudformation.models import ChangeSet  # noqa: PLC0415

    _replace(Queue, "create_from_cloudformation_json", classmethod(_queue_from_cloudformation))
    _replace(Table, "create_from_cloudformation_json", classmethod(_table_from_cloudformation))
    _replace(ChangeSet, "apply", _apply_change_set)
