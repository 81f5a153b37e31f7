"""A small model of one SQS FIFO queue and its Lambda event source mapping, to drive the real runtime.

What it models, from the AWS pages the conformance tests (``tests/conformance/``) name and runs against
AWS:

- FIFO receive: the project's one FIFO rule, :func:`constructs_fifo.local.emulator.fifo_rule.select`
  (the emulator's receive asks it too): a group is served from its front, in order, while its
  messages are visible, up to the first one in flight (a front made visible again is received while
  a later message of its group is still in flight); a batch is filled with as many messages of one
  group as possible, then others; groups in the order they last became available.
- Receipt handles: a delete or visibility change takes only a message's latest receipt handle;
  a delete whose receipt handle's visibility timeout ended is refused (observed on AWS: "The
  receipt handle has expired."), and the message is received again.
- Receive counts: every receive raises the count of every message returned; SQS moves a message to the
  dead-letter queue on the receive after its count reached ``maxReceiveCount`` (``sqs_dead``).
- Visibility: a received message is invisible for the visibility timeout, or until
  ChangeMessageVisibility sets another time.
- Deduplication: a send with a (group, deduplication id) seen in the last 5 minutes is accepted and
  dropped (DeduplicationScope=messageGroup, as the construct configures).
- The mapping: a function error (here: :class:`Crash`, or an invocation still running at its
  deadline: Lambda's timeout) deletes nothing and changes no visibility; a response deletes every
  record it does not list (a refused delete leaves the record, as Lambda's poller does).
- Time inside an invocation (``slow`` steps of :func:`play`): the records may wait in the poller
  before the function starts, each job may take time on the clock, and the function's remaining
  time runs on the clock to its deadline, so the runtime's deadline path, a lease shorter than the
  batch's visibility and deletes with expired receipt handles all happen.

Everything else is real: the processor, the claim table and the group table on moto, the dead-letter
queue the runtime sends to (moto SQS).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from hypothesis import strategies as st

from constructs_fifo.local.emulator import fifo_rule
from constructs_fifo.runtime.backoff import VisibilityChange

if TYPE_CHECKING:
    from constructs_fifo.runtime.types import BatchResponse, SQSRecord

from .runtime_harness import QUEUE_ARN, REGION, FakeClock, FakeContext

DEDUPLICATION_WINDOW_SECONDS = 300


class BatchProcessor(Protocol):
    """What the model drives: claim mode's OrderedBatchProcessor or state mode's StateBatchProcessor."""

    def process(self, event: Mapping[str, Any], context: Any) -> BatchResponse: ...


class Crash(BaseException):
    """The worker stops dead (the runtime catches Exception, never this): a function error."""


@dataclass
class Message:
    message_id: str
    group: str
    body: str
    dedup_id: str
    attributes: dict[str, Any] = field(default_factory=dict)
    receive_count: int = 0
    visible_at: float = 0.0
    receipt: str = ""
    sent_at: float = 0.0

    def queued(self) -> fifo_rule.QueuedMessage:
        """What the FIFO rule needs of this message (times in ms)."""
        received = self.receive_count > 0
        available_s = self.visible_at if received else self.sent_at
        return fifo_rule.QueuedMessage(self.group, available_s * 1000, received, self.receive_count)


class ClockContext:
    """A Lambda context whose remaining time runs on the model's clock, to the invocation's deadline."""

    def __init__(self, clock: FakeClock, deadline: float) -> None:
        self._clock = clock
        self.deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return int((self.deadline - self._clock()) * 1000)


@dataclass
class FifoModel:
    """One FIFO queue; see the module docstring."""

    clock: FakeClock
    max_receive_count: int
    batch_size: int = 10
    visibility_timeout_seconds: int = 120
    url: str = "https://sqs.model/jobs.fifo"
    messages: list[Message] = field(default_factory=list)
    sqs_dead: list[Message] = field(default_factory=list)
    refused_deletes: int = 0
    timeouts: int = 0
    _deleted: set[str] = field(default_factory=set)
    _dedup: dict[tuple[str, str], float] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=itertools.count)

    # --- the API the runtime and the producer use --------------------------------------------------

    def send(
        self, group: str, body: str, dedup_id: str, attributes: dict[str, Any] | None = None
    ) -> str | None:
        """SendMessage: the new message id, or ``None`` when deduplicated (accepted, not delivered)."""
        now = self.clock()
        seen = self._dedup.get((group, dedup_id))
        if seen is not None and now - seen < DEDUPLICATION_WINDOW_SECONDS:
            return None
        self._dedup[(group, dedup_id)] = now
        message = Message(
            f"m{next(self._ids):05d}", group, body, dedup_id, dict(attributes or {}), sent_at=now
        )
        self.messages.append(message)
        return message.message_id

    def receive(self) -> list[Message]:
        """ReceiveMessage as a FIFO event source mapping sees it (one batch)."""
        now = self.clock()
        messages = list(self.messages)
        selection = fifo_rule.select(
            [m.queued() for m in messages],
            now_ms=now * 1000,
            count=self.batch_size,
            max_receive_count=self.max_receive_count,
        )
        for index in selection.dead_letter:  # SQS's dead-letter rule
            self.messages.remove(messages[index])
            self.sqs_dead.append(messages[index])
        batch = [messages[index] for index in selection.receive]
        for message in batch:
            message.receive_count += 1
            message.visible_at = now + self.visibility_timeout_seconds
            message.receipt = uuid.uuid4().hex
        return batch

    def delete(self, receipt: str) -> bool:
        """DeleteMessage: ``False`` when SQS refuses (the receipt handle is not the latest, or its
        visibility timeout ended: "The receipt handle has expired."); the message then stays."""
        if not receipt or receipt in self._deleted:
            return True  # deleting a deleted message again succeeds
        now = self.clock()
        for message in self.messages:
            if message.receipt == receipt and message.visible_at > now:
                self.messages.remove(message)
                self._deleted.add(receipt)
                return True
        self.refused_deletes += 1
        return False

    def apply(self, changes: Sequence[VisibilityChange]) -> None:
        """The runtime's VisibilityChanger seam: ChangeMessageVisibility for each change."""
        now = self.clock()
        for change in changes:
            for message in self.messages:
                if message.receipt and message.receipt == change.receipt_handle:
                    message.visible_at = now + change.seconds

    def next_visible_at(self) -> float | None:
        """When the next in-flight message becomes visible again (``None``: nothing is in flight)."""
        now = self.clock()
        return min((m.visible_at for m in self.messages if m.visible_at > now), default=None)

    # --- the event source mapping --------------------------------------------------------------------

    def records(self, batch: Sequence[Message]) -> list[SQSRecord]:
        return [
            {
                "messageId": m.message_id,
                "receiptHandle": m.receipt,
                "body": m.body,
                "attributes": {
                    "ApproximateReceiveCount": str(m.receive_count),
                    "MessageGroupId": m.group,
                    "MessageDeduplicationId": m.dedup_id,
                    "SentTimestamp": "0",
                },
                "messageAttributes": {
                    name: {"stringValue": value["StringValue"], "dataType": value["DataType"]}
                    for name, value in m.attributes.items()
                },
                "eventSource": "aws:sqs",
                "eventSourceARN": QUEUE_ARN,
                "awsRegion": REGION,
            }
            for m in batch
        ]

    def invoke(
        self, processor: BatchProcessor, *, remaining_ms: int = 20_000, poller_delay_s: float | None = None
    ) -> bool:
        """Receive one batch and run it; ``False`` when nothing was receivable now.

        With ``poller_delay_s`` the batch waits that long before the function starts, and the
        function's remaining time runs on the clock; an invocation still running at its deadline
        is Lambda's timeout (a function error).
        """
        batch = self.receive()
        if not batch:
            return False
        context: Any = FakeContext(remaining_ms)
        if poller_delay_s is not None:
            self.clock.advance(poller_delay_s)
            context = ClockContext(self.clock, self.clock() + remaining_ms / 1000)
        try:
            response = processor.process({"Records": self.records(batch)}, context)
        except Crash:
            return True  # a function error: the whole batch comes back after its visibility timeout
        if poller_delay_s is not None and self.clock() >= context.deadline:
            self.timeouts += 1
            return True  # Lambda's timeout: the response is lost, nothing is deleted
        failed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
        for message in batch:
            if message.message_id not in failed:
                self.delete(message.receipt)
        return True

    def run_until_quiet(
        self, processor_factory: Callable[[], BatchProcessor], *, max_steps: int = 400
    ) -> int:
        """Invoke until the queue is empty, moving the clock to the next visible message; return steps."""
        for step in range(max_steps):
            if not self.invoke(processor_factory()):
                wake = self.next_visible_at()
                if wake is None:
                    assert not self.messages, f"messages left but none receivable: {self.messages}"
                    return step
                self.clock.now = max(self.clock.now, wake) + 0.001
            self.clock.advance(0.01)
        raise AssertionError(f"the queue did not drain in {max_steps} invocations: {self.messages}")


