"""Reading a FIFO dead-letter queue without consuming it: receive with a short visibility, then release.

SQS has no peek. :func:`peek` receives the DLQ's messages with a visibility timeout of
:data:`PEEK_VISIBILITY_SECONDS` and :meth:`Peek.release` makes every message it did not delete visible
again at once (``ChangeMessageVisibility`` 0). What that does to the messages: each receive raises
their ``ApproximateReceiveCount`` (a DLQ has no redrive policy of its own, so nothing moves), and while
the peek holds them, another reader of the DLQ (a redrive, a second operator) does not see them. A
peek that dies without releasing leaves them invisible for at most the visibility timeout.

A FIFO queue returns a group's messages from its front and nothing behind a message in flight, at most
10 per receive: a peek therefore sees the first 10 messages of each group (:data:`PER_GROUP_SEEN`), and
at most :data:`PEEK_LIMIT` messages in all; ``Peek.complete`` says whether it saw everything. Redrive
and drop delete what they handled, which frees the group's next messages for the next receive, so they
see every message of the groups they work on.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.runtime.aws_limits import SQS_MAX_BATCH_ENTRIES, SQS_MAX_RECEIVE_MESSAGES
from constructs_fifo.runtime.dead_jobs.letters import LetterAttributes, decode_letter_attributes

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "MUTATE_VISIBILITY_SECONDS",
    "PEEK_LIMIT",
    "PEEK_VISIBILITY_SECONDS",
    "DlqMessage",
    "Peek",
    "decode_body",
    "peek",
]

#: Visibility timeout of a read-only peek (``dlq list``/``dlq show``): long enough to read, short if lost.
PEEK_VISIBILITY_SECONDS: Final = 30
#: Visibility timeout while a redrive or drop holds messages: covers the sends and deletes of a group.
MUTATE_VISIBILITY_SECONDS: Final = 300
#: The most messages one peek holds.
PEEK_LIMIT: Final = 1000
#: What one receive can return of a group that has nothing else in flight.
PER_GROUP_SEEN: Final = SQS_MAX_RECEIVE_MESSAGES


def decode_body(body: str) -> dict[str, Any]:
    """A job envelope's fields, ``{}`` for a body that is not a JSON object."""
    try:
        decoded = json.loads(body)
    except ValueError:
        return {}
    return decoded if isinstance(decoded, dict) else {}


@dataclass(frozen=True)
class DlqMessage:
    """One DLQ message, its triage attributes decoded by ``runtime/dead_jobs/letters.py``'s codec.

    A message SQS moved itself (``maxReceiveCount``) or with a malformed body has no attributes: the
    job id and type then come from the body when it has them.
    """

    message_id: str
    receipt_handle: str
    group: str
    body: str
    attributes: LetterAttributes
    receive_count: int
    sent_at_ms: int

    @property
    def decoded_body(self) -> dict[str, Any]:
        return decode_body(self.body)

    @property
    def job_id(self) -> str | None:
        body = self.decoded_body
        value = self.attributes.job_id or body.get("jobId")
        return str(value) if value else None

    @property
    def job_type(self) -> str | None:
        body = self.decoded_body
        value = self.attributes.job_type or body.get("type")
        return str(value) if value else None

    @property
    def seq(self) -> int | None:
        value = self.decoded_body.get("seq")
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    @property
    def reason(self) -> str:
        """The runtime's ``reason``; ``maxReceiveCount`` when SQS moved it (no attributes)."""
        return self.attributes.reason or "maxReceiveCount (moved by SQS, not the runtime)"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (no receipt handle: it is worthless once released)."""
        return {
            "messageId": self.message_id,
            "group": self.group,
            "jobId": self.job_id,
            "jobType": self.job_type,
            "reason": self.reason,
            "errorType": self.attributes.error_type,
            "error": self.attributes.error,
            "attempts": self.attributes.attempts,
            "deadAt": self.attributes.dead_at,
            "originalMessageId": self.attributes.original_message_id,
            "receiveCount": self.receive_count,
            "body": self.body,
        }


@dataclass
class Peek:
    """Messages held by :func:`peek`; :meth:`release` (or leaving the ``with`` block) lets them go."""

    sqs: SQSClient
    queue_url: str
    letters: list[DlqMessage] = field(default_factory=list)
    complete: bool = True
    _gone: set[str] = field(default_factory=set)

    def __enter__(self) -> Peek:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()

    def delete(self, letter: DlqMessage) -> None:
        """Delete one held message (it is not released afterwards)."""
        self.sqs.delete_message(QueueUrl=self.queue_url, ReceiptHandle=letter.receipt_handle)
        self._gone.add(letter.message_id)

    def more(self, visibility_seconds: int) -> list[DlqMessage]:
        """Receive what the queue now returns (e.g. the rest of a group whose front was deleted)."""
        found = _receive_all(self.sqs, self.queue_url, visibility_seconds, PEEK_LIMIT - len(self.letters))
        self.letters += found
        return found

    def release(self) -> None:
        """Make every held message that was not deleted visible again, at once."""
        held = [letter for letter in self.letters if letter.message_id not in self._gone]
        for start in range(0, len(held), SQS_MAX_BATCH_ENTRIES):
            chunk = held[start : start + SQS_MAX_BATCH_ENTRIES]
            self.sqs.change_message_visibility_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(index), "ReceiptHandle": letter.receipt_handle, "VisibilityTimeout": 0}
                    for index, letter in enumerate(chunk)
                ],
            )
        self._gone.update(letter.message_id for letter in held)


def peek(sqs: SQSClient, queue_url: str, *, visibility_seconds: int = PEEK_VISIBILITY_SECONDS) -> Peek:
    """Receive the DLQ's messages (see the module docstring); use as ``with peek(...) as held:``."""
    letters = _receive_all(sqs, queue_url, visibility_seconds, PEEK_LIMIT)
    held = Peek(sqs, queue_url, letters)
    held.complete = len(letters) < PEEK_LIMIT and all(
        sum(1 for other in letters if other.group == letter.group) < PER_GROUP_SEEN for letter in letters
    )
    return held


def _receive_all(sqs: SQSClient, queue_url: str, visibility_seconds: int, limit: int) -> list[DlqMessage]:
    letters: list[DlqMessage] = []
    while len(letters) < limit:
        response = sqs.receive_message(
            QueueUrl=queue_url,
            MaxNumberOfMessages=min(SQS_MAX_RECEIVE_MESSAGES, limit - len(letters)),
            VisibilityTimeout=visibility_seconds,
            WaitTimeSeconds=0,
            MessageAttributeNames=["All"],
            MessageSystemAttributeNames=["All"],
        )
        messages = response.get("Messages", [])
        if not messages:
            break
        for message in messages:
            system = message.get("Attributes", {})
            letters.append(
                DlqMessage(
                    message_id=message["MessageId"],
                    receipt_handle=message["ReceiptHandle"],
                    group=system.get("MessageGroupId", ""),
                    body=message.get("Body", ""),
                    attributes=decode_letter_attributes(message.get("MessageAttributes", {})),
                    receive_count=int(system.get("ApproximateReceiveCount", "1")),
                    sent_at_ms=int(system.get("SentTimestamp", "0")),
                )
            )
    return letters
