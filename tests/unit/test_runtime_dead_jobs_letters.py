"""Unit tests of the dead-letter attributes' one codec: what the runtime writes, the tools read back."""

from __future__ import annotations

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.dead_jobs.letters import (
    LetterAttributes,
    decode_letter_attributes,
    encode_letter_attributes,
)
from constructs_fifo.runtime.dead_jobs.record import DeadJob

DEAD = DeadJob(
    job_id="j-1",
    job_type="apply_patch",
    error_type="PermanentJobError",
    error="no diff",
    attempts=3,
    message_id="m-1",
    at_ms=1_700_000_000_000,
    reason=DeadReason.ATTEMPTS_EXHAUSTED,
)


def test_a_dead_jobs_attributes_read_back_as_written() -> None:
    # GIVEN a dead job's attributes as the runtime sends them
    written = encode_letter_attributes(DEAD)
    # WHEN they are read back
    read = decode_letter_attributes(written)
    # THEN every field says what the dead job said
    assert read == LetterAttributes(
        job_id="j-1",
        job_type="apply_patch",
        reason="ATTEMPTS_EXHAUSTED",
        error_type="PermanentJobError",
        error="no diff",
        attempts=3,
        original_message_id="m-1",
        dead_at="2023-11-14T22:13:20+00:00",
    )


def test_a_message_as_sqs_returns_what_the_runtime_wrote_before_the_codec_is_read() -> None:
    # GIVEN the MessageAttributes of a dead letter as SQS returns them (the shape written before this
    # codec existed: the same names, ``attempts`` a Number, SQS's empty list fields beside each value)
    def value(text: str, data_type: str = "String") -> dict[str, object]:
        return {"StringValue": text, "StringListValues": [], "BinaryListValues": [], "DataType": data_type}

    received = {
        "jobId": value("j-9"),
        "jobType": value("run_tests"),
        "reason": value("PERMANENT"),
        "errorType": value("PermanentJobError"),
        "error": value("bad diff"),
        "attempts": value("1", "Number"),
        "originalMessageId": value("m-9"),
        "deadAt": value("2023-11-14T22:13:20+00:00"),
    }
    # WHEN it is decoded
    read = decode_letter_attributes(received)
    # THEN each attribute lands in its field
    assert (read.job_id, read.job_type, read.reason, read.error_type, read.error) == (
        "j-9",
        "run_tests",
        "PERMANENT",
        "PermanentJobError",
        "bad diff",
    )
    assert (read.attempts, read.original_message_id, read.dead_at) == (1, "m-9", "2023-11-14T22:13:20+00:00")


def test_a_message_sqs_moved_itself_reads_as_empty_and_a_malformed_job_has_no_id() -> None:
    # GIVEN a message SQS moved (no attributes) and the letter of a malformed body (no job id or type)
    malformed = DeadJob("", "", "MalformedJobError", "not JSON", 0, "m-2", 0, reason=DeadReason.MALFORMED)
    # WHEN both are decoded
    moved = decode_letter_attributes({})
    unreadable = decode_letter_attributes(encode_letter_attributes(malformed))
    # THEN the moved one says nothing, and the malformed one has no job id or type but its reason
    assert moved == LetterAttributes()
    assert (unreadable.job_id, unreadable.job_type, unreadable.reason, unreadable.attempts) == (
        None,
        None,
        "MALFORMED",
        0,
    )
