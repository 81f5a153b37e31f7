"""State mode's pure core: one example per rule of ``apply_batch``, Hypothesis properties, then a group's
records through it (``run_group``: malformed records split out, ticks, stalls)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from constructs_fifo.runtime.constants import MAX_DEAD_ENTRIES_BYTES, MAX_ERROR_LENGTH, DeadReason
from constructs_fifo.runtime.dead_jobs.record import DeadJob, encode_dead_job
from constructs_fifo.runtime.exceptions import MalformedJobError, PermanentJobError
from constructs_fifo.runtime.job import Job
from constructs_fifo.runtime.state.core.apply import RecordingTransition, apply_batch, resume_group, run_group
from constructs_fifo.runtime.state.core.engine import stalled_on
from constructs_fifo.runtime.state.core.records import (
    BOOKKEEPING_RESERVE_BYTES,
    BatchResult,
    BatchSettings,
    Bookkeeping,
    GapPolicy,
    GroupState,
    Outcome,
    RetryReason,
    SkippedRange,
    job_key,
    remember_dead_entry,
)
from constructs_fifo.runtime.state.core.values import encode_state, job_seq
from constructs_fifo.runtime.state.storage.book import encode_book
from constructs_fifo.runtime.types import SQSRecord

GROUP = "ws#1"
State = dict[str, Any] | None


def job(job_id: str, seq: int | None = None) -> Job:
    body: dict[str, Any] = {"jobId": job_id, "type": "apply_patch", "payload": {}}
    if seq is not None:
        body["seq"] = seq
    return Job(job_id, GROUP, "apply_patch", {}, 1, f"m-{job_id}", body)


def with_body(base: Job, **fields: Any) -> Job:
    return replace(base, body={**base.body, **fields})


def append(job: Job, state: State) -> dict[str, Any]:
    """The reference transition: the state is the log of applied job ids."""
    log = list((state or {}).get("log", []))
    return {"log": [*log, job.id]}


def failing(
    fails: dict[str, int], permanent: frozenset[str] = frozenset()
) -> Callable[[Job, State], dict[str, Any]]:
    """``append``, but job ids in ``fails`` raise on attempts 1..n and ``permanent`` ones always."""

    def transition(job: Job, state: State) -> dict[str, Any]:
        if job.id in permanent:
            raise PermanentJobError(f"{job.id} is poison")
        if job.attempt <= fails.get(job.id, 0):
            raise RuntimeError(f"{job.id} attempt {job.attempt} fails")
        return append(job, state)

    return transition


def run(
    jobs: list[Job],
    start: GroupState | None = None,
    transition: Callable[[Job, State], Any] = append,
    **options: Any,
) -> BatchResult:
    defaults: dict[str, Any] = {"now_ms": 1_000, "max_attempts": 3, "park_on_dead": False}
    return apply_batch(start or GroupState(GROUP), jobs, transition, **{**defaults, **options})


def outcomes(result: BatchResult) -> list[tuple[str, str]]:
    return [(r.job_id, r.outcome.value) for r in result.results]


def log(result: BatchResult) -> list[str]:
    state = result.group_state.state
    return list(state["log"]) if state else []


# --- job_seq and encode_state -------------------------------------------------------------------


def test_job_seq_reads_a_non_negative_int_or_none() -> None:
    assert job_seq(job("a")) is None
    assert job_seq(job("a", 0)) == 0
    assert job_seq(with_body(job("a"), seq=None)) is None


@pytest.mark.parametrize("bad", [True, -1, 1.0, "1", [1]])
def test_job_seq_refuses_anything_else_naming_the_value_and_the_rule(bad: object) -> None:
    with pytest.raises(MalformedJobError, match="must be a non-negative integer") as caught:
        job_seq(with_body(job("a"), seq=bad))
    assert caught.value.job_id == "a"
    assert repr(bad) in str(caught.value)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ([1], "returned a list; it must return the group's next state as a dict"),
        ({"a": (1, 2)}, r"state\['a'\] is a tuple; .* a tuple to a list"),
        ({"a": {1: "x"}}, r"state\['a'\] has the key 1 \(int\); JSON object keys must be strings"),
        ({"a": [math.nan]}, r"state\['a'\]\[0\] is nan; JSON has no NaN"),
        ({"a": {"b"}}, r"is a set; .* a set to a sorted list"),
        ({"a": "\ud800"}, "not valid UTF-8"),
    ],
)
def test_encode_state_refuses_what_is_not_json_naming_the_type_and_place(value: object, message: str) -> None:
    from constructs_fifo.runtime.exceptions import TransitionResultError

    with pytest.raises(TransitionResultError, match=message):
        encode_state(value)


# --- rules 1-4: parked, dead copy, duplicates, order ------------------------------------------------


def test_in_order_jobs_are_applied_and_committed_with_the_sequence() -> None:
    result = run([job("a", 0), job("b", 1), job("c")])
    assert outcomes(result) == [("a", "APPLIED"), ("b", "APPLIED"), ("c", "APPLIED")]
    assert log(result) == ["a", "b", "c"] == list(result.applied)
    assert result.group_state.book.last_seq == 1
    assert result.group_state.book.applied == (job_key("c"),)  # only jobs without seq are listed
    assert result.changed


def test_the_transition_sees_the_runtimes_attempt_and_a_fresh_copy_of_the_state() -> None:
    seen: list[tuple[int, State]] = []

    def spy(job: Job, state: State) -> dict[str, Any]:
        seen.append((job.attempt, state))
        if state is not None:
            state["log"].append("MUTATED")  # an impure transition must not reach the committed state
        if job.id == "b" and job.attempt == 1:
            raise RuntimeError("flaky")
        return append(job, None if state is None else {"log": state["log"][:-1]})

    first = run([job("a"), job("b")], transition=spy)
    assert log(first) == ["a"]
    second = run([job("b")], first.group_state, transition=spy)
    assert [attempt for attempt, _ in seen] == [1, 1, 2]
    assert log(second) == ["a", "b"]


def test_duplicates_are_skipped_by_id_and_by_seq() -> None:
    first = run([job("a", 0), job("x")])
    # GIVEN a copy of a job with seq, a seq below next under a new id, and a copy of a job without seq
    second = run([job("a", 0), job("other", 0), job("x")], first.group_state)
    assert outcomes(second) == [("a", "DUPLICATE"), ("other", "DUPLICATE"), ("x", "DUPLICATE")]
    assert not second.changed  # nothing to write: the processor can skip the PutItem


def test_a_copy_of_a_buffered_job_is_a_duplicate_and_another_job_with_its_seq_is_dead() -> None:
    intruder = replace(job("intruder", 1), payload={"other": True})
    result = run([job("b", 1), job("b", 1), with_body(intruder, payload={"other": True})])
    assert outcomes(result) == [("b", "BUFFERED"), ("b", "DUPLICATE"), ("intruder", "DEAD")]
    dead = result.results[2].dead
    assert dead is not None and dead.error_type == "SequenceConflictError" and dead.attempts == 0
    assert "already taken by job 'b'" in dead.error


def test_a_resend_of_a_buffered_job_under_a_new_id_is_a_duplicate_and_the_group_goes_on() -> None:
    # GIVEN seq 1 buffered (seq 0 missing), then a resend of it under a new id (a PutEvents retry: a new
    # event id) with the same type and payload, in this batch and in a later one
    patch = {"diff": "+x"}
    original = with_body(replace(job("evt-1", 1), payload=patch), payload=patch)
    resend = with_body(replace(job("evt-1-retry", 1), payload=patch), payload=patch)
    first = run([original, resend])
    later = run([replace(resend, id="evt-1-again", message_id="m-again")], first.group_state)
    # THEN the resends are duplicates, nothing died, and seq 0 applies both in order once it comes
    assert outcomes(first) == [("evt-1", "BUFFERED"), ("evt-1-retry", "DUPLICATE")]
    assert outcomes(later) == [("evt-1-again", "DUPLICATE")]
    done = run([job("evt-0", 0)], later.group_state)
    assert log(done) == ["evt-0", "evt-1"]
    assert not done.group_state.book.dead


def test_a_malformed_seq_is_dead_at_once_without_running() -> None:
    result = run([with_body(job("a"), seq="7"), job("b")])
    assert outcomes(result) == [("a", "DEAD"), ("b", "APPLIED")]
    dead = result.results[0].dead
    assert dead is not None and (dead.error_type, dead.reason) == ("MalformedJobError", DeadReason.MALFORMED)


def test_a_copy_of_a_dead_job_follows_it() -> None:
    first = run([job("p")], transition=failing({}, frozenset({"p"})))
    second = run([job("p"), job("q")], first.group_state)
    assert outcomes(second) == [("p", "DEAD_COPY"), ("q", "APPLIED")]
    assert log(second) == ["q"]


def test_a_parked_group_keeps_every_job_and_applies_nothing() -> None:
    parked = run([job("p")], transition=failing({}, frozenset({"p"})), park_on_dead=True)
    assert parked.group_state.parked
    result = run([job("a"), job("p")], parked.group_state, park_on_dead=True)
    assert outcomes(result) == [("a", "KEEP"), ("p", "KEEP")]
    assert result.applied == () and not result.changed


# --- rule 5: the reorder buffer ---------------------------------------------------------------------


def test_a_job_beyond_next_is_buffered_and_applied_when_the_gap_closes() -> None:
    first = run([job("c", 2), job("b", 1)], now_ms=1_000)
    assert outcomes(first) == [("c", "BUFFERED"), ("b", "BUFFERED")]
    assert first.group_state.state is None and first.changed
    assert first.group_state.book.gap_since_ms == 1_000
    assert first.gap_open_ms == 0

    later = run([job("a", 0), job("d", 3)], first.group_state, now_ms=5_000)
    assert outcomes(later) == [("a", "APPLIED"), ("d", "APPLIED")]
    assert log(later) == ["a", "b", "c", "d"] == list(later.applied)
    assert tuple(entry.job_id for entry in later.from_buffer) == ("b", "c")
    assert later.group_state.book.buffer == () and later.gap_open_ms is None


def test_a_job_buffered_in_the_same_batch_is_applied_in_that_batch() -> None:
    result = run([job("b", 1), job("a", 0)])
    assert outcomes(result) == [("b", "APPLIED"), ("a", "APPLIED")]
    assert log(result) == ["a", "b"] and tuple(entry.job_id for entry in result.from_buffer) == ()


def test_first_seq_sets_where_a_group_sequence_starts() -> None:
    assert outcomes(run([job("a", 1)], first_seq=1)) == [("a", "APPLIED")]
    assert outcomes(run([job("a", 1)])) == [("a", "BUFFERED")]  # default 0: seq 1 waits for 0


# --- rule 6: jobs without seq --------------------------------------------------------------------


def test_a_job_without_seq_is_applied_where_the_queue_brings_it_ahead_of_buffered_ones() -> None:
    result = run([job("b", 1), job("free"), job("a", 0)])
    assert log(result) == ["free", "a", "b"]
    assert result.group_state.book.last_seq == 1


# --- rule 7: the gap policy ---------------------------------------------------------------------------


def test_wait_retries_what_the_full_buffer_cannot_take_and_looks_ahead_in_the_batch_first() -> None:
    # GIVEN a buffer of 2 and seqs 2, 3, 4 before the missing 1 (0 applied)
    start = run([job("a", 0)]).group_state
    waiting = run([job("c", 2), job("d", 3), job("e", 4)], start, reorder_limit=2)
    assert outcomes(waiting) == [("c", "BUFFERED"), ("d", "BUFFERED"), ("e", "RETRY")]
    assert waiting.results[2].reason is RetryReason.BUFFER_FULL
    assert waiting.results[2].attempt is None  # no attempt counted: the job did not fail

    # WHEN the missing job is in the same batch, behind the one that does not fit
    closing = run([job("c", 2), job("d", 3), job("e", 4), job("b", 1)], start, reorder_limit=2)
    assert outcomes(closing) == [("c", "APPLIED"), ("d", "APPLIED"), ("e", "APPLIED"), ("b", "APPLIED")]
    assert log(closing) == ["a", "b", "c", "d", "e"]


def test_skip_gap_gives_up_the_missing_seqs_when_the_buffer_is_full_and_records_them() -> None:
    start = run([job("a", 0)]).group_state
    result = run(
        [job("d", 3), job("e", 4), job("f", 5)], start, reorder_limit=2, gap_policy=GapPolicy.SKIP_GAP
    )
    assert outcomes(result) == [("d", "APPLIED"), ("e", "APPLIED"), ("f", "APPLIED")]
    assert [(r.first, r.last) for r in result.skipped] == [(1, 2)]
    assert [(r.first, r.last) for r in result.group_state.book.skipped] == [(1, 2)]
    late = run([job("b", 1)], result.group_state, gap_policy=GapPolicy.SKIP_GAP)
    assert outcomes(late) == [("b", "DUPLICATE")]


def test_a_gap_older_than_the_timeout_is_reported_and_skipped_only_under_skip_gap() -> None:
    buffered = run([job("b", 1)], now_ms=1_000).group_state
    waited = run([job("c", 2)], buffered, now_ms=400_000, gap_timeout_ms=300_000)
    assert waited.gap_timed_out and waited.gap_open_ms == 399_000
    assert outcomes(waited) == [("c", "BUFFERED")] and waited.skipped == ()

    skipped = run(
        [job("d", 3)], buffered, now_ms=400_000, gap_timeout_ms=300_000, gap_policy=GapPolicy.SKIP_GAP
    )
    assert log(skipped) == ["b"] and [(r.first, r.last) for r in skipped.skipped] == [(0, 0)]
    # the gap before d (seq 2) opened only when d arrived: its clock starts now
    assert outcomes(skipped) == [("d", "BUFFERED")]
    assert not skipped.gap_timed_out and skipped.gap_open_ms == 0


def test_a_batch_without_jobs_applies_the_policy_to_an_idle_groups_gap() -> None:
    idle = run([job("b", 1), job("c", 2)], now_ms=1_000).group_state
    tick = run([], idle, now_ms=302_000, gap_timeout_ms=300_000, gap_policy=GapPolicy.SKIP_GAP)
    assert (
        tick.results == ()
        and log(tick) == ["b", "c"]
        and tuple(entry.job_id for entry in tick.from_buffer) == ("b", "c")
    )
    assert [(r.first, r.last, r.count) for r in tick.skipped] == [(0, 0, 1)]
    assert not run([], idle, now_ms=2_000, gap_timeout_ms=300_000, gap_policy=GapPolicy.SKIP_GAP).changed


def test_a_job_that_would_make_the_item_too_large_is_not_buffered() -> None:
    def size_of(state: GroupState) -> int:
        return 40_000 + 10_000 * len(state.book.buffer)

    result = run([job("b", 1), job("c", 2)], size_of=size_of, max_item_bytes=32 * 1024 + 50_000)
    assert outcomes(result) == [("b", "BUFFERED"), ("c", "RETRY")]
    assert result.results[1].reason is RetryReason.BUFFER_FULL


# --- rule 8: failures ---------------------------------------------------------------------------------


def test_a_transient_failure_stops_the_group_commits_what_came_before_and_counts_the_attempt() -> None:
    transition = failing({"b": 1})
    first = run([job("a", 0), job("b", 1), job("c", 2)], transition=transition)
    assert outcomes(first) == [("a", "APPLIED"), ("b", "RETRY"), ("c", "RETRY")]
    assert [(r.reason, r.attempt, r.blocked_by) for r in first.results[1:]] == [
        (RetryReason.FAILED, 1, None),
        (RetryReason.BLOCKED, 1, "b"),
    ]
    assert log(first) == ["a"] and first.group_state.book.attempts == {"b": 1}

    second = run([job("b", 1), job("c", 2)], first.group_state, transition=transition)
    assert log(second) == ["a", "b", "c"] and second.group_state.book.attempts == {}


def test_a_transient_failure_on_the_last_attempt_makes_the_job_dead() -> None:
    state = GroupState(GROUP)
    transition = failing({"a": 99})
    for attempt in (1, 2):
        result = run([job("a")], state, transition=transition)
        assert result.results[0].attempt == attempt
        state = result.group_state
    final = run([job("a"), job("b")], state, transition=transition)
    assert outcomes(final) == [("a", "DEAD"), ("b", "APPLIED")]
    dead = final.results[0].dead
    assert dead is not None and (dead.attempts, dead.error_type) == (3, "RuntimeError")
    assert dead.reason is DeadReason.ATTEMPTS_EXHAUSTED
    assert dead.error == "a attempt 3 fails" and dead.message_id == "m-a"


@pytest.mark.parametrize(
    ("returned", "error_type"),
    [("not a dict", "TransitionResultError"), ({"when": object()}, "TransitionResultError")],
)
def test_a_result_that_is_not_a_json_object_makes_the_job_dead(returned: object, error_type: str) -> None:
    result = run([job("a"), job("b")], transition=lambda j, s: returned if j.id == "a" else append(j, s))
    assert outcomes(result) == [("a", "DEAD"), ("b", "APPLIED")]
    assert result.results[0].dead is not None and result.results[0].dead.error_type == error_type


def test_a_permanent_error_makes_the_job_dead_at_once_with_its_text_cut() -> None:
    def poison(job: Job, state: State) -> dict[str, Any]:
        raise PermanentJobError("x" * 5000)

    result = run([job("a")], transition=poison)
    dead = result.results[0].dead
    assert dead is not None and dead.attempts == 1 and len(dead.error) == 1024
    assert dead.reason is DeadReason.PERMANENT


def test_a_transition_that_outgrows_the_item_is_dead_and_not_applied() -> None:
    def size_of(state: GroupState) -> int:
        return 1000 * len((state.state or {}).get("log", []))

    limit = 32 * 1024 + 2500  # room for two entries once the bookkeeping's reserve is taken
    result = run([job("a"), job("b"), job("c"), job("d")], size_of=size_of, max_item_bytes=limit)
    assert outcomes(result) == [("a", "APPLIED"), ("b", "APPLIED"), ("c", "DEAD"), ("d", "DEAD")]
    dead = result.results[2].dead
    assert dead is not None and dead.error_type == "StateTooLargeError"
    assert "3000 bytes, over the limit of 2500 bytes" in dead.error and "store a pointer" in dead.error
    assert log(result) == ["a", "b"]


def test_a_buffered_job_that_fails_keeps_a_committed_record_as_the_groups_way_back() -> None:
    transition = failing({"b": 1})
    buffered = run([job("b", 1)]).group_state
    # WHEN the gap closes and the buffered job fails, with no later record in the batch
    result = run([job("a", 0)], buffered, transition=transition)
    assert log(result) == ["a"] and result.group_state.book.buffer[0].job_id == "b"
    only = result.results[0]
    assert (only.outcome, only.reason, only.blocked_by, only.attempt) == (
        Outcome.RETRY,
        RetryReason.CARRIER,
        "b",
        1,
    )
    # THEN the carrier comes back as a duplicate and its batch drains the buffer first
    again = run([job("a", 0)], result.group_state, transition=transition)
    assert outcomes(again) == [("a", "DUPLICATE")] and tuple(entry.job_id for entry in again.from_buffer) == (
        "b",
    )
    assert log(again) == ["a", "b"]


# --- rule 9: dead jobs and parking -------------------------------------------------------------------


def test_go_on_policy_consumes_the_dead_seq_and_applies_what_follows() -> None:
    transition = failing({}, frozenset({"b"}))
    result = run([job("c", 2), job("a", 0), job("b", 1), job("d", 3)], transition=transition)
    assert outcomes(result) == [("c", "APPLIED"), ("a", "APPLIED"), ("b", "DEAD"), ("d", "APPLIED")]
    assert log(result) == ["a", "c", "d"] and result.group_state.book.dead == ("b",)


def test_a_buffered_job_that_dies_goes_to_the_dlq_from_its_body_under_the_go_on_policy() -> None:
    buffered = run([with_body(job("b", 1), payload={"k": 1}), job("c", 2)]).group_state
    result = run([job("a", 0)], buffered, transition=failing({}, frozenset({"b"})))
    assert log(result) == ["a", "c"]
    [(entry, dead)] = result.dead_buffered
    assert entry.body["payload"] == {"k": 1} and dead.job_id == "b" and dead.seq == 1


def test_park_keeps_the_dead_job_and_every_later_one_and_applies_nothing_after_it() -> None:
    transition = failing({}, frozenset({"b"}))
    result = run([job("a", 0), job("b", 1), job("c", 2), job("x")], transition=transition, park_on_dead=True)
    assert outcomes(result) == [("a", "APPLIED"), ("b", "KEEP"), ("c", "KEEP"), ("x", "KEEP")]
    parked = result.group_state.book.parked
    assert result.results[1].dead == parked
    assert parked is not None and (parked.job_id, parked.seq, parked.error) == ("b", 1, "b is poison")
    assert log(result) == ["a"] and result.group_state.book.last_seq == 0


def test_resume_skipping_the_dead_job_consumes_its_seq_and_drains_the_buffer() -> None:
    transition = failing({}, frozenset({"b"}))
    parked = run([job("c", 2), job("a", 0), job("b", 1)], transition=transition, park_on_dead=True)
    assert outcomes(parked) == [("c", "BUFFERED"), ("a", "APPLIED"), ("b", "KEEP")]
    resumed = resume_group(parked.group_state, skip_dead=True)
    assert not resumed.parked and resumed.book.last_seq == 1
    drained = run([], resumed, transition=transition, park_on_dead=True)
    assert log(drained) == ["a", "c"] and tuple(entry.job_id for entry in drained.from_buffer) == ("c",)
    assert outcomes(run([job("b", 1)], drained.group_state, park_on_dead=True)) == [("b", "DEAD_COPY")]


def test_resume_retrying_the_dead_job_forgets_its_death_and_attempts() -> None:
    buffered = run([job("b", 1)]).group_state
    parked = run([job("a", 0)], buffered, transition=failing({}, frozenset({"b"})), park_on_dead=True)
    assert parked.group_state.book.buffer[0].job_id == "b"  # a buffered dead job stays in the buffer
    resumed = resume_group(parked.group_state, skip_dead=False)
    assert resumed.book.dead == () and not resumed.parked
    assert log(run([], resumed, park_on_dead=True)) == ["a", "b"]
    assert resume_group(resumed, skip_dead=True) is resumed  # not parked: unchanged


def test_the_message_a_job_died_in_comes_back_with_its_entry_and_another_message_as_a_copy() -> None:
    # GIVEN p died (permanent) in message m-p under the go-on policy, and its entry is committed
    died = run([job("a"), job("p")], transition=failing({}, frozenset({"p"})))
    entry = died.results[1].dead
    assert entry is not None and died.group_state.book.dead_entries == (entry,)
    # WHEN the same message comes back (its dead-letter send failed) and a copy in a new message too
    again = run([job("p"), replace(job("p"), message_id="m-copy")], died.group_state)
    # THEN neither runs; the same message carries the entry it died with, the copy carries none
    assert outcomes(again) == [("p", "DEAD_COPY"), ("p", "DEAD_COPY")]
    same, copy = again.results
    assert same.dead == entry and copy.dead is None
    assert (entry.reason, entry.error_type, entry.error, entry.attempts, entry.message_id) == (
        DeadReason.PERMANENT,
        "PermanentJobError",
        "p is poison",
        1,
        "m-p",
    )
    assert not again.changed  # nothing to write: the record only goes to the dead-letter queue


def test_a_job_dead_of_its_attempts_comes_back_with_its_reason_and_count() -> None:
    # GIVEN p fails transiently on every attempt and dies on its third (max_attempts 3)
    transition = failing({"p": 99})
    state = GroupState(GROUP)
    for _ in range(3):
        last = run([job("p")], state, transition=transition)
        state = last.group_state
    assert outcomes(last) == [("p", "DEAD")]
    # WHEN its message comes back
    again = run([job("p")], state, transition=transition)
    # THEN it carries ATTEMPTS_EXHAUSTED and its 3 attempts, and does not run
    (result,) = again.results
    assert result.outcome is Outcome.DEAD_COPY and result.dead is not None
    assert (result.dead.reason, result.dead.attempts, result.dead.error_type) == (
        DeadReason.ATTEMPTS_EXHAUSTED,
        3,
        "RuntimeError",
    )


def test_resume_retrying_the_dead_job_forgets_its_entry_and_skipping_keeps_it() -> None:
    # GIVEN a group parked at p
    parked = run([job("p")], transition=failing({}, frozenset({"p"})), park_on_dead=True).group_state
    assert [entry.job_id for entry in parked.book.dead_entries] == ["p"]
    # WHEN resumed retrying p, or skipping it
    retried = resume_group(parked, skip_dead=False)
    skipped = resume_group(parked, skip_dead=True)
    # THEN retrying forgets it (p runs again); skipping keeps it (its message is dead-lettered as it died)
    assert retried.book.dead_entries == () and outcomes(run([job("p")], retried)) == [("p", "APPLIED")]
    (result,) = run([job("p")], skipped, park_on_dead=True).results
    assert result.outcome is Outcome.DEAD_COPY and result.dead == parked.book.parked


def test_dead_entries_are_bounded_by_bytes_and_the_ids_by_count() -> None:
    # GIVEN 100 jobs that die with 1000-character errors, 10 a batch
    def verbose(job: Job, state: State) -> dict[str, Any]:
        raise PermanentJobError(job.id + ":" + "e" * 1000)

    state = GroupState(GROUP)
    for first in range(0, 100, 10):
        state = run([job(f"p{n}") for n in range(first, first + 10)], state, transition=verbose).group_state
    book = state.book
    # THEN every id is remembered, and the newest entries that fit in MAX_DEAD_ENTRIES_BYTES
    assert book.dead == tuple(f"p{n}" for n in range(100))
    encoded = [json.dumps(encode_dead_job(e), separators=(",", ":")) for e in book.dead_entries]
    assert sum(len(text) + 1 for text in encoded) <= MAX_DEAD_ENTRIES_BYTES
    kept = [entry.job_id for entry in book.dead_entries]
    assert 10 <= len(kept) < 100 and kept == [f"p{n}" for n in range(100 - len(kept), 100)]
    # AND the message of a job whose entry was pushed out comes back as a copy; the newest with its entry
    old, new = run([job("p0"), job("p99")], state).results
    assert (old.outcome, old.dead) == (Outcome.DEAD_COPY, None)
    assert new.dead is not None and new.dead.reason is DeadReason.PERMANENT


def test_the_bookkeeping_at_its_bounds_fits_its_reserve() -> None:
    # GIVEN a book at every bound, with uuid-long job ids: 100 dead ids, entries filling their bytes,
    # 100 attempt counts, 20 skipped ranges and a parked entry with a 1024-character error
    ids = [f"{n:08d}-0000-4000-8000-000000000000" for n in range(100)]
    error = "e" * MAX_ERROR_LENGTH
    entries: tuple[DeadJob, ...] = ()
    for job_id in ids:
        dead = DeadJob(job_id, "apply_patch", "PermanentJobError", error, 5, job_id, 1_700_000_000_000, 10**9)
        entries = remember_dead_entry(entries, dead, dead_ids=tuple(ids))
    book = Bookkeeping(
        last_seq=10**9,
        attempts={f"a{job_id[1:]}": 4 for job_id in ids},
        dead=tuple(ids),
        dead_entries=entries,
        parked=entries[-1],
        skipped=tuple(SkippedRange(n * 10**6, n * 10**6 + 5, 1_700_000_000_000) for n in range(20)),
        gap_since_ms=1_700_000_000_000,
    )
    # WHEN encoded as the item stores it
    size = len(encode_book(book).encode("utf-8"))
    # THEN it fits the bytes kept free for it
    assert size <= BOOKKEEPING_RESERVE_BYTES, size


# --- bounds and arguments ------------------------------------------------------------------------------


def test_remembered_ids_are_bounded_by_count_and_a_copy_beyond_the_bound_is_applied_again() -> None:
    state = run([job("a"), job("b"), job("c")], remember_job_ids=2).group_state
    assert state.book.applied == (job_key("b"), job_key("c"))
    again = run([job("b"), job("a")], state, remember_job_ids=2)
    assert outcomes(again) == [("b", "DUPLICATE"), ("a", "APPLIED")]


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="max_attempts=0 must be a whole number from 1 to 100"):
        run([job("a")], max_attempts=0)
    with pytest.raises(ValueError, match=r"jobs of groups \['other'\]"):
        run([replace(job("a"), group="other")])


# --- properties: one FIFO group driven through apply_batch -----------------------------------------

MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Spec:
    """One job the producer sends: its seq (or none), and how its transition fails."""

    job_id: str
    seq: int | None
    fails: int  # transient failures, on attempts 1..fails
    permanent: bool

    @property
    def dies(self) -> bool:
        return self.permanent or self.fails >= MAX_ATTEMPTS

    def job(self) -> Job:
        return job(self.job_id, self.seq)


@dataclass(frozen=True)
class Queue:
    """The queue's settings under test."""

    park: bool = False
    policy: GapPolicy = GapPolicy.WAIT
    reorder_limit: int = 20
    gap_timeout_ms: int = 1_000


