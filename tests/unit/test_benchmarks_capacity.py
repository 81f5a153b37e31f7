"""DynamoDB's size and capacity rules as figure 9 applies them (benchmarks/capacity.py)."""

from __future__ import annotations

import base64

import pytest

from benchmarks.capacity import CapacityMeter, attribute_bytes, item_bytes, read_units, write_units


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ({"S": "héllo"}, 6),  # UTF-8 bytes, not characters
        ({"N": "12345"}, 4),  # 5 significant digits: 3 bytes + 1
        ({"N": "1000000"}, 2),  # trailing zeroes trimmed: 1 digit
        ({"N": "0.00012"}, 2),  # leading zeroes trimmed: 2 digits
        ({"B": base64.b64encode(b"\x00" * 10).decode()}, 10),  # raw bytes, not base64
        ({"BOOL": False}, 1),
        ({"NULL": True}, 1),
        ({"L": []}, 3),  # an empty list still costs its 3 bytes
        ({"L": [{"S": "ab"}, {"N": "7"}]}, 3 + (1 + 2) + (1 + 2)),  # 1 byte per element
        ({"M": {"key": {"S": "v"}}}, 3 + 1 + 3 + 1),  # a map's element carries its name
        ({"SS": ["a", "bc"]}, 3),
    ],
)
def test_an_attribute_value_is_sized_by_the_published_rules(value: dict[str, object], size: int) -> None:
    # GIVEN / WHEN / THEN
    assert attribute_bytes(value) == size


def test_an_item_is_its_attribute_names_plus_their_values_and_no_item_is_nothing() -> None:
    # GIVEN a claim-like item
    item = {"id": {"S": "job-1"}, "version": {"N": "3"}}
    # WHEN / THEN names count: "id" 2 + 5, "version" 7 + 2
    assert item_bytes(item) == 16
    assert item_bytes(None) == 0


def test_writes_take_1_kb_steps_reads_4_kb_steps_with_minimums_and_multipliers() -> None:
    # GIVEN / WHEN / THEN a write: 1 unit per started KB, at least 1, twice in a transaction
    assert (write_units(0), write_units(1024), write_units(1025)) == (1.0, 1.0, 2.0)
    assert write_units(2500, transactional=True) == 6.0
    # THEN a read: 1 unit per started 4 KB strongly consistent, half eventually, twice transactional
    assert (read_units(0, consistent=True), read_units(4097, consistent=True)) == (1.0, 2.0)
    assert read_units(8192, consistent=False) == 1.0
    assert read_units(100, consistent=True, transactional=True) == 2.0


def test_the_meter_counts_the_larger_of_before_and_after_and_rounds_batch_items_each() -> None:
    # GIVEN a meter, a 3 KB item shrunk to 100 bytes, and two small items read in one batch
    meter = CapacityMeter()
    big = {"k": {"S": "x" * 3000}}
    small = {"k": {"S": "x" * 100}}
    # WHEN they are metered
    meter.wrote("PutItem", big, small, transactional=False)
    meter.read("BatchGetItem", [small, None], consistent=True, each=True, transactional=False)
    meter.read("Query", [small, small], consistent=True, each=False, transactional=False)
    # THEN the write paid for the 3 KB before image; each batch item (even a missing one) a step;
    # the query's items were rounded together
    assert meter.write_units == 3.0
    assert meter.read_units == 2.0 + 1.0
    assert (meter.items_written, meter.bytes_written) == (1, item_bytes(big))
    # WHEN reset THEN nothing is left
    meter.reset()
    assert (meter.write_units, meter.read_units, meter.by_operation) == (0.0, 0.0, {})
