"""Unit tests of the demo's workload generator: determinism, counts, ids and the send plan."""

from __future__ import annotations

from collections import Counter

import pytest

from constructs_fifo.local.demo.sample_app import JOB_TYPES
from constructs_fifo.local.demo.workload import WorkloadSpec, generate_workload
from constructs_fifo.local.errors import WorkloadError


def test_same_seed_gives_the_same_plan_and_another_seed_a_different_one() -> None:
    # GIVEN two specs that differ only by seed
    spec = WorkloadSpec(workspaces=5, jobs=60, duplicate_rate=0.2, failure_rate=0.2, poison=2, seed=11)
    other = WorkloadSpec(workspaces=5, jobs=60, duplicate_rate=0.2, failure_rate=0.2, poison=2, seed=12)
    # WHEN each is generated (the first one twice)
    first, again, different = generate_workload(spec), generate_workload(spec), generate_workload(other)
    # THEN the same seed repeats exactly, and a different seed shares no job id
    assert first == again
    assert {job.job_id for job in first.jobs}.isdisjoint({job.job_id for job in different.jobs})


def test_counts_follow_the_spec() -> None:
    # GIVEN the default-sized demo
    spec = WorkloadSpec(workspaces=20, jobs=500, duplicate_rate=0.1, failure_rate=0.1, poison=2, seed=7)
    # WHEN it is generated
    workload = generate_workload(spec)
    # THEN jobs, poison, transient failures and duplicates have the requested sizes
    assert len(workload.jobs) == 500
    assert len({job.job_id for job in workload.jobs}) == 500
    assert len(workload.poison_jobs) == 2
    assert len(workload.transient_jobs) == 50
    assert {job.fail_attempts for job in workload.transient_jobs} <= {1, 2}
    assert workload.count("sqs_duplicate") + workload.count("late_duplicate") == 50
    assert workload.count("original") == 500
    assert len(workload.sends) == 550
    # AND every workspace gets 25 jobs
    assert Counter(job.workspace_id for job in workload.jobs) == {w: 25 for w in workload.workspace_ids}


def test_each_workspace_cycles_apply_run_open_in_its_own_group() -> None:
    # GIVEN a small workload
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=20, seed=3))
    # WHEN each workspace's jobs are read in order
    for workspace in workload.workspace_ids:
        jobs = [job for job in workload.jobs if job.workspace_id == workspace]
        # THEN the types cycle apply_patch -> run_tests -> open_pr and the group is ws#<id>
        assert [job.job_type for job in jobs] == [JOB_TYPES[i % 3] for i in range(len(jobs))]
        assert {job.group for job in jobs} == {f"ws#{workspace}"}


def test_poison_and_transient_jobs_carry_their_simulation_and_are_never_duplicated() -> None:
    # GIVEN a workload with every failure kind
    workload = generate_workload(
        WorkloadSpec(workspaces=4, jobs=80, duplicate_rate=0.5, failure_rate=0.3, poison=3, seed=5)
    )
    # THEN poison jobs ask to be poison, transient ones to fail n attempts, and the two do not mix
    for job in workload.poison_jobs:
        assert job.body()["payload"]["simulate"] == "poison"
        assert job.fail_attempts == 0
    for job in workload.transient_jobs:
        assert job.body()["payload"]["simulate"] == {"fail_attempts": job.fail_attempts}
    # AND no poison job is sent twice (a duplicate of a FAILED claim would run again)
    poison_ids = {job.job_id for job in workload.poison_jobs}
    assert all(send.kind == "original" for send in workload.sends if send.job.job_id in poison_ids)


def test_expected_order_is_sent_order_without_poison() -> None:
    # GIVEN a workload with poison jobs
    workload = generate_workload(WorkloadSpec(workspaces=2, jobs=30, poison=4, seed=9))
    poison_ids = {job.job_id for job in workload.poison_jobs}
    # WHEN expected and sent orders are compared
    for workspace, sent in workload.sent_order().items():
        # THEN the expected order is exactly the sent order with poison removed
        assert workload.expected_order()[workspace] == [j for j in sent if j not in poison_ids]


def test_duplicates_follow_their_original_in_the_same_group_with_the_right_dedup_id() -> None:
    # GIVEN a workload with many duplicates
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=60, duplicate_rate=0.6, seed=21))
    sends = list(workload.sends)
    for position, send in enumerate(sends):
        if send.kind == "original":
            continue
        # THEN the original of each duplicate went out earlier
        original_at = next(i for i, s in enumerate(sends) if s.job == send.job and s.kind == "original")
        assert original_at < position
        # AND SQS duplicates reuse the dedup id, late duplicates carry a new one
        if send.kind == "sqs_duplicate":
            assert send.deduplication_id == send.job.job_id
        else:
            assert send.deduplication_id != send.job.job_id


def test_original_sends_keep_each_workspace_in_order() -> None:
    # GIVEN the interleaved send plan
    workload = generate_workload(WorkloadSpec(workspaces=4, jobs=40, duplicate_rate=0.3, seed=2))
    # WHEN only the originals of one workspace are kept
    for workspace in workload.workspace_ids:
        originals = [
            s.job.index for s in workload.sends if s.kind == "original" and s.job.workspace_id == workspace
        ]
        # THEN they are in the workspace's sequence order
        assert originals == sorted(originals)


def test_batches_hold_at_most_ten_and_never_repeat_a_dedup_id() -> None:
    # GIVEN a workload where an SQS duplicate follows right after its original
    workload = generate_workload(WorkloadSpec(workspaces=1, jobs=30, duplicate_rate=1.0, seed=4))
    # WHEN it is split into batches
    batches = list(workload.batches())
    # THEN no batch is larger than 10 or holds one dedup id twice, and nothing is lost or reordered
    assert all(1 <= len(batch) <= 10 for batch in batches)
    assert all(len({s.deduplication_id for s in batch}) == len(batch) for batch in batches)
    assert [s for batch in batches for s in batch] == list(workload.sends)


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (WorkloadSpec(workspaces=0, jobs=5), "workspaces=0"),
        (WorkloadSpec(workspaces=10, jobs=5), "jobs=5: must be at least the number of workspaces"),
        (WorkloadSpec(duplicate_rate=1.5), "duplicate_rate=1.5"),
        (WorkloadSpec(failure_rate=-0.1), "failure_rate=-0.1"),
        (WorkloadSpec(poison=-1), "poison=-1"),
        (WorkloadSpec(jobs=20, workspaces=2, poison=21), "poison=21: cannot exceed jobs=20"),
    ],
)
def test_invalid_specs_name_the_value_and_the_rule(spec: WorkloadSpec, fragment: str) -> None:
    # GIVEN an invalid spec WHEN it is generated THEN the error names value and rule
    with pytest.raises(WorkloadError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        generate_workload(spec)


def test_all_problems_are_reported_together() -> None:
    # GIVEN a spec breaking two rules WHEN validated THEN both appear in one error
    with pytest.raises(WorkloadError) as caught:
        WorkloadSpec(workspaces=0, duplicate_rate=2.0).validate()
    assert "workspaces=0" in str(caught.value)
    assert "duplicate_rate=2.0" in str(caught.value)