@dataclass
class Model:
    """The group's records in the queue, the DLQ, the parked store, and every committed batch."""

    specs: dict[str, Spec]
    queue: list[tuple[str, int]]  # (job id, send number), in queue order
    state: GroupState = field(default_factory=lambda: GroupState(GROUP))
    committed: list[BatchResult] = field(default_factory=list)
    dlq: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    applied_after_park: list[str] = field(default_factory=list)

    def transition(self, job: Job, state: State) -> dict[str, Any]:
        spec = self.specs[job.id]
        poison = frozenset({job.id}) if spec.permanent else frozenset()
        return failing({job.id: spec.fails}, poison)(job, state)


@st.composite
def workloads(draw: st.DrawFn) -> tuple[dict[str, Spec], list[str]]:
    """Jobs with seqs (all, none or mixed), sent shuffled within a bound, some sent twice."""
    count = draw(st.integers(1, 14))
    mode = draw(st.sampled_from(["seq", "none", "mixed"]))
    specs: list[Spec] = []
    next_seq = 0
    for number in range(count):
        with_seq = mode == "seq" or (mode == "mixed" and draw(st.booleans()))
        fails = draw(st.sampled_from([0, 0, 0, 1, 2, MAX_ATTEMPTS]))
        permanent = draw(st.integers(0, 9)) == 0
        specs.append(Spec(f"j{number}", next_seq if with_seq else None, fails, permanent))
        next_seq += 1 if with_seq else 0
    bound = draw(st.integers(0, 4))  # how far the producer may move a send out of order
    keys = [number + draw(st.integers(0, bound)) for number in range(count)]
    order = [spec.job_id for _, spec in sorted(zip(keys, specs, strict=True), key=lambda pair: pair[0])]
    for spec in specs:  # a resend: same job id and seq, later in the queue
        if draw(st.integers(0, 4)) == 0:
            first = order.index(spec.job_id)
            order.insert(draw(st.integers(first + 1, len(order))), spec.job_id)
    return {spec.job_id: spec for spec in specs}, order


