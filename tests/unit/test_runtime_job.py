"""Unit tests of the job envelope parser."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.exceptions import MalformedJobError, PermanentJobError
from constructs_fifo.runtime.job import Job, leading_job_id, parse_record, record_attempt, record_group
from constructs_fifo.runtime.types import SQSRecord


def record(raw: str, **attributes: str) -> SQSRecord:
    return {
        "messageId": "m-1",
        "receiptHandle": "rh",
        "body": raw,
        "attributes": {"MessageGroupId": "ws#1", "ApproximateReceiveCount": "3", **attributes},  # type: ignore[typeddict-item]
    }


def test_parse_builds_the_job_from_body_and_attributes() -> None:
    # GIVEN a well-formed record / WHEN parsed
    job = parse_record(
        record('{"jobId": "j1", "type": "apply_patch", "payload": {"diff": "+x"}, "extra": 1}')
    )
    # THEN every field comes from the right place
    assert job == Job(
        id="j1",
        group="ws#1",
        type="apply_patch",
        payload={"diff": "+x"},
        attempt=3,
        message_id="m-1",
        body={"jobId": "j1", "type": "apply_patch", "payload": {"diff": "+x"}, "extra": 1},
    )


def test_missing_payload_defaults_to_an_empty_object() -> None:
    assert parse_record(record('{"jobId": "j1", "type": "t"}')).payload == {}


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            "{oops",
            "message m-1: body '{oops' is not JSON (Expecting property name enclosed in double quotes: "
            'line 1 column 2 (char 1)); the body must be a JSON object like {"jobId": "...", "type": '
            '"...", "payload": {...}}',
        ),
        (
            '"just a string"',
            'message m-1: body is a JSON str, not an object; the body must be a JSON object like {"jobId": '
            '"...", "type": "...", "payload": {...}}',
        ),
        (
            '{"jobId": "", "type": "t"}',
            "message m-1: jobId is '', it must be a non-empty string; the body must be a JSON object like "
            '{"jobId": "...", "type": "...", "payload": {...}}',
        ),
        (
            '{"jobId": "j1", "type": ["t"]}',
            "message m-1 (jobId 'j1'): type is ['t'], it must be a non-empty string; the body must be a "
            'JSON object like {"jobId": "...", "type": "...", "payload": {...}}',
        ),
    ],
)
def test_malformed_bodies_raise_a_permanent_error_naming_the_problem(raw: str, message: str) -> None:
    # GIVEN / WHEN a malformed body is parsed
    with pytest.raises(MalformedJobError) as caught:
        parse_record(record(raw))
    # THEN the error is permanent and says what is wrong and what is expected
    assert isinstance(caught.value, PermanentJobError)
    assert str(caught.value) == message


@pytest.mark.parametrize(
    ("raw", "job_id"),
    [
        ('{"jobId": "j1"}', "j1"),
        ('{"jobId": "j1", "type": ""}', "j1"),
        ('{"jobId": "", "type": "t"}', None),
        ('{"jobId": 5, "type": "t"}', None),
        ('{"type": "t"}', None),
        ("[]", None),
        ("{oops", None),
    ],
)
def test_malformed_error_carries_the_job_id_only_when_it_is_usable(raw: str, job_id: str | None) -> None:
    # GIVEN / WHEN a malformed body is parsed
    with pytest.raises(MalformedJobError) as caught:
        parse_record(record(raw))
    # THEN the error carries the jobId exactly when it is a non-empty string
    assert caught.value.job_id == job_id


def test_unreadable_receive_count_counts_as_first_attempt() -> None:
    assert record_attempt(record("{}", ApproximateReceiveCount="x")) == 1
    assert record_attempt({"messageId": "m"}) == 1


def test_record_without_group_is_its_own_group() -> None:
    # GIVEN a record from a standard queue (no MessageGroupId) / THEN it never shares a group
    assert record_group({"messageId": "m-9", "attributes": {}}) == "message#m-9"


def test_an_envelope_that_is_not_json_past_its_job_id_still_names_its_job() -> None:
    # GIVEN what a pipe renders for an event without the seq path's field ("seq": <$.body.detail.version>)
    record: SQSRecord = {
        "messageId": "m1",
        "body": '{"jobId": "evt-7", "type": "usage", "payload": {"units": 3}, "seq": }',
        "attributes": {"MessageGroupId": "acct-1", "ApproximateReceiveCount": "1"},
    }
    # WHEN it is parsed THEN it is malformed, and the error keeps the job id an operator and a waiter use
    with pytest.raises(MalformedJobError) as raised:
        parse_record(record)
    assert raised.value.job_id == "evt-7"
    assert leading_job_id("[1, 2]") is None and leading_job_id('{"type": "x", "jobId": "late"') is None
