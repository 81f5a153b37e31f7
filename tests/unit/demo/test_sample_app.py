"""The sample app's contract: group ids, and the payloads that ask the job code to fail.

The job code (``lambda/``) is held to this contract in ``tests/unit/test_agent_worker.py``.
"""

from __future__ import annotations

from constructs_fifo.demo.sample_app import (
    OUTPUTS,
    SIMULATE,
    group_of,
    poison,
    transient_failure,
    workspace_of,
)


def test_groups_round_trip_and_failure_payloads_follow_the_contract() -> None:
    assert group_of("ws-s7-03") == "ws#ws-s7-03"
    assert workspace_of(group_of("ws-s7-03")) == "ws-s7-03"
    assert poison() == {SIMULATE: "poison"}
    assert transient_failure(2) == {SIMULATE: {"fail_attempts": 2}}


def test_every_output_is_named_once() -> None:
    assert len(set(OUTPUTS)) == len(OUTPUTS) == 12
