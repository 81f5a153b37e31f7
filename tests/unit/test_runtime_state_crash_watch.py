"""The crash watch: its pure decisions (marker found -> isolate; count; dead) and its writes, faked."""

from __future__ import annotations

import json
from typing import Any

import pytest

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.exceptions import WorkerCrashedError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.apply import run_group
from constructs_fifo.runtime.state.core.records import BatchSettings, Bookkeeping, GroupState, Outcome
from constructs_fifo.runtime.state.crash_watch import CrashWatch, RunInterrupted, plan_run
from constructs_fifo.runtime.state.storage.runs import GROUP_RUN, FoundRun, RunMarker
from constructs_fifo.runtime.types import SQSRecord

GROUP = "ws#1"
MAX_ATTEMPTS = 3


def job(job_id: str) -> SQSRecord:
    body = json.dumps({"jobId": job_id, "type": "t"})
    return {"messageId": f"m-{job_id}", "body": body, "attributes": {"MessageGroupId": GROUP}}


class Writer:
    """A fake group table's run item: records each marker write; ``refuse`` makes them lose their race."""

    def __init__(self, *, refuse: bool = False, fail: Exception | None = None) -> None:
        self.writes: list[tuple[int, RunMarker, str | None, bool]] = []
        self.refuse = refuse
        self.fail = fail

    def mark_run(
        self, group: str, of_version: int, marker: RunMarker, *, replaces: str | None, read: bool
    ) -> str | None:
        if self.fail is not None:
            raise self.fail
        self.writes.append((of_version, marker, replaces, read))
        return None if self.refuse else f"t{len(self.writes)}"