queues = st.builds(
    Queue,
    park=st.booleans(),
    policy=st.sampled_from(GapPolicy),
    reorder_limit=st.integers(1, 6),  # the settings spec's least reorder_limit is 1
    gap_timeout_ms=st.sampled_from([1_000, 2_000, 300_000]),  # the least gap_timeout is 1 s
)


def drive(data: st.DataObject, specs: dict[str, Spec], order: list[str], queue: Queue) -> Model:
    """Deliver batches from the head of the group until no record is left (at most 120 rounds).

    A RETRY stays where it is; every other record leaves the queue. Up to 5 rounds crash after their
    transitions ran and before the commit: nothing of those rounds happened.
    """
    model = Model(specs, [(job_id, send) for send, job_id in enumerate(order)])
    now, crashes = 0, 0
    for _ in range(120):
        if not model.queue:
            break
        now += data.draw(st.integers(0, 3_000))
        records = model.queue[: data.draw(st.integers(1, 10))]
        jobs = [replace(specs[job_id].job(), message_id=f"m{send}") for job_id, send in records]
        result = apply_batch(
            model.state,
            jobs,
            model.transition,
            now_ms=now,
            max_attempts=MAX_ATTEMPTS,
            park_on_dead=queue.park,
            reorder_limit=queue.reorder_limit,
            gap_policy=queue.policy,
            gap_timeout_ms=queue.gap_timeout_ms,
        )
        if crashes < 5 and data.draw(st.integers(0, 7)) == 0:
            crashes += 1
            continue
        if model.state.parked:
            model.applied_after_park.extend(result.applied)
        model.state = replace(result.group_state, version=model.state.version + 1)
        model.committed.append(result)
        done: set[int] = set()
        for (job_id, send), outcome in zip(records, result.results, strict=True):
            if outcome.outcome in (Outcome.DEAD, Outcome.DEAD_COPY):
                model.dlq.append(job_id)
            elif outcome.outcome is Outcome.KEEP:
                model.kept.append(job_id)
            if outcome.outcome is not Outcome.RETRY:
                done.add(send)
        model.dlq.extend(entry.job_id for entry, _ in result.dead_buffered)
        model.queue = [record for record in model.queue if record[1] not in done]
    return model


