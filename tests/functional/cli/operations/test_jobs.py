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
from constructs_fifo.runtime.steering.pace import PaceLimit

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


def test_a_refused_steering_command_names_one_fix_for_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a state-mode stack and a claim-mode one
    for state in world(claim_mode=False):
        # WHEN a job is cancelled without --group (state mode needs it)
        assert state.cli("jobs", "cancel", "a1", "--yes")[0] == EXIT_USAGE
        # THEN the error says the problem and one fix, the command's flags (not the Python API's)
        err = capsys.readouterr().err
        assert err.count("Fix:") == 1 and "--group GROUP" in err and "group=" not in err
    for claim in world(claim_mode=True):
        # WHEN a group is cancelled --up-to-seq in claim mode THEN one fix, the command's
        assert claim.cli("groups", "cancel", "ws#1", "--up-to-seq", "3", "--yes")[0] != 0
        err = capsys.readouterr().err
        assert err.count("Fix:") == 1 and "--up-to-seq" in err


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


# --- jobs cancel ----------------------------------------------------------------------------------


def test_jobs_cancel_dry_run_changes_nothing_then_yes_cancels_and_the_group_goes_on(ops: World) -> None:
    # GIVEN ws#1's jobs sent, not yet run
    ops.send("ws#1", "a1", "a2", "a3")
    # WHEN a2 is cancelled with --dry-run, then with --yes --json
    dry_code, dry_out = ops.cli("jobs", "cancel", "a2", "--group", "ws#1", "--dry-run")
    code, out = ops.cli(
        "jobs",
        "cancel",
        "a2",
        "--group",
        "ws#1",
        "--reason",
        "user stopped",
        "--by",
        "ops",
        "--yes",
        "--json",
    )
    ops.drain()
    # THEN the dry run wrote nothing, the cancel reports not started, a2 never ran, a1 and a3 did
    assert dry_code == 0 and "would cancel job a2" in dry_out
    assert code == 0
    assert json.loads(out)["cancelled"]["outcome"] == "NOT_STARTED"
    shown = json.loads(ops.cli("jobs", "show", "a2", "--group", "ws#1", "--json")[1])
    assert (shown["status"], shown["cancelReason"], shown["cancelledBy"]) == (
        "cancelled",
        "user stopped",
        "ops",
    )
    assert json.loads(ops.cli("jobs", "show", "a3", "--group", "ws#1", "--json")[1])["status"] == "succeeded"
    # AND status counts it
    assert ops.cli_json("status")["queues"][0]["cancelledJobs"] == 1


def test_jobs_cancel_of_a_succeeded_job_is_refused_and_names_jobs_show(ops: World) -> None:
    # GIVEN a1 succeeded
    ops.send("ws#1", "a1")
    ops.drain()
    # WHEN it is cancelled
    code, _ = ops.cli("jobs", "cancel", "a1", "--group", "ws#1", "--yes")
    # THEN refused (exit 1), and it is still succeeded
    assert code == 1
    assert json.loads(ops.cli("jobs", "show", "a1", "--group", "ws#1", "--json")[1])["status"] == "succeeded"


# --- groups hold / release -------------------------------------------------------------------------


def test_groups_hold_keeps_the_group_shows_it_held_and_release_runs_it_in_order(ops: World) -> None:
    # GIVEN ws#1 held (dry run first), then jobs sent to it
    dry_code, dry_out = ops.cli("groups", "hold", "ws#1", "--dry-run")
    code, _ = ops.cli("groups", "hold", "ws#1", "--reason", "incident 42", "--yes")
    ops.send("ws#1", "a1", "a2")
    ops.drain()
    # THEN nothing ran: its jobs read held, and status shows the group held, not parked
    assert (dry_code, code) == (0, 0) and "would hold group ws#1" in dry_out
    assert json.loads(ops.cli("jobs", "show", "a1", "--group", "ws#1", "--json")[1])["status"] == "held"
    queue = ops.cli_json("status")["queues"][0]
    assert [held["group"] for held in queue["heldGroups"]] == ["ws#1"]
    assert queue["parkedGroups"] == []
    # AND groups show says who held it, why and when, not a dead job with a malformed body
    shown = ops.cli("groups", "show", "ws#1")[1]
    assert "held by:" in shown and "reason: incident 42" in shown and "held at:" in shown
    assert "has a malformed body" not in shown and not re.search(r"^dead job:", shown, re.MULTILINE)
    # WHEN released
    assert ops.cli("groups", "release", "ws#1", "--yes")[0] == 0
    ops.drain()
    # THEN both jobs succeeded, and releasing again is refused (not held)
    for job in ("a1", "a2"):
        assert (
            json.loads(ops.cli("jobs", "show", job, "--group", "ws#1", "--json")[1])["status"] == "succeeded"
        )
    assert ops.cli("groups", "release", "ws#1", "--yes")[0] == 1


