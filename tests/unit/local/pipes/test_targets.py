"""targets.py: one SQS record through a pipe's SQS target: the SendMessageBatch entry, or why it fails."""

from __future__ import annotations

import json

from constructs_fifo.local.pipes.paths import PipeContext
from constructs_fifo.local.pipes.targets import RecordFailure, SqsEntry, SqsTargetParameters, build_entry

RECORD = {
    "messageId": "m-1",
    "receiptHandle": "r-1",
    "body": json.dumps({"id": "e-1", "detail": {"accountId": "a1", "version": 4}}),
    "attributes": {},
    "messageAttributes": {},
    "eventSource": "aws:sqs",
}
PARAMETERS = SqsTargetParameters.from_pipe(
    {
        "InputTemplate": '{"jobId": "<$.body.id>", "seq": <$.body.detail.version>}',
        "SqsQueueParameters": {
            "MessageGroupId": "$.body.detail.accountId",
            "MessageDeduplicationId": "$.body.id",
        },
    }
)


def test_the_entry_carries_the_group_the_dedup_id_and_the_rendered_body() -> None:
    # WHEN the record goes through the target parameters
    entry = build_entry("0", RECORD, PARAMETERS, PipeContext())
    # THEN the entry is the SendMessageBatch request SQS gets
    assert isinstance(entry, SqsEntry)
    assert entry.to_request() == {
        "Id": "0",
        "MessageBody": '{"jobId": "e-1", "seq": 4}',
        "MessageGroupId": "a1",
        "MessageDeduplicationId": "e-1",
    }


def test_without_a_template_the_target_gets_the_record_and_static_ids_stay_literal() -> None:
    # GIVEN no input template and a static group, no deduplication id
    parameters = SqsTargetParameters.from_pipe({"SqsQueueParameters": {"MessageGroupId": "all"}})
    # WHEN built
    entry = build_entry("3", RECORD, parameters, PipeContext())
    # THEN the body is the record itself (its body as received), the group the literal
    assert isinstance(entry, SqsEntry)
    assert json.loads(entry.body) == RECORD
    assert entry.to_request() == {"Id": "3", "MessageBody": entry.body, "MessageGroupId": "all"}


def test_a_group_path_that_resolves_to_nothing_fails_the_record_naming_the_parameter() -> None:
    record = {**RECORD, "body": json.dumps({"id": "e-2", "detail": {}})}
    # WHEN built THEN it fails, naming MessageGroupId and the path
    failure = build_entry("1", record, PARAMETERS, PipeContext())
    assert failure == RecordFailure(
        "1", "MessageGroupId path $.body.detail.accountId resolves to nothing in the event"
    )


def test_a_template_path_that_resolves_to_nothing_is_sent_and_reported() -> None:
    record = {**RECORD, "body": json.dumps({"id": "e-3", "detail": {"accountId": "a1"}})}
    # WHEN built THEN the entry is sent without the value, and names the path it left out
    entry = build_entry("2", record, PARAMETERS, PipeContext())
    assert isinstance(entry, SqsEntry)
    assert entry.missing_paths == ("$.body.detail.version",)


def test_a_path_outside_pipes_syntax_fails_the_record_with_the_fix() -> None:
    parameters = SqsTargetParameters.from_pipe({"SqsQueueParameters": {"MessageGroupId": "$..accountId"}})
    failure = build_entry("0", RECORD, parameters, PipeContext())
    assert isinstance(failure, RecordFailure)
    assert failure.reason.startswith("MessageGroupId: ") and "fix:" in failure.reason