def seq_of(spec: Spec) -> int:
    """The spec's seq, -1 without one."""
    return -1 if spec.seq is None else spec.seq


def check_invariants(model: Model, *, park: bool) -> None:
    specs = model.specs
    applied = [job_id for result in model.committed for job_id in result.applied]
    # (a) every transition is applied at most once, those with seq in seq order
    assert len(applied) == len(set(applied)), f"applied twice: {applied}"
    seqs = [seq_of(specs[job_id]) for job_id in applied if specs[job_id].seq is not None]
    assert seqs == sorted(seqs), f"out of seq order: {applied}"
    # (b) the committed state is the fold of the applied jobs, in the order they were applied
    expected: State = None
    for job_id in applied:
        expected = append(specs[job_id].job(), expected)
    assert model.state.state == expected
    # no job reaches the DLQ unless it died itself, and no job that dies is applied
    assert all(specs[job_id].dies for job_id in model.dlq), f"collateral dead-lettering: {model.dlq}"
    assert not any(specs[job_id].dies for job_id in applied)
    # (c) nothing is lost: each job is applied, dead-lettered, kept, buffered, skipped or still queued
    ranges = [r for result in model.committed for r in result.skipped]
    skipped = {seq for r in ranges for seq in range(r.first, r.last + 1)}
    held = set(applied) | set(model.dlq) | set(model.kept) | {e.job_id for e in model.state.book.buffer}
    held |= {job_id for job_id, _ in model.queue}
    lost = [s.job_id for s in specs.values() if s.job_id not in held and s.seq not in skipped]
    assert lost == [], f"lost: {lost}"
    # (d) park: nothing is applied after the dead job in the group's order (seq order for jobs with
    # seq, queue order for jobs without), neither in its batch nor later
    if park:
        assert model.applied_after_park == []
        was_parked = False
        for result in model.committed:
            dead = result.group_state.book.parked
            if dead is not None and not was_parked:
                if dead.seq is not None:
                    later = [j for j in result.applied if seq_of(specs[j]) > dead.seq]
                else:
                    at = next(i for i, r in enumerate(result.results) if r.dead == dead)
                    later = [r.job_id for r in result.results[at:] if r.outcome is Outcome.APPLIED]
                assert later == [], f"applied after the dead job {dead.job_id}: {later}"
            was_parked = dead is not None