def test_groups_cancel_of_a_held_group_cancels_what_it_keeps(ops: World) -> None:
    # GIVEN ws#1 held, its jobs kept
    ops.cli("groups", "hold", "ws#1", "--yes")
    ops.send("ws#1", "a1", "a2")
    ops.drain()
    # WHEN the group is cancelled, then released
    code, out = ops.cli("groups", "cancel", "ws#1", "--yes", "--json")
    ops.cli("groups", "release", "ws#1", "--yes")
    ops.drain()
    # THEN both are cancelled
    assert code == 0 and json.loads(out)["cancelled"] == ["a1", "a2"]
    for job in ("a1", "a2"):
        assert (
            json.loads(ops.cli("jobs", "show", job, "--group", "ws#1", "--json")[1])["status"] == "cancelled"
        )


def test_groups_cancel_of_a_live_group_cancels_what_was_queued_and_runs_what_is_sent_after(
    ops: World,
) -> None:
    # GIVEN ws#1 live with a1, a2 queued; a dry run first
    ops.send("ws#1", "a1", "a2")
    dry_code, dry_out = ops.cli("groups", "cancel", "ws#1", "--dry-run")
    # WHEN the group is cancelled, a3 sent after, the queue drained
    code, out = ops.cli("groups", "cancel", "ws#1", "--reason", "session closed", "--yes", "--json")
    hold_code, _ = ops.cli("groups", "hold", "ws#1", "--yes")  # refused while the group is cancelling
    shown = ops.cli_json("groups", "show", "ws#1")
    ops.send("ws#1", "a3")
    ops.drain()
    # THEN the dry run said what it would do and changed nothing; a1, a2 read cancelled, a3 succeeded
    assert dry_code == 0 and "marker" in dry_out
    assert code == 0 and json.loads(out)["markerId"]
    assert hold_code == 1
    assert shown["status"] == "CANCELLING" and "until its marker" in shown["notes"][0]
    statuses = {
        job: json.loads(ops.cli("jobs", "show", job, "--group", "ws#1", "--json")[1])["status"]
        for job in ("a1", "a2", "a3")
    }
    assert statuses == {"a1": "cancelled", "a2": "cancelled", "a3": "succeeded"}