class Log:
    """The user's transition: appends the job id to ``log``; records the attempt each run saw."""

    def __init__(self) -> None:
        self.runs: list[tuple[str, int]] = []

    def __call__(self, job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        self.runs.append((job.id, job.attempt))
        return {"log": [*(state or {}).get("log", []), job.id]}


def watched(
    found: RunMarker | None,
    *,
    redelivered: bool = True,
    read: GroupState | None = None,
    run_item: FoundRun | None = None,
) -> tuple[CrashWatch, Writer, Log]:
    plan = plan_run(read or GroupState(GROUP, version=4), found, redelivered=redelivered, max_attempts=3)
    writer, log = Writer(), Log()
    item = run_item or FoundRun(found, "t0" if found is not None else None, read=redelivered)
    return CrashWatch(log, plan, writer, GROUP, MAX_ATTEMPTS, item), writer, log


def run(watch: CrashWatch, *ids: str) -> Any:
    settings = BatchSettings(max_attempts=MAX_ATTEMPTS, park_on_dead=False)
    return run_group(watch.plan.start, [job(i) for i in ids], watch, settings, now_ms=1_000)


# --- the marker ----------------------------------------------------------------------------------


@pytest.mark.parametrize("marker", [GROUP_RUN, RunMarker("j1", 2)])
def test_a_marker_reads_back_as_written(marker: RunMarker) -> None:
    # GIVEN a group's or a job's marker WHEN it is encoded and decoded THEN it is the same marker
    assert RunMarker.decode(marker.encode()) == marker


@pytest.mark.parametrize("text", ["[]", '{"job": "j1", "attempt": 0}', "not json"])
def test_a_marker_this_runtime_did_not_write_is_refused(text: str) -> None:
    # GIVEN a run attribute that is not a marker WHEN it is decoded THEN it is refused
    with pytest.raises(ValueError):
        RunMarker.decode(text)


# --- the plan (pure) ------------------------------------------------------------------------------


def test_a_first_delivery_without_a_marker_is_not_watched() -> None:
    # GIVEN no marker and records received for the first time WHEN the run is planned
    plan = plan_run(GroupState(GROUP), None, redelivered=False, max_attempts=3)
    # THEN nothing is written before the transitions: the happy path keeps its one write
    assert (plan.watch, plan.isolate, plan.replay) == (False, False, None)


def test_a_redelivery_without_a_marker_is_watched_as_a_whole() -> None:
    # GIVEN no marker and a record received before WHEN the run is planned
    plan = plan_run(GroupState(GROUP), None, redelivered=True, max_attempts=3)
    # THEN one group marker is written, no job is isolated
    assert (plan.watch, plan.isolate) == (True, False)


def test_a_group_marker_found_isolates_the_group_and_blames_no_job() -> None:
    # GIVEN a group marker (a crash somewhere in the group's last run) WHEN the run is planned
    read = GroupState(GROUP, book=Bookkeeping(attempts={"a": 1}))
    plan = plan_run(read, GROUP_RUN, redelivered=True, max_attempts=3)
    # THEN every transition is marked, and no attempt is counted
    assert (plan.watch, plan.isolate, plan.replay) == (True, True, None)
    assert plan.start == read


def test_a_job_marker_found_counts_its_attempt_and_the_job_runs_next_as_the_following_one() -> None:
    # GIVEN job c's attempt 1 stopped the worker WHEN the run is planned
    plan = plan_run(GroupState(GROUP), RunMarker("c", 1), redelivered=True, max_attempts=3)
    # THEN c's attempts start at 1 (its next run is attempt 2) and the group is isolated
    assert dict(plan.start.book.attempts) == {"c": 1}
    assert (plan.isolate, plan.replay) == (True, None)


def test_a_job_marker_at_the_last_attempt_replays_that_crash_instead_of_running_the_job() -> None:
    # GIVEN job c's attempt 3 of 3 stopped the worker WHEN the run is planned
    plan = plan_run(GroupState(GROUP), RunMarker("c", 3), redelivered=True, max_attempts=3)
    # THEN the core starts with 2 attempts of c and gets attempt 3 back as the crash
    assert dict(plan.start.book.attempts) == {"c": 2}
    assert plan.replay == ("c", 3)


def test_a_replayed_crash_the_run_never_reached_stays_counted() -> None:
    # GIVEN c's last attempt crashed, and the run did not call c (not in this batch)
    plan = plan_run(GroupState(GROUP), RunMarker("c", 3), redelivered=True, max_attempts=3)
    # WHEN the state to commit is settled
    settled = plan.settle(plan.start, frozenset({"a"}))
    # THEN c's three attempts are kept
    assert dict(settled.book.attempts) == {"c": 3}


def test_an_isolated_run_that_stopped_keeps_a_group_marker_and_a_clean_one_keeps_none() -> None:
    # GIVEN an isolated run's plan
    plan = plan_run(GroupState(GROUP), GROUP_RUN, redelivered=True, max_attempts=3)
    # WHEN the commit's marker is chosen THEN it is a group marker only when the run stopped
    assert (plan.carried(clean=False), plan.carried(clean=True)) == (GROUP_RUN, None)
    # AND a run that was not isolated never keeps one
    assert plan_run(GroupState(GROUP), None, redelivered=True, max_attempts=3).carried(clean=False) is None


# --- the watch: writes and the replayed crash -----------------------------------------------------


def test_an_unwatched_run_writes_nothing_before_its_transitions() -> None:
    # GIVEN a first delivery WHEN the group runs
    watch, writer, log = watched(None, redelivered=False)
    run(watch, "a", "b")
    # THEN no marker was written, and the commit stays on the version read
    assert writer.writes == [] and log.runs == [("a", 1), ("b", 1)]
    assert (watch.opened, watch.version) == (False, 4)


def test_a_watched_run_writes_one_group_marker_before_its_first_transition() -> None:
    # GIVEN a redelivery (its run item read: none) WHEN the group runs three jobs
    watch, writer, _ = watched(None)
    run(watch, "a", "b", "c")
    # THEN one write, of a group marker over the version read, where no run item exists; the commit
    # stays on the version read (the marker is not in the state item)
    assert writer.writes == [(4, GROUP_RUN, None, True)]
    assert (watch.opened, watch.version, watch.token) == (True, 4, "t1")


def test_an_isolated_run_marks_each_transition_each_write_fenced_by_the_token_before_it() -> None:
    # GIVEN a group marker found (run item token t0) WHEN the group runs a, b, c
    watch, writer, _ = watched(GROUP_RUN)
    run(watch, "a", "b", "c")
    # THEN a's marker replaces the one read, b's replaces a's, c's replaces b's, all over version 4
    assert writer.writes == [
        (4, RunMarker("a", 1), "t0", True),
        (4, RunMarker("b", 1), "t1", True),
        (4, RunMarker("c", 1), "t2", True),
    ]
    assert watch.version == 4


def test_a_marker_carried_by_the_state_item_is_watched_without_the_run_item_read() -> None:
    # GIVEN a first delivery whose state item carries a group marker (an isolated run that stopped)
    watch, writer, _ = watched(GROUP_RUN, redelivered=False, run_item=FoundRun(GROUP_RUN, None, read=False))
    run(watch, "a")
    # THEN its first mark is written where no run item over its version exists (not read: no token)
    assert writer.writes == [(4, RunMarker("a", 1), None, False)]


def test_a_job_whose_last_attempt_crashed_is_dead_without_running_and_the_others_apply() -> None:
    # GIVEN b's attempt 3 of 3 stopped the worker, in a group [a, b, c]
    watch, _, log = watched(RunMarker("b", 3))
    # WHEN the group runs
    result = run(watch, "a", "b", "c")
    # THEN b is dead of its attempts (not run again); a and c are applied
    assert [r.outcome for r in result.results] == [Outcome.APPLIED, Outcome.DEAD, Outcome.APPLIED]
    assert [job_id for job_id, _ in log.runs] == ["a", "c"]
    dead = result.results[1].dead
    assert dead is not None
    assert (dead.reason, dead.error_type, dead.attempts) == (
        DeadReason.ATTEMPTS_EXHAUSTED,
        WorkerCrashedError.__name__,
        3,
    )
    assert "stopped its worker on attempt 3 of 3" in dead.error and "make the transition return" in dead.error


def test_a_job_whose_attempt_crashed_below_the_limit_runs_again_as_the_next_attempt() -> None:
    # GIVEN b's attempt 1 stopped the worker WHEN the group [a, b] runs
    watch, writer, log = watched(RunMarker("b", 1))
    run(watch, "a", "b")
    # THEN b runs as attempt 2, marked as such
    assert log.runs == [("a", 1), ("b", 2)]
    assert writer.writes[-1] == (4, RunMarker("b", 2), "t1", True)


def test_a_marker_write_that_loses_its_race_stops_the_run_before_any_transition() -> None:
    # GIVEN another worker wrote the group since it was read
    plan = plan_run(GroupState(GROUP, version=4), None, redelivered=True, max_attempts=3)
    log = Log()
    watch = CrashWatch(log, plan, Writer(refuse=True), GROUP, MAX_ATTEMPTS)
    # WHEN the group runs THEN the run stops (a lost race, no cause) and no transition ran
    with pytest.raises(RunInterrupted) as stopped:
        run(watch, "a")
    assert stopped.value.cause is None and log.runs == []


def test_a_marker_write_that_fails_stops_the_run_with_its_error() -> None:
    # GIVEN the marker write is throttled
    plan = plan_run(GroupState(GROUP), None, redelivered=True, max_attempts=3)
    throttled = RuntimeError("ThrottlingException")
    watch = CrashWatch(Log(), plan, Writer(fail=throttled), GROUP, MAX_ATTEMPTS)
    # WHEN the group runs THEN the run stops with that error, not counted against the job
    with pytest.raises(RunInterrupted) as stopped:
        run(watch, "a")
    assert stopped.value.cause is throttled
