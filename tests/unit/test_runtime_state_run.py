"""A group's records through the state core (pure): malformed records split out, ticks, stalls."""

from __future__ import annotations

import json
from typing import Any

import pytest

from constructs_fifo.runtime.constants import DeadReason
from constructs_fifo.runtime.exceptions import PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.engine import stalled_on
from constructs_fifo.runtime.state.core.records import (
    BatchResult,
    BatchSettings,
    GroupState,
    Outcome,
    RetryReason,
)
from constructs_fifo.runtime.state.run import RecordingTransition, run_group
from constructs_fifo.runtime.types import SQSRecord

GROUP = "ws#1"


def record(body: str, message_id: str) -> SQSRecord:
    return {"messageId": message_id, "body": body, "attributes": {"MessageGroupId": GROUP}}


def job(job_id: str, seq: int | None = None) -> SQSRecord:
    body: dict[str, Any] = {"jobId": job_id, "type": "t"}
    if seq is not None:
        body["seq"] = seq
    return record(json.dumps(body), f"m-{job_id}")


class Log:
    """The reference transition; ``fail`` raise RuntimeError on attempts up to n, ``poison`` always."""

    def __init__(self, fail: dict[str, int] | None = None, poison: frozenset[str] = frozenset()) -> None:
        self.runs: list[str] = []
        self.fail = fail or {}
        self.poison = poison

    def __call__(self, job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        self.runs.append(job.id)
        if job.id in self.poison:
            raise PermanentJobError(f"{job.id} is poison")
        if job.attempt <= self.fail.get(job.id, 0):
            raise RuntimeError(f"{job.id} flaked")
        return {"log": [*(state or {}).get("log", []), job.id]}


def run(
    records: list[SQSRecord], transition: Log, start: GroupState | None = None, **options: Any
) -> BatchResult:
    settings = BatchSettings(**{"max_attempts": 3, "park_on_dead": False, **options})
    return run_group(start or GroupState(GROUP), records, transition, settings, now_ms=1_000)


def outcomes(result: BatchResult) -> list[tuple[str, str]]:
    return [(r.job_id, r.outcome.value if r.reason is None else r.reason.value) for r in result.results]


def test_a_malformed_record_splits_the_group_and_the_state_runs_on_across_it() -> None:
    transition = Log()
    result = run([job("a", 0), record('{"jobId": "m"}', "m-m"), job("b", 1)], transition)
    assert outcomes(result) == [("a", "APPLIED"), ("m", "DEAD"), ("b", "APPLIED")]
    assert result.group_state.state == {"log": ["a", "b"]} and result.changed
    dead = result.results[1].dead
    assert dead is not None and (dead.reason, dead.error_type, dead.attempts) == (
        DeadReason.MALFORMED,
        "MalformedJobError",
        0,
    )
    assert result.jobs[1] is None and transition.runs == ["a", "b"]


def test_a_malformed_record_behind_a_stopped_group_waits_and_the_core_is_not_called_again() -> None:
    transition = Log(fail={"a": 1})
    result = run([job("a"), record("not json", "m-x"), job("b")], transition)
    assert outcomes(result) == [("a", "FAILED"), ("", "BLOCKED"), ("b", "BLOCKED")]
    assert [r.attempt for r in result.results] == [1, 1, 1]
    assert transition.runs == ["a"]


def test_a_malformed_record_parks_the_group_at_itself_under_park() -> None:
    transition = Log()
    result = run([job("a"), record("not json", "m-x"), job("b")], transition, park_on_dead=True)
    assert outcomes(result) == [("a", "APPLIED"), ("", "KEEP"), ("b", "KEEP")]
    assert result.parked_by is not None and result.parked_by.message_id == "m-x"
    assert result.results[1].dead == result.parked_by
    assert result.group_state.book.parked is None  # a malformed record has no death in the state
    assert transition.runs == ["a"]


def test_a_job_of_the_core_that_parks_the_group_is_its_parked_by() -> None:
    result = run([job("a"), job("p"), job("b")], Log(poison=frozenset({"p"})), park_on_dead=True)
    assert outcomes(result) == [("a", "APPLIED"), ("p", "KEEP"), ("b", "KEEP")]
    assert result.parked_by is not None and result.parked_by.job_id == "p"
    assert result.parked_by.reason is DeadReason.PERMANENT


def test_the_message_a_job_died_in_carries_its_entry_across_a_malformed_split_and_a_copy_does_not() -> None:
    # GIVEN p died (permanent) in message m-p under the go-on policy
    died = run([job("p")], Log(poison=frozenset({"p"})))
    (entry,) = died.group_state.book.dead_entries
    # WHEN m-p comes back behind a malformed record, followed by a copy of p in a new message
    copy = record('{"jobId": "p", "type": "t"}', "m-copy")
    transition = Log()
    again = run([record("not json", "m-x"), job("p"), copy], transition, died.group_state)
    # THEN p runs in neither; m-p carries p's entry (dead-lettered as it died), the copy none
    assert outcomes(again) == [("", "DEAD"), ("p", "DEAD_COPY"), ("p", "DEAD_COPY")]
    assert again.results[1].dead == entry and entry.reason is DeadReason.PERMANENT
    assert again.results[2].dead is None
    assert transition.runs == [] and not again.changed


def test_without_records_the_group_ticks_and_drains_its_buffer() -> None:
    transition = Log(fail={"b": 1})
    first = run([job("b", 1), job("a", 0)], transition)
    assert outcomes(first) == [("b", "BUFFERED"), ("a", "CARRIER")]
    tick = run([], transition, start=first.group_state)
    assert tick.results == () and tick.group_state.state == {"log": ["a", "b"]}
    assert [entry.job_id for entry in tick.from_buffer] == ["b"]


def test_a_failed_buffered_job_with_only_dead_records_in_the_run_is_stalled_on() -> None:
    transition = Log(fail={"s1": 1}, poison=frozenset({"s0"}))
    buffered = run([job("s1", 1)], transition)
    result = run([job("s0", 0)], transition, start=buffered.group_state)
    assert outcomes(result) == [("s0", "DEAD")]
    assert result.stalled_on == ("s1", 1) == stalled_on(result.group_state, 0)
    assert not any(r.outcome is Outcome.RETRY for r in result.results)
    assert RetryReason.CARRIER not in {r.reason for r in result.results}


def test_the_recording_transition_records_errors_and_lets_a_crash_pass() -> None:
    class Crash(BaseException):
        pass

    def crash(job: Job, state: dict[str, Any] | None) -> dict[str, Any]:
        raise Crash

    recorder = RecordingTransition(crash)
    with pytest.raises(Crash):
        recorder(Job("j", GROUP, "t", {}, 2, "m", {}), None)
    assert recorder.errors == {} and recorder.attempts == {"j": 2} and "j" in recorder.durations_ms