@given(workload=workloads(), queue=queues, data=st.data())
def test_property_exactly_once_in_order_and_nothing_lost(
    workload: tuple[dict[str, Spec], list[str]], queue: Queue, data: st.DataObject
) -> None:
    specs, order = workload
    check_invariants(drive(data, specs, order, queue), park=queue.park)


@given(workload=workloads(), data=st.data())
def test_property_with_room_and_no_failures_every_job_is_applied_in_seq_order(
    workload: tuple[dict[str, Spec], list[str]], data: st.DataObject
) -> None:
    specs, order = workload
    healthy = {job_id: replace(spec, fails=0, permanent=False) for job_id, spec in specs.items()}
    model = drive(data, healthy, order, Queue())
    check_invariants(model, park=False)
    assert model.queue == [] and model.state.book.buffer == ()
    applied = [job_id for result in model.committed for job_id in result.applied]
    assert sorted(applied) == sorted(healthy)
    with_seq = [job_id for job_id in applied if healthy[job_id].seq is not None]
    assert with_seq == sorted(with_seq, key=lambda job_id: seq_of(healthy[job_id]))


# --- a group's records through the core (run_group): malformed records split out, ticks, stalls ---


def record(body: str, message_id: str) -> SQSRecord:
    return {"messageId": message_id, "body": body, "attributes": {"MessageGroupId": GROUP}}