def test_groups_cancel_up_to_seq_is_state_modes_and_refused_in_claim_mode_with_the_fix(
    ops: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN claim mode: refused as a usage error, naming the fix, before anything is read
    if ops.claim_mode:
        assert ops.cli("groups", "cancel", "ws#1", "--up-to-seq", "1", "--yes")[0] == EXIT_USAGE
        assert "claim mode has no seqs" in capsys.readouterr().err
        return
    # GIVEN (state mode) a held group keeping s0..s2 with seqs
    ops.cli("groups", "hold", "ws#1", "--yes")
    for n in range(3):
        ops.sqs.send_message(
            QueueUrl=ops.harness.queue_url,
            MessageBody=json.dumps({"jobId": f"s{n}", "type": "t", "payload": {}, "seq": n}),
            MessageGroupId="ws#1",
            MessageDeduplicationId=f"s{n}",
        )
    ops.drain()
    # WHEN it is cancelled up to seq 1
    code, out = ops.cli("groups", "cancel", "ws#1", "--up-to-seq", "1", "--yes", "--json")
    # THEN s0 and s1 only are cancelled: s2 alone is applied after the release
    assert code == 0 and json.loads(out)["cancelled"] == ["s0", "s1"]
    ops.cli("groups", "release", "ws#1", "--yes")
    ops.drain()
    assert ops.harness.log("ws#1") == ["s2"]


def test_groups_run_first_puts_a_fix_ahead_of_a_held_groups_kept_jobs(ops: World, tmp_path: Any) -> None:
    # GIVEN ws#1 held with a1, a2 kept, and a fix written as a job file
    ops.cli("groups", "hold", "ws#1", "--yes")
    ops.send("ws#1", "a1", "a2")
    ops.drain()
    fix = tmp_path / "fix.json"
    fix.write_text(json.dumps({"jobId": "fix1", "type": "apply_patch", "payload": {}}))
    # WHEN it is put first (a live group is refused) and the group released
    assert ops.cli("groups", "run-first", "ws#9", "--job", str(fix), "--yes")[0] == 1
    assert ops.cli("groups", "run-first", "ws#1", "--job", str(fix), "--yes")[0] == 0
    ops.cli("groups", "release", "ws#1", "--yes")
    ops.drain()
    # THEN all three succeeded, the fix first
    shown = {
        job: json.loads(ops.cli("jobs", "show", job, "--group", "ws#1", "--json")[1])
        for job in ("fix1", "a1", "a2")
    }
    assert {job: doc["status"] for job, doc in shown.items()} == dict.fromkeys(shown, "succeeded")
    if ops.claim_mode:
        assert shown["fix1"]["updatedAtEpochMs"] <= shown["a1"]["updatedAtEpochMs"]
    else:
        assert ops.harness.log("ws#1") == ["fix1", "a1", "a2"]


def test_pace_set_show_and_clear_the_override_the_consumers_read(ops: World) -> None:
    # GIVEN a queue without a pace override: pace show says the construct's applies
    assert ops.cli_json("pace", "show")["override"] is None
    assert "override: none" in ops.cli("pace", "show")[1]
    # WHEN an operator sets one (a dry run first), THEN show reads it back, with who set it
    dry_code, dry_out = ops.cli("pace", "set", "--jobs", "60", "--per", "60", "--burst", "5", "--dry-run")
    assert dry_code == 0 and "would set the pace to 60 jobs per 60 s, bursts of 5" in dry_out
    assert ops.cli_json("pace", "show")["override"] is None
    code, _ = ops.cli("pace", "set", "--jobs", "60", "--per", "60", "--burst", "5", "--by", "ops", "--yes")
    override = ops.cli_json("pace", "show")["override"]
    assert code == 0 and (override["jobs"], override["periodSeconds"], override["burst"]) == (60, 60, 5)
    assert override["updatedBy"] == "ops"
    # AND numbers out of range are refused, changing nothing; --clear drops the override
    bad_code, _ = ops.cli("pace", "set", "--jobs", "0", "--per", "60", "--yes")
    assert bad_code != 0 and ops.cli_json("pace", "show")["override"]["jobs"] == 60
    assert ops.cli("pace", "set", "--clear", "--yes")[0] == 0
    assert ops.cli_json("pace", "show")["override"] is None


def test_pace_show_names_the_constructs_pace_and_who_set_the_override_by_its_command() -> None:
    # GIVEN a queue the construct paces (2 jobs a minute per tenant), and one it does not
    limit = PaceLimit(jobs=2, period_seconds=60, burst=2, key="body:payload.tenant")
    for paced in world(claim_mode=True, pace=limit.to_env()):
        # WHEN pace show runs THEN it names the construct's pace, key included
        shown = paced.cli_json("pace", "show")
        assert shown["construct"] == {
            "jobs": 2,
            "periodSeconds": 60,
            "burst": 2,
            "key": "body:payload.tenant",
        }
        assert "2 jobs per 60 s, bursts of 2, key body:payload.tenant" in paced.cli("pace", "show")[1]
        # WHEN an override is set without --by THEN who set it names pace set (not another command),
        # and the text shows when as a time, not epoch milliseconds
        assert paced.cli("pace", "set", "--jobs", "3", "--per", "60", "--yes")[0] == 0
        assert paced.cli_json("pace", "show")["override"]["updatedBy"].endswith("(constructs-fifo pace set)")
        text = paced.cli("pace", "show")[1]
        assert re.search(r"updated at: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d", text), text
        # AND status shows the limit in force, its key and where it comes from
        status = paced.cli_json("status")["queues"][0]["pace"]
        assert (status["construct"]["key"], status["override"]["jobs"]) == ("body:payload.tenant", 3)
        status_text = paced.cli("status")[1]
        assert "3 jobs per 60 s, bursts of 3 per body:payload.tenant (override (pace set))" in status_text
        # AND --clear with numbers is refused, the override unchanged
        code, _ = paced.cli("pace", "set", "--clear", "--jobs", "5", "--yes")
        assert code != 0 and paced.cli_json("pace", "show")["override"]["jobs"] == 3
        # AND a job not recorded yet on a paced queue reads unknown with a note that it may wait for a token
        assert "waiting for its pace key's token" in paced.cli("jobs", "show", "nope", "--wait", "0")[1]
    for unpaced in world(claim_mode=False):
        assert unpaced.cli_json("pace", "show")["construct"] is None
        assert unpaced.cli_json("status")["queues"][0]["pace"] is None
        assert "\npace: not paced\n" in unpaced.cli("status")[1]
        text = unpaced.cli("pace", "show")[1]
        assert "not paced" in text and "the construct's pace applies" not in text


def test_groups_cancel_running_says_whether_a_job_was_running_or_that_state_mode_needs_no_flag(
    ops: World,
) -> None:
    # GIVEN ws#1 live with a1 queued and nothing of it running
    ops.send("ws#1", "a1")
    # WHEN it is cancelled with --running
    code, out = ops.cli("groups", "cancel", "ws#1", "--running", "--yes")
    # THEN claim mode says no job of it was running; state mode notes the flag changes nothing, and why
    assert code == 0
    if ops.claim_mode:
        assert "no job of ws#1 was running" in out
    else:
        note = next(line for line in out.splitlines() if "--running" in line)
        assert "changes nothing in state mode" in note and "never committed" in note
        assert "leave --running out" in note and "no job of ws#1 was running" not in out


def test_groups_cancel_running_of_a_running_job_does_not_say_none_was_running() -> None:
    for ops in world(claim_mode=True):
        # GIVEN r1 of ws#1 running on a worker (its claim taken, its lease live)
        _claimed(ops, "r1", lease_ms=60_000)
        # WHEN the group is cancelled with --running
        code, out = ops.cli("groups", "cancel", "ws#1", "--running", "--yes")
        # THEN the plan names the running job and nothing claims none was running
        assert code == 0 and "running now: r1" in out
        assert "no job of ws#1 was running" not in out


def test_groups_cancel_and_hold_notes_speak_of_the_queues_mode_only(ops: World) -> None:
    # GIVEN ws#1 live with a1 queued; WHEN it is cancelled (a dry run), and ws#2 held (a dry run)
    ops.send("ws#1", "a1")
    cancel_out = ops.cli("groups", "cancel", "ws#1", "--dry-run")[1]
    hold_out = ops.cli("groups", "hold", "ws#2", "--dry-run")[1]
    # THEN each note says what a batch in flight does in this queue's mode, and names no mode
    notes = [line for line in (cancel_out + hold_out).splitlines() if line.startswith("note:")]
    assert len(notes) == 2 and not any("mode" in line.lower() for line in notes)
    in_flight = "may still start" if ops.claim_mode else "applies nothing"
    assert in_flight in cancel_out
    assert ("may still start" if ops.claim_mode else "nothing of it is applied") in hold_out


def test_jobs_show_without_group_of_a_held_job_hints_to_pass_the_group() -> None:
    for ops in world(claim_mode=True):
        # GIVEN ws#1 held with a1 kept (no claim yet), and b1 of ws#2 succeeded
        ops.cli("groups", "hold", "ws#1", "--yes")
        ops.send("ws#1", "a1")
        ops.send("ws#2", "b1")
        ops.drain()
        # WHEN each is shown without --group, and a1 with it
        unknown = ops.cli("jobs", "show", "a1")[1]
        held = ops.cli("jobs", "show", "a1", "--group", "ws#1")[1]
        succeeded = ops.cli("jobs", "show", "b1")[1]
        # THEN a1 without --group reads unknown with the hint to pass it; with it, held and no hint;
        # b1, known by its claim, has no hint
        assert "unknown" in unknown and "pass --group GROUP" in unknown
        assert "held" in held and "--group" not in held
        assert "succeeded" in succeeded and "--group" not in succeeded
