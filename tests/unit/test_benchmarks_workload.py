"""The benchmark's workload: batches filled the way Lambda fills them from a FIFO queue."""

from __future__ import annotations

import json

from benchmarks.workload import Record, fifo_batches, records, workload


def _groups(batch: list[Record]) -> list[str]:
    return [record["attributes"]["MessageGroupId"] for record in batch]


def _jobs(batch: list[Record]) -> list[str]:
    return [json.loads(record["body"])["jobId"] for record in batch]


def test_each_batch_of_the_default_workload_holds_one_groups_next_ten_jobs_in_order() -> None:
    # GIVEN / WHEN the default workload: 1,000 jobs round-robin over 50 groups, batches of 10
    work = workload(jobs=1000, groups=50, batch_size=10)
    # THEN there are 100 full batches, each one group, its jobs in send order
    assert len(work.new) == 100
    assert all(len(set(_groups(batch))) == 1 and len(batch) == 10 for batch in work.new)
    assert _jobs(work.new[0]) == [f"job-{index}" for index in range(0, 500, 50)]
    assert _jobs(work.new[50]) == [f"job-{index}" for index in range(500, 1000, 50)]
    assert (work.jobs, work.groups, work.batch_size) == (1000, 50, 10)


def test_a_group_with_fewer_records_than_a_batch_is_topped_up_by_the_next_group() -> None:
    # GIVEN 3 records of group a and 2 of group b, interleaved (a b a b a)
    queue = records([f"j{index}" for index in range(5)], 2)
    # WHEN they are cut into batches of 4
    batches = fifo_batches(queue, 4)
    # THEN a's records come first, in order, then b's first record fills the batch; b's last follows
    assert [_jobs(batch) for batch in batches] == [["j0", "j2", "j4", "j1"], ["j3"]]


def test_duplicates_are_new_messages_of_the_same_jobs_and_the_warmup_is_separate() -> None:
    # GIVEN / WHEN a small workload
    work = workload(jobs=20, groups=4, batch_size=10)
    new = [record for batch in work.new for record in batch]
    duplicates = [record for batch in work.duplicates for record in batch]
    # THEN every job comes again with a new messageId, and the warm-up shares no job id
    assert sorted(_jobs(new)) == sorted(_jobs(duplicates))
    assert {r["messageId"] for r in new}.isdisjoint({r["messageId"] for r in duplicates})
    assert set(_jobs(work.warmup[0])).isdisjoint(_jobs(new))
