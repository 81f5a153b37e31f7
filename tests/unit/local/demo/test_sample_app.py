"""The sample app's contract: its one workspace read, and the payloads that ask the worker to fail.

The worker (``lambda/agent_worker.py``) is held to this contract in ``tests/unit/test_agent_worker.py``.
"""

from __future__ import annotations

from typing import Any

from constructs_fifo.local.demo.sample_app import (
    SIMULATE,
    WORKSPACE_KEY,
    group_of,
    poison,
    read_workspace,
    transient_failure,
)


class _Table:
    """A DynamoDB client holding one workspace item, as GetItem returns it."""

    def __init__(self, item: dict[str, Any] | None) -> None:
        self.item = item
        self.asked: list[dict[str, Any]] = []

    def get_item(self, **request: Any) -> dict[str, Any]:
        self.asked.append(request)
        return {"Item": self.item} if self.item is not None else {}


def test_read_workspace_is_one_consistent_read_in_plain_values() -> None:
    # GIVEN a workspace item with DynamoDB numbers, lists and a string set
    table = _Table({"n": {"N": "3"}, "f": {"N": "1.5"}, "l": {"L": [{"N": "2"}]}, "s": {"SS": ["b", "a"]}})
    # WHEN it is read
    item = read_workspace(table, "workspaces", "w1")  # type: ignore[arg-type]
    # THEN whole numbers are ints, others floats, sets sorted lists; and the read was consistent, by key
    assert item == {"n": 3, "f": 1.5, "l": [2], "s": ["a", "b"]}
    assert item is not None and [type(item[k]) for k in ("n", "f")] == [int, float]
    assert table.asked == [
        {"TableName": "workspaces", "Key": {WORKSPACE_KEY: {"S": "w1"}}, "ConsistentRead": True}
    ]


def test_an_absent_workspace_reads_as_none() -> None:
    assert read_workspace(_Table(None), "workspaces", "nobody") is None  # type: ignore[arg-type]


def test_groups_and_failure_payloads_follow_the_contract() -> None:
    assert group_of("ws-s7-03") == "ws#ws-s7-03"
    assert poison() == {SIMULATE: "poison"}
    assert transient_failure(2) == {SIMULATE: {"fail_attempts": 2}}
