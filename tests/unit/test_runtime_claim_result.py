"""A job's return value on its SUCCEEDED claim: stored as compact JSON when it is JSON and small enough."""

from __future__ import annotations

import pytest

from constructs_fifo.runtime.claim.result import encode_result, stored_result
from constructs_fifo.runtime.constants import ATTR_RESULT, MAX_RESULT_BYTES


def test_a_json_value_is_stored_compact_and_read_back() -> None:
    # GIVEN a JSON return value; WHEN encoded and read from a decoded claim item
    text, dropped = encode_result({"passed": True, "failures": [], "note": "ünïcode"})
    # THEN it is compact JSON, kept as UTF-8 text, and reads back equal
    assert (text, dropped) == ('{"passed":true,"failures":[],"note":"ünïcode"}', None)
    assert stored_result({ATTR_RESULT: text}) == {"passed": True, "failures": [], "note": "ünïcode"}


def test_none_is_stored_as_nothing_and_an_old_item_reads_as_none() -> None:
    # GIVEN a job that returned None, and a claim written before results existed
    # THEN nothing is stored, and the old item reads as no result
    assert encode_result(None) == (None, None)
    assert stored_result({"id": "j1", "status": "SUCCEEDED"}) is None


@pytest.mark.parametrize(
    ("value", "why"),
    [({1, 2}, "not JSON"), (float("nan"), "not JSON"), ("x" * (MAX_RESULT_BYTES + 1), "more than the")],
    ids=["set", "nan", "too-large"],
)
def test_a_value_not_json_or_too_large_is_not_stored_and_the_reason_says_why(value: object, why: str) -> None:
    # GIVEN a return value that is not JSON or passes the limit; WHEN encoded
    text, dropped = encode_result(value)
    # THEN nothing is stored and the reason names the rule
    assert text is None and dropped is not None and why in dropped


def test_the_limit_counts_utf8_bytes_and_a_value_at_it_is_stored() -> None:
    # GIVEN a string whose JSON is exactly the limit (2 quote bytes + the rest)
    at_limit = "x" * (MAX_RESULT_BYTES - 2)
    # THEN it is stored; one multi-byte character more passes the limit
    assert encode_result(at_limit)[0] is not None
    assert encode_result(at_limit[:-1] + "é")[0] is None