class ModelSqs:
    """The SQS client the runtime and operators get: sends to the model's URL go to the model."""

    def __init__(self, model: FifoModel, real: Any) -> None:
        self._model = model
        self._real = real

    def send_message(self, **params: Any) -> dict[str, Any]:
        if params["QueueUrl"] != self._model.url:
            return dict(self._real.send_message(**params))
        message_id = self._model.send(
            params["MessageGroupId"],
            params["MessageBody"],
            params["MessageDeduplicationId"],
            params.get("MessageAttributes"),
        )
        return {"MessageId": message_id or ""}


class World(Protocol):
    """What a model test drives: the model queue, its clock, a processor factory and a producer.

    ``job_seconds`` is how long each job takes on the clock (the world's job function advances it).
    """

    model: FifoModel
    clock: FakeClock
    job_seconds: float

    def processor(self) -> Any: ...

    def send(self, spec: Any, *, dedup_id: str | None = None) -> None: ...


#: One step of a schedule: ("send", job), ("copy", job), ("run", None) or ("slow", Slow).
Step = tuple[str, Any]


@dataclass(frozen=True)
class Slow:
    """A slow invocation: its batch waits ``poller_delay_s`` before the function starts (past the
    visibility timeout: its deletes are refused), then each job takes ``job_seconds`` of the
    function's 20 seconds (the runtime's deadline path reports the rest with visibility 0; a job
    running past the deadline is Lambda's timeout)."""

    poller_delay_s: float
    job_seconds: float


