"""One record through a pipe's SQS target, as a pure function: the SendMessageBatch entry, or why not.

An SQS target's ``SqsQueueParameters`` give ``MessageGroupId`` and ``MessageDeduplicationId``, each a
literal or a dynamic path of the event (:func:`~constructs_fifo.local.pipes.paths.dynamic_parameter`);
``InputTemplate`` shapes the body; without one the target receives the event itself: the SQS
record, with its ``body`` as received (eb-pipes-input-transformation, ``aws.pipes.event``: "If no
enrichment is configured on the pipe, this is the event from the source with metadata").

No AWS calls: the runner passes records in and sends what comes out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from constructs_fifo.local.pipes.paths import (
    PathNotFoundError,
    PathSyntaxError,
    PipeContext,
    dynamic_parameter,
    pipe_event,
    render_template,
)

__all__ = ["RecordFailure", "SqsEntry", "SqsTargetParameters", "build_entry"]


@dataclass(frozen=True, slots=True)
class SqsTargetParameters:
    """A pipe's target parameters for an SQS queue, as deployed (``None``: not set)."""

    message_group_id: str | None = None
    message_deduplication_id: str | None = None
    input_template: str | None = None

    @classmethod
    def from_pipe(cls, target_parameters: Mapping[str, Any] | None) -> SqsTargetParameters:
        """Read ``TargetParameters`` as DescribePipe (or the template) gives them."""
        parameters = target_parameters or {}
        sqs = parameters.get("SqsQueueParameters") or {}
        return cls(
            message_group_id=sqs.get("MessageGroupId"),
            message_deduplication_id=sqs.get("MessageDeduplicationId"),
            input_template=parameters.get("InputTemplate"),
        )


@dataclass(frozen=True, slots=True)
class SqsEntry:
    """What to send for one record (``Id`` is the record's position in the batch)."""

    entry_id: str
    body: str
    message_group_id: str | None = None
    message_deduplication_id: str | None = None
    missing_paths: tuple[str, ...] = field(default=())

    def to_request(self) -> dict[str, str]:
        """The SendMessageBatch entry."""
        request = {"Id": self.entry_id, "MessageBody": self.body}
        if self.message_group_id is not None:
            request["MessageGroupId"] = self.message_group_id
        if self.message_deduplication_id is not None:
            request["MessageDeduplicationId"] = self.message_deduplication_id
        return request


@dataclass(frozen=True, slots=True)
class RecordFailure:
    """A record the target invocation fails for, and why (the record stays in the source)."""

    entry_id: str
    reason: str


def _parameter(name: str, value: str | None, event: Any) -> str | None:
    if value is None:
        return None
    try:
        return dynamic_parameter(value, event)
    except PathNotFoundError as error:
        raise ValueError(f"{name} {error}") from error
    except PathSyntaxError as error:
        raise ValueError(f"{name}: {error}") from error


def build_entry(
    entry_id: str, record: Mapping[str, Any], parameters: SqsTargetParameters, context: PipeContext
) -> SqsEntry | RecordFailure:
    """The entry for ``record`` (the SQS record as received), or the reason the target fails for it."""
    event = pipe_event(record)
    try:
        group = _parameter("MessageGroupId", parameters.message_group_id, event)
        dedup = _parameter("MessageDeduplicationId", parameters.message_deduplication_id, event)
        if parameters.input_template is None:
            return SqsEntry(entry_id, json.dumps(dict(record)), group, dedup)
        rendered = render_template(parameters.input_template, record, context)
    except (ValueError, PathSyntaxError) as error:
        return RecordFailure(entry_id, str(error))
    return SqsEntry(entry_id, rendered.body, group, dedup, rendered.missing)
