"""``constructs-fifo jobs show``: one job's outcome from a deployed-looking stack, in both modes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_USAGE
from constructs_fifo.cli.operations.jobs import EXIT_NOT_SETTLED
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ...ops_world import World, world


@pytest.fixture(params=["claim", "state"])
def ops(request: pytest.FixtureRequest) -> Iterator[World]:
    yield from world(claim_mode=request.param == "claim")


def _poison(job: Job, *_: Any) -> None:
    raise PermanentJobError(f"job {job.id}: the patch does not apply")


def test_jobs_show_tells_succeeded_dead_and_parked_apart_with_exit_codes(ops: World) -> None:
    # GIVEN ws#1: a1 succeeds, a2 dies and parks the group, a3 waits behind it
    ops.harness.behaviour["a2"] = _poison
    ops.send("ws#1", "a1", "a2", "a3")
    ops.drain()
    # WHEN each is shown with --json
    shown = {job: ops.cli("jobs", "show", job, "--group", "ws#1", "--json") for job in ("a1", "a2", "a3")}
    documents = {job: json.loads(out) for job, (_, out) in shown.items()}
    # THEN the statuses, the exit codes (0 succeeded, 1 dead or parked) and the convention's keys
    assert {job: (code, documents[job]["status"]) for job, (code, _) in shown.items()} == {
        "a1": (0, "succeeded"),
        "a2": (1, "dead"),
        "a3": (1, "parked"),
    }
    assert documents["a2"]["deadReason"] == "PERMANENT" and documents["a2"]["parkedGroup"] == "ws#1"
    assert documents["a3"]["parkedBehind"] == "a2"
    assert documents["a1"]["mode"] == ("claim" if ops.claim_mode else "state")
    if ops.claim_mode:
        assert {"updatedAt", "updatedAtEpochMs"} <= set(documents["a1"])
    else:
        assert documents["a1"]["stateVersion"] >= 1


def test_jobs_show_of_a_job_never_sent_is_not_settled_and_waits_out_its_time(ops: World) -> None:
    # GIVEN nothing sent; WHEN shown with --wait 0 (one read)
    code, out = ops.cli("jobs", "show", "nope", "--group", "ws#9", "--wait", "0")
    # THEN it is unknown, exit 4, and the lines say what unknown cannot tell apart
    assert code == EXIT_NOT_SETTLED
    assert "unknown" in out and "never sent" in out


def test_jobs_show_in_state_mode_without_a_group_names_the_fix(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a state-mode stack; WHEN a job is shown without --group
    for state in world(claim_mode=False):
        code = state.cli("jobs", "show", "a1")[0]
        # THEN it refuses as a usage error, naming the flag to pass
        assert code == EXIT_USAGE
        assert "pass --group GROUP" in capsys.readouterr().err