#: The slow invocations a schedule draws from: a late start past the 120-second visibility timeout,
#: jobs slow enough for the deadline path, and both.
SLOW_STEPS = (Slow(110, 0), Slow(0, 6), Slow(0, 15), Slow(105, 4))


def assert_skipped_every_message(skipped: list[str], malformed: list[str]) -> None:
    """Operators skipped (or the DLQ holds) each message of a malformed job once, however often SQS
    delivered it: a parked group keeps a message once, even when SQS delivers a record again that it
    had kept (a refused delete, Lambda's timeout), though a body with no job id has no claim to tell
    that delivery from a new message (``tests/chaos/test_found.py``, finding 7)."""
    assert sorted(skipped) == sorted(malformed)


def run_steps() -> st.SearchStrategy[Step]:
    """One invocation step of a schedule: mostly plain runs, sometimes a slow one."""
    return st.sampled_from([("run", None)] * 4 + [("slow", slow) for slow in SLOW_STEPS])


def play(world: World, steps: Sequence[Step]) -> None:
    """Play a schedule: sends, copies (new dedup id, same soon, same after the 5-minute window), runs
    (some slow); then invoke until the queue is empty."""
    for action, value in steps:
        if action == "run":
            world.model.invoke(world.processor())
            world.clock.advance(1)
        elif action == "slow":
            # A slow invocation may end in Lambda's timeout or in refused deletes: each costs its
            # records one receive more than the runtime's own retries, so SQS's rule (the least
            # value the construct allows) gets that receive, as the chaos suite's disturbed ones do.
            world.model.max_receive_count += 1
            world.job_seconds = value.job_seconds
            try:
                world.model.invoke(world.processor(), poller_delay_s=value.poller_delay_s)
            finally:
                world.job_seconds = 0.0
            world.clock.advance(1)
        elif action == "send":
            world.send(value)
        elif value.copy == "new":
            world.send(value, dedup_id=f"{value.job_id}-retry")
        else:
            if value.copy == "same-late":
                world.clock.advance(DEDUPLICATION_WINDOW_SECONDS + 1)
            world.send(value)
    world.model.run_until_quiet(world.processor)