def queued(job_id: str, seq: int | None = None) -> SQSRecord:
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


def run_records(
    records: list[SQSRecord], transition: Log, start: GroupState | None = None, **options: Any
) -> BatchResult:
    settings = BatchSettings(**{"max_attempts": 3, "park_on_dead": False, **options})
    return run_group(start or GroupState(GROUP), records, transition, settings, now_ms=1_000)


def reasons(result: BatchResult) -> list[tuple[str, str]]:
    return [(r.job_id, r.outcome.value if r.reason is None else r.reason.value) for r in result.results]


def test_a_malformed_record_splits_the_group_and_the_state_runs_on_across_it() -> None:
    transition = Log()
    result = run_records([queued("a", 0), record('{"jobId": "m"}', "m-m"), queued("b", 1)], transition)
    assert reasons(result) == [("a", "APPLIED"), ("m", "DEAD"), ("b", "APPLIED")]
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
    result = run_records([queued("a"), record("not json", "m-x"), queued("b")], transition)
    assert reasons(result) == [("a", "FAILED"), ("", "BLOCKED"), ("b", "BLOCKED")]
    assert [r.attempt for r in result.results] == [1, 1, 1]
    assert transition.runs == ["a"]


def test_a_malformed_record_parks_the_group_at_itself_under_park() -> None:
    transition = Log()
    result = run_records([queued("a"), record("not json", "m-x"), queued("b")], transition, park_on_dead=True)
    assert reasons(result) == [("a", "APPLIED"), ("", "KEEP"), ("b", "KEEP")]
    assert result.parked_by is not None and result.parked_by.message_id == "m-x"
    assert result.results[1].dead == result.parked_by
    assert result.group_state.book.parked is None  # a malformed record has no death in the state
    assert transition.runs == ["a"]


