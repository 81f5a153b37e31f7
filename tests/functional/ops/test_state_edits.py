"""state_edits.py through ``groups skip-gap``: a state-mode group waiting on a missing seq goes on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from constructs_fifo.cli import EXIT_VIOLATIONS

from ..ops_world import World, world


@pytest.fixture
def state_world() -> Iterator[World]:
    yield from world(claim_mode=False)


def test_skip_gap_gives_up_the_missing_seqs_and_the_buffered_jobs_apply(state_world: World) -> None:
    # GIVEN a group that applied seq 0 and buffered 3 and 4: seq 1 and 2 never came
    state_world.send_seq("ws#s", ("s0", 0), ("s3", 3), ("s4", 4))
    state_world.drain()
    assert state_world.harness.log("ws#s") == ["s0"]
    gaps = state_world.cli_json("groups", "list", "--gaps")["groups"]
    assert [(g["group"], g["status"], g["lastSeq"], g["buffered"]) for g in gaps] == [("ws#s", "GAP", 0, 2)]
    assert state_world.cli_json("status")["queues"][0]["openSequenceGaps"] == ["ws#s"]

    # WHEN the gap is skipped (a dry run first) and the group is woken
    before = state_world.snapshot()
    assert state_world.cli("groups", "skip-gap", "ws#s", "--dry-run")[0] == 0
    assert state_world.snapshot() == before
    code, out = state_world.cli("groups", "skip-gap", "ws#s", "--yes")
    assert code == 0, out
    state_world.drain()

    # THEN seq 1..2 are recorded as given up and the buffered jobs applied in order
    assert state_world.harness.log("ws#s") == ["s0", "s3", "s4"]
    shown = state_world.cli_json("state", "show", "ws#s")
    assert (shown["lastSeq"], shown["bufferedSeqs"], [(r["first"], r["last"]) for r in shown["skipped"]]) == (
        4,
        [],
        [(1, 2)],
    )
    # AND a second skip is refused: no gap left
    assert state_world.cli("groups", "skip-gap", "ws#s", "--yes")[0] == EXIT_VIOLATIONS
