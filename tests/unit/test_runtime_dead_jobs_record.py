"""The dead-job record and its codec: one stored form, and every form written before it still read.

The literals below are items exactly as the runtime before the codec wrote them (format 1 of the
state bookkeeping, a park header's ``dead``): a deployed queue holds such items, and a new runtime
must read them as they are.
"""

from __future__ import annotations

import json

import pytest

from constructs_fifo.runtime.constants import MAX_ERROR_LENGTH, STATE_BOOK_FORMAT, DeadReason
from constructs_fifo.runtime.dead_jobs.parking import decode_header
from constructs_fifo.runtime.dead_jobs.record import DeadJob, decode_dead_job, encode_dead_job, stored_reason
from constructs_fifo.runtime.state.core.records import Bookkeeping, BufferedJob
from constructs_fifo.runtime.state.storage.book import decode_book, encode_book

P = DeadJob("p", "apply_patch", "PermanentJobError", "no diff", 1, "m-p", 1_700_000_000_000, 3)
X = DeadJob(
    "x",
    "",
    "MalformedJobError",
    "seq -1 is not a non-negative integer",
    0,
    "m-x",
    1_700_000_000_001,
    reason=DeadReason.MALFORMED,
)
B = DeadJob(
    "b", "apply_patch", "ValueError", "boom", 5, "m-b", 1_700_000_000_002, 5, DeadReason.ATTEMPTS_EXHAUSTED
)
BUFFERED_B = BufferedJob(
    5, "m-b", 1_699_999_999_000, {"jobId": "b", "type": "apply_patch", "payload": {}, "seq": 5}
)

#: A group's bookkeeping as format 1 stored it: dead entries as positional lists, the parked entry with
#: ``type``, an owed letter as ``[seq, messageId, bufferedAt, body, <entry>]``.
BOOK_FORMAT_1 = (
    '{"f":1,"seq":3,"dead":["p","x","b"],"deadWhy":[["p","m-p","PERMANENT","PermanentJobError","no diff",1,'
    '1700000000000,"apply_patch",3],["x","m-x","MALFORMED","MalformedJobError","seq -1 is not a non-negative '
    'integer",0,1700000000001,"",null],["b","m-b","ATTEMPTS_EXHAUSTED","ValueError","boom",5,1700000000002,'
    '"apply_patch",5]],"park":{"jobId":"p","type":"apply_patch","errorType":"PermanentJobError","error":'
    '"no diff","attempts":1,"messageId":"m-p","at":1700000000000,"seq":3,"reason":"PERMANENT"},"owed":[[5,'
    '"m-b",1699999999000,{"jobId":"b","type":"apply_patch","payload":{},"seq":5},["b","m-b",'
    '"ATTEMPTS_EXHAUSTED","ValueError","boom",5,1700000000002,"apply_patch",5]]]}'
)

#: A park header item as the runtime before the codec wrote it (claim mode, a malformed record).
HEADER_BEFORE_THE_CODEC = {
    "group": {"S": "ws#1"},
    "sk": {"S": "park"},
    "status": {"S": "PARKED"},
    "version": {"N": "1"},
    "next_seq": {"N": "2"},
    "retry_at_ms": {"N": "0"},
    "dead": {
        "S": '{"jobId":null,"jobType":null,"reason":"MALFORMED","errorType":"MalformedJobError","error":'
        '"body is not JSON","attempts":0,"messageId":"m-q","parkedAt":1700000000003}'
    },
    "skip_dead": {"BOOL": False},
    "updated_at": {"N": "1700000000003"},
}


def test_a_book_in_format_1_reads_as_it_was_written() -> None:
    # GIVEN a bookkeeping stored by the runtime before the codec WHEN it is read
    book = decode_book(BOOK_FORMAT_1)
    # THEN every dead job is the same record, wherever the book kept it
    assert book.dead_entries == (P, X, B)
    assert book.parked == P
    assert book.owed == ((BUFFERED_B, B),)
    assert (book.last_seq, book.dead) == (3, ("p", "x", "b"))


def test_a_book_is_written_in_the_named_format_and_reads_back_the_same() -> None:
    # GIVEN the same bookkeeping
    book = Bookkeeping(
        last_seq=3, dead=("p", "x", "b"), dead_entries=(P, X, B), parked=P, owed=((BUFFERED_B, B),)
    )
    # WHEN it is written
    data = json.loads(encode_book(book))
    # THEN it carries the new format number, and every dead job names its fields
    assert data["f"] == STATE_BOOK_FORMAT == 3
    assert data["deadWhy"][0] == {
        "jobId": "p",
        "jobType": "apply_patch",
        "reason": "PERMANENT",
        "errorType": "PermanentJobError",
        "error": "no diff",
        "attempts": 1,
        "messageId": "m-p",
        "at": 1_700_000_000_000,
        "seq": 3,
    }
    assert data["park"] == data["deadWhy"][0]
    assert data["owed"][0]["dead"] == encode_dead_job(B) and data["owed"][0]["seq"] == 5
    # AND it reads back as written
    assert decode_book(encode_book(book)) == book


def test_a_book_of_an_unknown_format_is_refused_with_the_formats_this_runtime_reads() -> None:
    # GIVEN a book a newer runtime wrote WHEN it is read THEN the error names the formats read
    with pytest.raises(ValueError, match=r"format 4; this runtime reads formats \[1, 2, 3\]"):
        decode_book('{"f":4}')


def test_a_park_header_written_before_the_codec_reads_as_the_same_dead_job() -> None:
    # GIVEN a header whose dead job has null ids and ``parkedAt`` WHEN it is read
    header = decode_header(HEADER_BEFORE_THE_CODEC)
    # THEN its dead job is typed, with empty ids and the park time as its time
    assert header.dead == DeadJob(
        "",
        "",
        "MalformedJobError",
        "body is not JSON",
        0,
        "m-q",
        1_700_000_000_003,
        reason=DeadReason.MALFORMED,
    )
    assert (header.group, header.status, header.next_seq) == ("ws#1", "PARKED", 2)


def test_the_stored_error_is_cut_to_the_one_limit() -> None:
    # GIVEN a dead job with a 5,000-character error (claim mode keeps the whole text in memory)
    long = DeadJob("j", "t", "ValueError", "e" * 5000, 1, "m", 0)
    # WHEN it is stored THEN its error is cut, its end marked
    error = encode_dead_job(long)["error"]
    assert len(error) == MAX_ERROR_LENGTH and error.endswith("...")


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        ("ATTEMPTS_EXHAUSTED", DeadReason.ATTEMPTS_EXHAUSTED),
        (None, DeadReason.PERMANENT),  # a DEAD claim of runtime 0.1 stored no reason
        ("FROM_THE_FUTURE", DeadReason.PERMANENT),
    ],
)
def test_a_dead_claims_stored_reason_is_read_or_taken_as_permanent(
    stored: object, expected: DeadReason
) -> None:
    assert stored_reason(stored) is expected


def test_a_positional_entry_that_is_too_short_is_refused() -> None:
    with pytest.raises(ValueError, match="9 fields, not 3"):
        decode_dead_job(["p", "m-p", "PERMANENT"])