def test_a_job_of_the_core_that_parks_the_group_is_its_parked_by() -> None:
    result = run_records(
        [queued("a"), queued("p"), queued("b")], Log(poison=frozenset({"p"})), park_on_dead=True
    )
    assert reasons(result) == [("a", "APPLIED"), ("p", "KEEP"), ("b", "KEEP")]
    assert result.parked_by is not None and result.parked_by.job_id == "p"
    assert result.parked_by.reason is DeadReason.PERMANENT


def test_the_message_a_job_died_in_carries_its_entry_across_a_malformed_split_and_a_copy_does_not() -> None:
    # GIVEN p died (permanent) in message m-p under the go-on policy
    died = run_records([queued("p")], Log(poison=frozenset({"p"})))
    (entry,) = died.group_state.book.dead_entries
    # WHEN m-p comes back behind a malformed record, followed by a copy of p in a new message
    copy = record('{"jobId": "p", "type": "t"}', "m-copy")
    transition = Log()
    again = run_records([record("not json", "m-x"), queued("p"), copy], transition, died.group_state)
    # THEN p runs in neither; m-p carries p's entry (dead-lettered as it died), the copy none
    assert reasons(again) == [("", "DEAD"), ("p", "DEAD_COPY"), ("p", "DEAD_COPY")]
    assert again.results[1].dead == entry and entry.reason is DeadReason.PERMANENT
    assert again.results[2].dead is None
    assert transition.runs == [] and not again.changed


def test_without_records_the_group_ticks_and_drains_its_buffer() -> None:
    transition = Log(fail={"b": 1})
    first = run_records([queued("b", 1), queued("a", 0)], transition)
    assert reasons(first) == [("b", "BUFFERED"), ("a", "CARRIER")]
    tick = run_records([], transition, start=first.group_state)
    assert tick.results == () and tick.group_state.state == {"log": ["a", "b"]}
    assert [entry.job_id for entry in tick.from_buffer] == ["b"]


def test_a_failed_buffered_job_with_only_dead_records_in_the_run_is_stalled_on() -> None:
    transition = Log(fail={"s1": 1}, poison=frozenset({"s0"}))
    buffered = run_records([queued("s1", 1)], transition)
    result = run_records([queued("s0", 0)], transition, start=buffered.group_state)
    assert reasons(result) == [("s0", "DEAD")]
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
