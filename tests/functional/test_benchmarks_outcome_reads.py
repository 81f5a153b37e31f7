"""Figure 10: the read units one poll of JobOutcomes.wait consumes, by DynamoDB's rules."""

from __future__ import annotations

from benchmarks.outcome_reads import measure_outcome_reads


def test_a_poll_costs_one_read_unit_in_claim_mode_and_the_state_items_size_in_state_mode() -> None:
    # GIVEN / WHEN one poll of each case is metered on the in-memory responder
    reads = {
        (read.mode, read.case): (read.read_units, read.calls, read.status) for read in measure_outcome_reads()
    }
    # THEN claim mode reads 1 unit a poll (2 while there is no claim and the group's header is read too),
    # and the last poll of a succeeded job pays for its result's size: 64 KiB is 17 units
    assert reads["claim", "running (IN_FLIGHT claim)"] == (1.0, 1, "running")
    assert reads["claim", "no claim yet (job id only)"] == (1.0, 1, "pending")
    assert reads["claim", "no claim yet, group given (its park header too)"] == (2.0, 2, "pending")
    # AND a dead claim reads its group's park header too (parked at it?): 2 units, as docs/outcomes.md says
    assert reads["claim", "dead (DEAD claim, its group's park header too)"] == (2.0, 2, "dead")
    # AND 100 jobs waited for together cost one request a poll: a unit per claim, in one BatchGetItem
    assert reads["claim", "100 running jobs at once (wait_many: one BatchGetItem a poll)"] == (
        100.0,
        1,
        "running",
    )
    assert reads["claim", "succeeded, 1 KB result (the last poll)"] == (1.0, 1, "succeeded")
    assert reads["claim", "succeeded, 64 KiB result (the last poll)"] == (17.0, 1, "succeeded")
    # AND state mode reads its state item (1 unit per 4 KB) and the park header (1 unit)
    assert reads["state", "state item of 0.1 KB, applied"] == (2.0, 2, "succeeded")
    assert reads["state", "state item of 100 KB, applied"] == (27.0, 2, "succeeded")
    assert reads["state", "state item of 10 KB, not applied yet"] == (4.0, 2, "pending")
