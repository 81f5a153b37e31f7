"""The operations commands end to end, in both modes, on in-process moto with the real runtime.

A poison job parks its group; ``status`` and ``groups list --parked`` show it; ``groups show`` shows the
dead job's error; ``groups resume --skip-dead`` sends it to the DLQ and replays the kept jobs in order;
``dlq list`` shows it with its reason; ``dlq redrive --job J --reset`` runs it again; ``claims release``
refuses a live lease; every ``--dry-run`` changes nothing; the queue ends empty.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from typing import Any

import pytest

from constructs_fifo.cli import EXIT_USAGE, EXIT_VIOLATIONS
from constructs_fifo.runtime.claim.store import ClaimStore
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job

from ...ops_world import World, world
from ...runtime_harness import TABLE_NAME

POISON = "a2"
GROUPS = {"ws#1": ["a1", POISON, "a3", "a4"], "ws#2": ["b1", "b2", "b3"]}


@pytest.fixture(params=["claim", "state"])
def ops(request: pytest.FixtureRequest) -> Iterator[World]:
    yield from world(claim_mode=request.param == "claim")


def _poison(job: Job, *_: Any) -> None:
    raise PermanentJobError(f"job {job.id}: the patch does not apply")


def _ran(ops: World) -> list[str]:
    harness = ops.harness
    return list(harness.ran if ops.claim_mode else harness.runs)


def _unchanged(ops: World, argv: list[str]) -> None:
    before = ops.snapshot()
    code, out = ops.cli(*argv, "--dry-run")
    assert code == 0, out
    assert "dry run: nothing was changed" in out
    assert ops.snapshot() == before, argv


def test_a_poison_job_is_seen_skipped_redriven_and_run_again(ops: World) -> None:
    started = time.monotonic()
    # GIVEN a poison job in front of two healthy ones in ws#1, and a healthy ws#2
    ops.harness.behaviour[POISON] = _poison
    for group, jobs in GROUPS.items():
        ops.send(group, *jobs)

    # WHEN the queue drains THEN ws#1 parks at the poison job, ws#2 runs
    ops.drain()
    assert _ran(ops) == ["a1", POISON, "b1", "b2", "b3"] or sorted(_ran(ops)) == sorted(
        ["a1", POISON, "b1", "b2", "b3"]
    )
    status = ops.cli_json("status")["queues"][0]
    assert status["parkedGroups"] == ["ws#1"]
    assert status["largestBacklogs"] == [{"group": "ws#1", "jobs": 3}]
    parked = ops.cli_json("groups", "list", "--parked")["groups"]
    assert [(g["group"], g["status"], g["deadJobId"], g["kept"]) for g in parked] == [
        ("ws#1", "PARKED", POISON, 3)
    ]
    shown = ops.cli_json("groups", "show", "ws#1")
    assert shown["dead"]["errorType"] == "PermanentJobError"
    assert "the patch does not apply" in shown["dead"]["error"]
    assert [k["jobId"] for k in shown["kept"]] == [POISON, "a3", "a4"]

    # AND a dry-run resume changes nothing
    _unchanged(ops, ["groups", "resume", "ws#1", "--skip-dead"])

    # WHEN the group is resumed skipping the dead job THEN it goes to the DLQ, the kept jobs run in order
    code, out = ops.cli("groups", "resume", "ws#1", "--skip-dead", "--yes")
    assert code == 0, out
    assert "done: resumed group ws#1" in out
    ops.drain()
    assert _ran(ops)[-2:] == ["a3", "a4"]
    assert ops.cli_json("groups", "list", "--parked")["groups"] == []
    dead = ops.cli_json("dlq", "list")["messages"]
    assert [(m["jobId"], m["group"], m["reason"], m["errorType"]) for m in dead] == [
        (POISON, "ws#1", "PERMANENT", "PermanentJobError")
    ]
    assert ops.cli_json("dlq", "show", POISON)["messages"][0]["tables"] != {}

    # AND dry runs of every mutator change nothing
    _unchanged(ops, ["dlq", "redrive", "--job", POISON, "--reset"])
    _unchanged(ops, ["dlq", "redrive", "--reset"])
    _unchanged(ops, ["dlq", "drop", POISON])

    # WHEN the cause is fixed and the job redriven with --reset THEN it runs again, once
    del ops.harness.behaviour[POISON]
    code, out = ops.cli("dlq", "redrive", "--job", POISON, "--reset", "--yes")
    assert code == 0, out
    ops.drain()
    assert _ran(ops)[-1] == POISON
    assert _ran(ops).count(POISON) == 2
    assert ops.cli_json("dlq", "list")["messages"] == []
    if ops.claim_mode:
        assert ops.cli_json("claims", "show", POISON)["claim"]["status"] == "SUCCEEDED"
    else:
        assert POISON in ops.cli_json("state", "show", "ws#1")["state"]["log"]

    # THEN the queue ends empty and nothing is parked
    final = ops.cli_json("status")["queues"][0]
    assert (final["visible"], final["inFlight"], final["deadLetterQueueDepth"], final["parkedGroups"]) == (
        0,
        0,
        0,
        [],
    )
    figures = {
        "mode": "claim" if ops.claim_mode else "state",
        "jobs": sum(len(jobs) for jobs in GROUPS.values()),
        "groups": len(GROUPS),
        "parked": 1,
        "resumed": 1,
        "redriven": 1,
        "batches": ops.batches,
        "seconds": round(time.monotonic() - started, 2),
    }
    print(f"ops e2e figures: {figures}")


def test_claims_release_refuses_a_live_lease_and_releases_an_expired_one(ops: World) -> None:
    if not ops.claim_mode:
        # GIVEN state mode WHEN a claim command runs THEN it says what to use instead (exit 2)
        code, _ = ops.cli("claims", "show", "x")
        assert code == EXIT_USAGE
        return
    # GIVEN one job claimed under a live lease, one whose lease expired (its worker crashed)
    live = ClaimStore(TABLE_NAME, ops.dynamodb)
    crashed = ClaimStore(TABLE_NAME, ops.dynamodb, clock=lambda: time.time() - 3600)
    live.claim(
        Job(id="live", group="ws#9", type="t", payload={}, attempt=1, message_id="m1", body={}),
        lease_ms=600_000,
    )
    crashed.claim(
        Job(id="gone", group="ws#9", type="t", payload={}, attempt=1, message_id="m2", body={}),
        lease_ms=1_000,
    )

    # WHEN the live one is released THEN it is refused, nothing changes
    before = ops.snapshot()
    code, _ = ops.cli("claims", "release", "live", "--yes")
    assert code == EXIT_VIOLATIONS
    assert ops.snapshot() == before
    # AND status names the crashed one
    assert ops.cli_json("status")["queues"][0]["expiredInFlightClaims"] == ["gone"]

    # WHEN the expired one is released (dry run first) THEN it becomes FAILED and runnable
    _unchanged(ops, ["claims", "release", "gone"])
    code, out = ops.cli("claims", "release", "gone", "--yes")
    assert code == 0, out
    assert ops.cli_json("claims", "show", "gone")["claim"]["status"] == "FAILED"
    assert ops.cli_json("status")["queues"][0]["expiredInFlightClaims"] == []


def test_plain_lines_off_a_terminal_and_a_question_on_one(
    ops: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a parked group
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, "a3")
    ops.drain()

    # WHEN groups list runs off a terminal THEN it prints a title, a header line and tab-separated rows
    code, out = ops.cli("groups", "list", "--parked")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "# groups of OpsStack/Jobs"
    state_columns = [] if ops.claim_mode else ["last seq", "buffered"]  # no seq bookkeeping in claim mode
    assert lines[1].split("\t") == ["group", "status", "dead job", "reason", "kept", *state_columns]
    assert lines[2].split("\t")[:5] == ["ws#1", "PARKED", POISON, "PERMANENT", "2"]

    # WHEN a mutator runs on a terminal and the operator answers no THEN nothing changes (exit 1)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("builtins.input", lambda prompt: "n")
    before = ops.snapshot()
    code, out = ops.cli("groups", "resume", "ws#1", "--skip-dead", tty=True)
    assert code == EXIT_VIOLATIONS
    assert ops.snapshot() == before
    # AND with --yes it does not ask
    monkeypatch.setattr("builtins.input", lambda prompt: pytest.fail("asked despite --yes"))
    code, out = ops.cli("groups", "resume", "ws#1", "--skip-dead", "--yes", tty=True)
    assert code == 0
    assert "resumed group ws#1" in out


@pytest.mark.parametrize("columns", [80, 200])
def test_a_terminal_of_any_width_shows_every_id_whole(
    ops: World, monkeypatch: pytest.MonkeyPatch, columns: int
) -> None:
    # GIVEN a dead job with a long id and group in the DLQ, and a terminal this wide
    job, group = "job-0123456789-abcdef", "ws#workspace-0123456789"
    ops.send_dead(group, job)
    monkeypatch.setenv("COLUMNS", str(columns))
    # WHEN the DLQ is listed on it
    code, styled = ops.cli("dlq", "list", tty=True)
    out = re.sub(r"\x1b\[[0-9;]*m", "", styled)  # the terminal's colours
    # THEN the job id, group and error are printed whole on one line each, nothing cut with an ellipsis
    assert code == 0
    assert "…" not in out
    assert any(job in line for line in out.splitlines())
    assert any(group in line for line in out.splitlines())
    assert max(len(line) for line in out.splitlines()) <= columns
    # AND a table that does not fit becomes one block per row
    assert ("one block per row" in out) == (columns == 80)


def test_ctrl_c_at_the_question_changes_nothing_and_says_so(
    ops: World, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN a parked group and an operator at a terminal
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, "a3")
    ops.drain()
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)

    def interrupt(prompt: str) -> str:
        raise KeyboardInterrupt

    monkeypatch.setattr("builtins.input", interrupt)
    before = ops.snapshot()
    # WHEN Ctrl-C is pressed at the question
    code, out = ops.cli("groups", "resume", "ws#1", "--skip-dead", tty=True)
    # THEN exit 130 (interrupted), nothing changed, and it says so on its own line
    assert code == 130
    assert "\nnothing was changed" in out
    assert ops.snapshot() == before
    assert "Traceback" not in capsys.readouterr().err


def test_a_mistyped_group_is_named_with_the_parked_one_and_a_fix_for_this_queue(
    ops: World, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN ws#night parked
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#night", "a1", POISON)
    ops.drain()
    # WHEN the operator types ws#nigth with --queue
    code, _ = ops.cli("groups", "resume", "ws#nigth", "--queue", "Jobs")
    err = capsys.readouterr().err
    # THEN refused (exit 1), naming the parked group it was probably meant to be, and the fix's
    # command carries the same --stack and --queue so it can be pasted
    assert code == EXIT_VIOLATIONS
    assert "group 'ws#nigth'" in err and "parked groups with a close name: ws#night. Fix" in err
    assert "`constructs-fifo groups list --parked --region us-east-1 --stack OpsStack --queue Jobs`" in err
    if not ops.claim_mode:
        # AND in state mode, `groups show` of a group without a state item says no job of it ran
        code, _ = ops.cli("groups", "show", "ws#nigth")
        assert code == EXIT_VIOLATIONS
        assert "no job of it has run; parked groups with a close name: ws#night" in capsys.readouterr().err


def test_resume_counts_the_kept_jobs_behind_the_dead_one(ops: World) -> None:
    # GIVEN a group parked at its poison job with two jobs behind it (three kept records)
    ops.harness.behaviour[POISON] = _poison
    ops.send("ws#1", "a1", POISON, "a3", "a4")
    ops.drain()
    # WHEN a resume is planned
    code, out = ops.cli("groups", "resume", "ws#1", "--skip-dead", "--dry-run")
    # THEN it names two jobs to run after the dead one, not three
    assert code == 0
    assert "then run the 2 kept job(s) behind it in order" in out
