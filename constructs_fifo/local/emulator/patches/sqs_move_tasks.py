"""Fidelity patches: SQS message move tasks (dead-letter queue redrive) as AWS runs them.

moto 5.2.5 has no ``StartMessageMoveTask``, ``ListMessageMoveTasks`` or ``CancelMessageMoveTask``
(HTTP 500). These backend methods add them to ``SQSBackend``; :mod:`.sqs_responses` parses the
requests. Each function below names the AWS page of the behaviour it gives:

* a task runs in the background and moves at most ``MaxNumberOfMessagesPerSecond`` messages a second
  (1 to 500; without it AWS picks a rate from the backlog, the emulator takes the maximum, 500),
  oldest first, the first at once (:func:`_run`);
* it reports ``ApproximateNumberOfMessagesMoved``, ``ApproximateNumberOfMessagesToMove`` (the DLQ's
  visible messages when the task started) and ``Status``: ``RUNNING``, ``COMPLETED``, ``CANCELLING``,
  ``CANCELLED`` or ``FAILED`` with a ``FailureReason`` (:func:`_list_message_move_tasks`);
* ``CancelMessageMoveTask`` stops a ``RUNNING`` task midway (what moved stays moved) and returns
  ``ApproximateNumberOfMessagesMoved`` (:func:`_cancel_message_move_task`);
* without ``DestinationArn`` each message returns to its own source queue, recorded when the
  source's redrive policy moved it to the DLQ (:func:`~.sqs_models.dead_letter_source`), so a DLQ
  shared by several queues is split among them (:func:`_destination_of`);
* a source that is no queue's DLQ is refused, one task may be active per source queue, and a
  destination deleted mid-task fails the task (:func:`_start_message_move_task`, :func:`_run`);
* the task handle is what AWS returns: base64 of ``{"taskId": <uuid>, "sourceArn": <arn>}``
  (:func:`encode_task_handle`);
* a redriven message is a new message: new MessageId, receive count 0, appended behind whatever the
  destination already holds, so it interleaves with new traffic (:func:`_move_one`).

Error codes and texts are AWS's as recorded against AWS by LocalStack's validated move-task tests.
Not modelled: a message sent straight to a DLQ (not moved there by a redrive policy) has no source;
without ``DestinationArn`` the emulator returns it to the DLQ's only source queue and fails the task
when the DLQ has several (what AWS does then is not documented).
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Final

from moto.sqs.exceptions import InvalidParameterValue, SQSException
from moto.sqs.models import SQSBackend

from constructs_fifo.local.emulator.patches.registry import replace
from constructs_fifo.local.emulator.patches.sqs_models import (
    SQS_LOCK,
    dead_letter_source,
    next_sequence_number,
)
from constructs_fifo.runtime.aws_limits import (
    SQS_MAX_LIST_MOVE_TASKS_RESULTS,
    SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND,
)

__all__ = [
    "DEFAULT_MESSAGES_PER_SECOND",
    "decode_task_handle",
    "encode_task_handle",
    "patch",
]

#: The emulator's rate when a task gives none (AWS then "will optimize the rate based on the queue
#: message backlog size"): the most AWS allows.
DEFAULT_MESSAGES_PER_SECOND: Final = SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND

#: AWS: API_ListMessageMoveTasksResultEntry, Status "RUNNING, COMPLETED, CANCELLING, CANCELLED, and FAILED".
RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED = (
    "RUNNING",
    "COMPLETED",
    "CANCELLING",
    "CANCELLED",
    "FAILED",
)
_ACTIVE: Final = (RUNNING, CANCELLING)
#: AWS's FailureReason of a task whose destination queue was deleted (LocalStack's recording).
_NON_EXISTENT_QUEUE: Final = "AWS.SimpleQueueService.NonExistentQueue"
_NO_SOURCE: Final = "The resource that you specified for the SourceArn parameter doesn't exist."
_TASKS: Final = "_constructs_fifo_move_tasks"  # a source queue's tasks, oldest first, on moto's Queue


class ResourceNotFound(SQSException):
    """AWS's ``ResourceNotFoundException`` (HTTP 404), which moto 5.2.5's SQS does not define."""

    def __init__(self, message: str) -> None:
        super().__init__("ResourceNotFoundException", message)


@dataclass
class _Task:
    """One move task; mutated by its thread under ``SQS_LOCK``."""

    task_id: str
    source: Any  # moto Queue (the DLQ)
    destination_arn: str | None
    rate: int | None
    to_move: int
    started_ms: int
    status: str = RUNNING
    moved: int = 0
    failure_reason: str | None = None
    cancel: threading.Event = field(default_factory=threading.Event)

    @property
    def handle(self) -> str:
        return encode_task_handle(self.task_id, self.source.queue_arn)

    def entry(self) -> dict[str, Any]:
        """The task as ListMessageMoveTasks returns it (absent fields: AWS leaves them out)."""
        result: dict[str, Any] = {
            "ApproximateNumberOfMessagesMoved": self.moved,
            "ApproximateNumberOfMessagesToMove": self.to_move,
            "DestinationArn": self.destination_arn,
            "FailureReason": self.failure_reason if self.status == FAILED else None,
            "MaxNumberOfMessagesPerSecond": self.rate,
            "SourceArn": self.source.queue_arn,
            "StartedTimestamp": self.started_ms,
            "Status": self.status,
            # AWS: API_ListMessageMoveTasksResultEntry, TaskHandle "is only populated when the task
            # status is RUNNING".
            "TaskHandle": self.handle if self.status == RUNNING else None,
        }
        return {key: value for key, value in result.items() if value is not None}


def encode_task_handle(task_id: str, source_arn: str) -> str:
    """AWS's task handle: base64 of the compact JSON ``{"taskId": ..., "sourceArn": ...}``.

    Examples
    --------
    >>> decode_task_handle(encode_task_handle("t-1", "arn:aws:sqs:us-east-1:1:d.fifo"))
    ('t-1', 'arn:aws:sqs:us-east-1:1:d.fifo')
    """
    document = json.dumps({"taskId": task_id, "sourceArn": source_arn}, separators=(",", ":"))
    return base64.b64encode(document.encode()).decode()


def decode_task_handle(handle: str) -> tuple[str, str]:
    """The (task id, source ARN) of a task handle.

    Raises
    ------
    InvalidParameterValue
        Not a handle AWS would have returned ("Value for parameter TaskHandle is invalid.").
    """
    try:
        document = json.loads(base64.b64decode(handle.encode(), validate=True))
        task_id, source_arn = document["taskId"], document["sourceArn"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise InvalidParameterValue("Value for parameter TaskHandle is invalid.") from None
    if not isinstance(task_id, str) or not isinstance(source_arn, str):
        raise InvalidParameterValue("Value for parameter TaskHandle is invalid.")
    return task_id, source_arn


def _queue_by_arn(backend: Any, arn: str | None) -> Any | None:
    for queue in list(backend.queues.values()):
        if queue.queue_arn == arn:
            return queue
    return None


def _tasks(queue: Any) -> list[_Task]:
    tasks: list[_Task] = queue.__dict__.setdefault(_TASKS, [])
    return tasks


def _start_message_move_task(
    self: Any, source_arn: str, destination_arn: str | None, max_per_second: int | None
) -> str:
    """Start a task moving a DLQ's messages; return its handle. Not in moto 5.2.5.

    AWS: API_StartMessageMoveTask. "Starts an asynchronous task": the messages move on the task's
    thread (:func:`_run`). Only a DLQ of other SQS queues may be the source ("Source queue must be
    configured as a Dead Letter Queue."); "Only one active message movement task is supported per
    queue at any given time"; source and destination are both FIFO or both standard
    (sqs-configure-dead-letter-queue-redrive).
    """
    with SQS_LOCK:
        source = _queue_by_arn(self, source_arn)
        if source is None:
            raise ResourceNotFound(_NO_SOURCE)
        if not [queue for queue in list(self.queues.values()) if queue.dead_letter_queue is source]:
            raise InvalidParameterValue("Source queue must be configured as a Dead Letter Queue.")
        if destination_arn is not None:
            destination = _queue_by_arn(self, destination_arn)
            if destination is None:
                raise ResourceNotFound(
                    "The resource that you specified for the DestinationArn parameter doesn't exist."
                )
            if destination.fifo_queue != source.fifo_queue:
                raise InvalidParameterValue(
                    f"Value {destination_arn} for parameter DestinationArn is invalid. Reason: source "
                    "and destination must both be FIFO or both standard queues."
                )
        rate = None if max_per_second is None else int(max_per_second)
        if rate is not None and not 1 <= rate <= SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND:
            raise InvalidParameterValue(
                f"Value {rate} for parameter MaxNumberOfMessagesPerSecond is invalid. Reason: it must "
                f"be between 1 and {SQS_MAX_MOVE_TASK_MESSAGES_PER_SECOND}."
            )
        if any(task.status in _ACTIVE for task in _tasks(source)):
            raise InvalidParameterValue(
                "There is already a task running. Only one active task is allowed for a source queue "
                "arn at a given time."
            )
        task = _Task(
            task_id=str(uuid.uuid4()),
            source=source,
            destination_arn=destination_arn,
            rate=rate,
            to_move=sum(1 for message in source._messages if _movable(message)),
            started_ms=int(time.time() * 1000),
        )
        _tasks(source).append(task)
    threading.Thread(target=_run, args=(self, task), name=f"sqs-move-{task.task_id}", daemon=True).start()
    return task.handle


def _movable(message: Any) -> bool:
    return bool(message.visible) and not message.delayed


def _run(backend: Any, task: _Task) -> None:
    """The task's thread: one message at a time, the oldest first, at most ``rate`` a second.

    AWS: sqs-configure-dead-letter-queue-redrive ("Dead-letter queues redrive messages in the order
    they are received, starting with the oldest message"; the redrive velocity is the rate) and
    API_ListMessageMoveTasksResultEntry (a task ends COMPLETED, CANCELLED or FAILED). The task stops
    when it moved what it counted at the start, when the DLQ has nothing left to move, when it is
    cancelled, or when a destination (or the DLQ itself) was deleted: FAILED. An error of the
    emulator itself fails the task too, naming the error, rather than leaving it RUNNING forever.
    """
    try:
        _move_all(backend, task)
    except Exception as exc:
        with SQS_LOCK:
            task.status, task.failure_reason = FAILED, f"emulator error: {type(exc).__name__}: {exc}"


def _move_all(backend: Any, task: _Task) -> None:
    interval_s = 1.0 / (task.rate or DEFAULT_MESSAGES_PER_SECOND)
    started = time.monotonic()
    while True:
        with SQS_LOCK:
            if task.cancel.is_set():
                task.status = CANCELLED
                return
            if task.moved >= task.to_move:
                task.status = COMPLETED
                return
            outcome = _move_one(backend, task)
            if outcome is not None:
                task.status = outcome
                return
            due = started + task.moved * interval_s
        task.cancel.wait(timeout=max(0.0, due - time.monotonic()))


def _move_one(backend: Any, task: _Task) -> str | None:
    """Move the DLQ's oldest visible message; the task's final status when it must stop, else ``None``.

    AWS: sqs-configure-dead-letter-queue-redrive, "All redriven messages are considered new messages
    with a new messageID and enqueueTime"; the destination "ingests the redriven messages, as well as
    new messages from other producers, according to the order in which it receives them". FIFO keeps
    the MessageGroupId. A destination that no longer exists fails the task with AWS's reason.
    """
    source = task.source
    if backend.queues.get(source.name) is not source:
        task.failure_reason = _NON_EXISTENT_QUEUE
        return FAILED
    message = next((m for m in source._messages if _movable(m)), None)
    if message is None:
        return COMPLETED
    destination, problem = _destination_of(backend, task, message)
    if destination is None:
        task.failure_reason = problem
        return FAILED
    source._messages.remove(message)
    source.pending_messages.discard(message)
    message.id = str(uuid.uuid4())
    message.visible_at = 0.0
    message.approximate_receive_count = 0
    message.approximate_first_receive_timestamp = None
    message.sent_timestamp = int(time.time() * 1000)
    if destination.fifo_queue:
        message.sequence_number = next_sequence_number(destination)
    with destination._messages_lock:
        destination._messages.append(message)
        destination._messages_lock.notify_all()
    task.moved += 1
    return None


def _destination_of(backend: Any, task: _Task, message: Any) -> tuple[Any | None, str]:
    """Where ``message`` goes: the task's destination, else its own source queue.

    AWS: API_StartMessageMoveTask, DestinationArn: "If this field is left blank, the messages will be
    redriven back to their respective original source queues." The queue found must still exist
    (else the reason to fail the task).
    """
    if task.destination_arn is not None:
        found = _queue_by_arn(backend, task.destination_arn)
        return found, _NON_EXISTENT_QUEUE
    source_arn = dead_letter_source(message)
    if source_arn is not None:
        return _queue_by_arn(backend, source_arn), _NON_EXISTENT_QUEUE
    sources = [queue for queue in list(backend.queues.values()) if queue.dead_letter_queue is task.source]
    if len(sources) == 1:
        return sources[0], ""
    return None, (
        f"message {message.id} was sent to the dead-letter queue (not moved there by a redrive policy), "
        f"so it has no source queue, and the queue is the dead-letter queue of {len(sources)} queues; "
        "pass DestinationArn"
    )


def _list_message_move_tasks(self: Any, source_arn: str, max_results: int) -> list[dict[str, Any]]:
    """The most recent move tasks of a source queue, newest first. Not in moto 5.2.5.

    AWS: API_ListMessageMoveTasks ("Gets the most recent message movement tasks (up to 10)";
    MaxResults 1 to 10, default 1) and API_ListMessageMoveTasksResultEntry (the fields).
    """
    if not 1 <= max_results <= SQS_MAX_LIST_MOVE_TASKS_RESULTS:
        raise InvalidParameterValue(
            f"Value {max_results} for parameter MaxResults is invalid. Reason: it must be between 1 and "
            f"{SQS_MAX_LIST_MOVE_TASKS_RESULTS}."
        )
    with SQS_LOCK:
        source = _queue_by_arn(self, source_arn)
        if source is None:
            raise ResourceNotFound(_NO_SOURCE)
        return [task.entry() for task in reversed(_tasks(source)[-max_results:])]


def _cancel_message_move_task(self: Any, task_handle: str) -> int:
    """Cancel a RUNNING task; return how many messages it moved. Not in moto 5.2.5.

    AWS: API_CancelMessageMoveTask. "A message movement can only be cancelled when the current status
    is RUNNING. Cancelling a message movement task does not revert the messages that have already
    been moved." The task is CANCELLING until its thread stops, then CANCELLED.
    """
    task_id, source_arn = decode_task_handle(task_handle)
    with SQS_LOCK:
        source = _queue_by_arn(self, source_arn)
        if source is None:
            raise ResourceNotFound(_NO_SOURCE)
        task = next((t for t in _tasks(source) if t.task_id == task_id), None)
        if task is None:
            raise ResourceNotFound("Task does not exist.")
        if task.status != RUNNING:
            raise InvalidParameterValue(
                f"Value {task_handle} for parameter TaskHandle is invalid. Reason: the task is "
                f"{task.status}; only a RUNNING task can be cancelled."
            )
        task.status = CANCELLING
        task.cancel.set()
        return task.moved


def patch() -> None:
    """Add the move-task backend methods (item 7 of the package docstring)."""
    replace(SQSBackend, "start_message_move_task", _start_message_move_task)
    replace(SQSBackend, "list_message_move_tasks", _list_message_move_tasks)
    replace(SQSBackend, "cancel_message_move_task", _cancel_message_move_task)
