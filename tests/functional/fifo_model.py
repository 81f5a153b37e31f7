"""A small model of one SQS FIFO queue and its Lambda event source mapping, to drive the real runtime.

What it models, from the AWS pages named in ``shared/reference/facts.md``:

- FIFO receive: a group with a message in flight (received and not yet visible again) returns
  nothing; a batch is filled with as many messages of one group as possible, in order, then others.
- Receive counts: every receive raises the count of every message returned; SQS moves a message to the
  dead-letter queue on the receive after its count reached ``maxReceiveCount`` (``sqs_dead``).
- Visibility: a received message is invisible for the visibility timeout, or until
  ChangeMessageVisibility sets another time.
- Deduplication: a send with a (group, deduplication id) seen in the last 5 minutes is accepted and
  dropped (DeduplicationScope=messageGroup, as the construct configures).
- The mapping: a function error (here: :class:`Crash`) deletes nothing and changes no visibility; a
  response deletes every record it does not list.

Everything else is real: the processor, the claim table and the group table on moto, the dead-letter
queue the runtime sends to (moto SQS).
"""

from __future__ import annotations

import itertools
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

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
        message = Message(f"m{next(self._ids):05d}", group, body, dedup_id, dict(attributes or {}))
        self.messages.append(message)
        return message.message_id

    def receive(self) -> list[Message]:
        """ReceiveMessage as a FIFO event source mapping sees it (one batch)."""
        now = self.clock()
        busy = {m.group for m in self.messages if m.visible_at > now}
        batch: list[Message] = []
        for group in dict.fromkeys(m.group for m in self.messages if m.group not in busy):
            for message in [m for m in self.messages if m.group == group]:
                if len(batch) == self.batch_size:
                    return batch
                if message.receive_count >= self.max_receive_count:  # SQS's dead-letter rule
                    self.messages.remove(message)
                    self.sqs_dead.append(message)
                    continue
                message.receive_count += 1
                message.visible_at = now + self.visibility_timeout_seconds
                message.receipt = uuid.uuid4().hex
                batch.append(message)
        return batch

    def delete(self, receipt: str) -> None:
        self.messages = [m for m in self.messages if m.receipt != receipt or not receipt]

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

    def invoke(self, processor: BatchProcessor, *, remaining_ms: int = 20_000) -> bool:
        """Receive one batch and run it; ``False`` when nothing was receivable now."""
        batch = self.receive()
        if not batch:
            return False
        try:
            response = processor.process({"Records": self.records(batch)}, FakeContext(remaining_ms))
        except Crash:
            return True  # a function error: the whole batch comes back after its visibility timeout
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
    """What a model test drives: the model queue, its clock, a processor factory and a producer."""

    model: FifoModel
    clock: FakeClock

    def processor(self) -> Any: ...

    def send(self, spec: Any, *, dedup_id: str | None = None) -> None: ...


#: One step of a schedule: ("send", job), ("copy", job) or ("run", None).
Step = tuple[str, Any]


def play(world: World, steps: Sequence[Step]) -> None:
    """Play a schedule: sends, copies (new dedup id, same soon, same after the 5-minute window), runs;
    then invoke until the queue is empty."""
    for action, value in steps:
        if action == "run":
            world.model.invoke(world.processor())
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
