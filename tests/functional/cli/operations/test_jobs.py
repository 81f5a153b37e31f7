"""``constructs-fifo jobs show``: one job's outcome from a deployed-looking stack, in both modes."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_USAGE
from constructs_fifo.cli.operations.jobs import EXIT_NOT_SETTLED
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ...ops_world import World, world
from ...runtime_harness import TABLE_NAME


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


def _claimed(ops: World, job_id: str, *, lease_ms: int) -> tuple[ClaimStore, str]:
    """The job's claim taken as a worker takes it (the runtime's store); its owner token."""
    store = ClaimStore(TABLE_NAME, ops.dynamodb)
    job = Job(job_id, "ws#1", "apply_patch", {}, 1, f"m-{job_id}", {})
    claim = store.claim(job, lease_ms=lease_ms)
    assert claim.owner is not None
    return store, claim.owner


def test_jobs_show_tells_a_released_run_from_a_crash() -> None:
    for ops in world(claim_mode=True):
        # GIVEN r1, whose worker was stopped and released its lease (a heartbeat's renew to 0), and c1,
        # whose worker went away with its lease running out
        store, owner = _claimed(ops, "r1", lease_ms=60_000)
        assert store.renew("r1", owner, lease_ms=0)
        _claimed(ops, "c1", lease_ms=1)
        time.sleep(0.01)
        # WHEN each is shown
        released = ops.cli("jobs", "show", "r1")
        crashed = ops.cli("jobs", "show", "c1")
        # THEN neither settled (the next delivery retries both), and each says what happened
        assert released[0] == crashed[0] == EXIT_NOT_SETTLED
        assert "released" in released[1] and "crashed" not in released[1], released[1]
        assert "crashed or timed out" in crashed[1] and "released" not in crashed[1], crashed[1]
        # AND --json says it as data too
        assert json.loads(ops.cli("jobs", "show", "r1", "--json")[1])["leaseReleased"] is True
        assert json.loads(ops.cli("jobs", "show", "c1", "--json")[1])["leaseReleased"] is False


def test_jobs_show_prints_times_as_a_person_reads_them() -> None:
    for ops in world(claim_mode=True):
        # GIVEN a job running under a live lease of 5 minutes
        _claimed(ops, "l1", lease_ms=300_000)
        # WHEN it is shown as text (piped) and as JSON
        code, out = ops.cli("jobs", "show", "l1")
        document = json.loads(ops.cli("jobs", "show", "l1", "--json")[1])
        # THEN the text has ISO-8601 UTC and how far off it is, never raw epoch milliseconds
        assert code == EXIT_NOT_SETTLED
        assert re.search(r"lease expires: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z \(in [45] min\)", out), out
        assert not re.search(r"\b1\d{12}\b", out), out
        # AND the JSON keeps both forms, the ISO time and its epoch milliseconds
        assert document["leaseExpiresAt"].endswith("Z")
        assert isinstance(document["leaseExpiresAtEpochMs"], int)


def test_after_a_resume_jobs_show_keeps_the_failed_history_of_the_job_that_died() -> None:
    for ops in world(claim_mode=True):
        # GIVEN a2 died (its group parked), was fixed, and its group resumed (its DEAD claim reset)
        ops.harness.behaviour["a2"] = _poison
        ops.send("ws#1", "a1", "a2", "a3")
        ops.drain()
        assert ops.cli("groups", "resume", "ws#1", "--yes")[0] == 0
        # WHEN it is shown before its retry runs
        waiting = json.loads(ops.cli("jobs", "show", "a2", "--json")[1])
        # THEN it has not run again yet, and its earlier attempt is still counted, its error kept
        assert (waiting["status"], waiting["earlierAttempts"]) == ("pending", 1), waiting
        assert "the patch does not apply" in waiting["error"]
        # WHEN the retry runs and succeeds
        del ops.harness.behaviour["a2"]
        ops.drain()
        code, out = ops.cli("jobs", "show", "a2")
        document = json.loads(ops.cli("jobs", "show", "a2", "--json")[1])
        # THEN it succeeded on its first attempt since the reset, after one before it
        assert code == 0 and (document["attempt"], document["earlierAttempts"]) == (1, 1), document
        assert "attempts before a reset: 1" in out, out
