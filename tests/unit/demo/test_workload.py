"""Unit tests of the demo's workload generator: determinism, counts, ids, poison and last-attempt jobs,
send plans."""

from __future__ import annotations

from collections import Counter

import pytest

from constructs_fifo.demo.errors import WorkloadError
from constructs_fifo.demo.sample_app import JOB_TYPES, NOTIFICATION_TYPE
from constructs_fifo.demo.workload import HEALTHY_BEHIND, WorkloadSpec, generate_workload


def test_same_seed_gives_the_same_plan_and_another_seed_a_different_one() -> None:
    # GIVEN two specs that differ only by seed
    spec = WorkloadSpec(workspaces=5, jobs=60, duplicate_rate=0.2, failure_rate=0.2, poison=2, seed=11)
    other = WorkloadSpec(workspaces=5, jobs=60, duplicate_rate=0.2, failure_rate=0.2, poison=2, seed=12)
    # WHEN each is generated (the first one twice)
    first, again, different = generate_workload(spec), generate_workload(spec), generate_workload(other)
    # THEN the same seed repeats exactly, and a different seed shares no job id, on either queue
    assert first == again
    ids = {job.job_id for job in (*first.jobs, *first.notifications)}
    assert ids.isdisjoint({job.job_id for job in (*different.jobs, *different.notifications)})


def test_counts_follow_the_spec() -> None:
    # GIVEN the default-sized demo
    workload = generate_workload(WorkloadSpec())
    # THEN workspace jobs, special jobs, transient failures and duplicates have the requested sizes
    assert len(workload.jobs) == 500
    assert len({job.job_id for job in workload.jobs}) == 500
    assert len(workload.poison_jobs) == 2
    assert len(workload.last_attempt_jobs) == 1
    assert workload.count("original", "workspaces") == 500
    assert (
        workload.count("sqs_duplicate", "workspaces") + workload.count("late_duplicate", "workspaces") == 50
    )
    assert workload.count("poison_copy") == 2
    assert len(workload.sends) == 552
    # AND every workspace gets 25 jobs
    assert Counter(job.workspace_id for job in workload.jobs) == {w: 25 for w in workload.workspace_ids}
    # AND every pull request has a notification, with its own duplicates and transient failures
    prs = [job for job in workload.jobs if job.job_type == "open_pr"]
    assert [n.job_id for n in workload.notifications] == [f"{pr.job_id}-n" for pr in prs]
    assert workload.count("original", "notifications") == len(prs) == 160
    assert (
        workload.count("sqs_duplicate", "notifications") + workload.count("late_duplicate", "notifications")
        == 16
    )
    assert sum(1 for n in workload.notifications if n.fail_attempts) == 16
    assert len(workload.transient_jobs) == 50 + 16


def test_each_workspace_cycles_apply_run_open_in_its_own_group_with_seq() -> None:
    # GIVEN a small workload
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=20, poison=0, last_attempt=0, seed=3))
    # WHEN each workspace's jobs are read in order
    for workspace in workload.workspace_ids:
        jobs = [job for job in workload.jobs if job.workspace_id == workspace]
        # THEN the types cycle apply_patch -> run_tests -> open_pr, the group is ws#<id>, and each job's
        # seq is its position (the workspace's version), in its body
        assert [job.job_type for job in jobs] == [JOB_TYPES[i % 3] for i in range(len(jobs))]
        assert {job.group for job in jobs} == {f"ws#{workspace}"}
        assert [job.body()["seq"] for job in jobs] == list(range(len(jobs)))
    # AND notifications go to the other queue, in the same group, without seq
    assert {n.job_type for n in workload.notifications} == {NOTIFICATION_TYPE}
    assert all(n.queue == "notifications" and "seq" not in n.body() for n in workload.notifications)


def test_poison_and_last_attempt_jobs_have_ten_healthy_jobs_behind_them_in_their_own_workspace() -> None:
    # GIVEN the default workload (2 poison, 1 failing until its last attempt, max_attempts 5)
    workload = generate_workload(WorkloadSpec())
    specials = [*workload.poison_jobs, *workload.last_attempt_jobs]
    # THEN each is alone among the special jobs of its workspace
    assert len({job.workspace_id for job in specials}) == 3
    for special in specials:
        behind = [
            j for j in workload.jobs if j.workspace_id == special.workspace_id and j.index > special.index
        ]
        # AND at least ten healthy jobs follow it
        assert len(behind) >= HEALTHY_BEHIND
        assert not any(j.poison or j.last_attempt for j in behind)
    # AND the poison ones ask to be poison; the last-attempt one fails max_attempts - 1 = 4 times
    for job in workload.poison_jobs:
        assert job.body()["payload"]["simulate"] == "poison"
    (last,) = workload.last_attempt_jobs
    assert last.body()["payload"]["simulate"] == {"fail_attempts": 4}
    assert last.fail_attempts == 4


def test_a_poison_job_is_sent_twice_the_copy_with_a_new_dedup_id_a_few_jobs_later() -> None:
    # GIVEN a workload with poison jobs
    workload = generate_workload(WorkloadSpec(workspaces=4, jobs=60, poison=2, last_attempt=1, seed=5))
    for job in workload.poison_jobs:
        group = [s for s in workload.sends if s.job.workspace_id == job.workspace_id]
        positions = [i for i, s in enumerate(group) if s.job == job]
        # THEN it is sent twice: the original, then a copy with a new deduplication id
        assert [group[i].kind for i in positions] == ["original", "poison_copy"]
        assert [group[i].deduplication_id for i in positions] == [job.job_id, f"{job.job_id}.copy"]
        # AND between them go 1 to 5 healthy originals, so healthy jobs stand on both sides of the copy
        between = [s for s in group[positions[0] + 1 : positions[1]] if s.kind == "original"]
        assert 1 <= len(between) <= 5


def test_transient_and_special_jobs_are_never_duplicated_and_poison_is_never_transient() -> None:
    # GIVEN a workload with every failure kind
    workload = generate_workload(
        WorkloadSpec(workspaces=4, jobs=80, duplicate_rate=0.5, failure_rate=0.3, poison=2, seed=5)
    )
    # THEN transient jobs ask to fail n attempts, poison jobs do not
    for job in workload.transient_jobs:
        assert job.body()["payload"]["simulate"] == {"fail_attempts": job.fail_attempts}
        assert job.fail_attempts in (1, 2)
    assert all(job.fail_attempts == 0 for job in workload.poison_jobs)
    # AND no special job is duplicated except the poison copy
    special = {job.job_id for job in (*workload.poison_jobs, *workload.last_attempt_jobs)}
    assert all(
        send.kind in ("original", "poison_copy") for send in workload.sends if send.job.job_id in special
    )


def test_expected_order_is_sent_order_without_poison() -> None:
    # GIVEN a workload with poison jobs
    workload = generate_workload(WorkloadSpec(workspaces=4, jobs=60, poison=3, last_attempt=1, seed=9))
    poison_ids = {job.job_id for job in workload.poison_jobs}
    # WHEN expected and sent orders are compared
    for workspace, sent in workload.sent_order().items():
        # THEN the expected order is exactly the sent order with poison removed
        assert workload.expected_order()[workspace] == [j for j in sent if j not in poison_ids]


def test_duplicates_follow_their_original_in_the_same_group_with_the_right_dedup_id() -> None:
    # GIVEN a workload with many duplicates
    workload = generate_workload(WorkloadSpec(workspaces=3, jobs=60, duplicate_rate=0.6, seed=21))
    for sends in (list(workload.sends), list(workload.notification_sends)):
        for position, send in enumerate(sends):
            if send.kind == "original":
                continue
            # THEN the original of each duplicate went out earlier
            original_at = next(i for i, s in enumerate(sends) if s.job == send.job and s.kind == "original")
            assert original_at < position
            # AND SQS duplicates reuse the dedup id, late duplicates and poison copies carry a new one
            if send.kind == "sqs_duplicate":
                assert send.deduplication_id == send.job.job_id
            else:
                assert send.deduplication_id != send.job.job_id


def test_original_sends_keep_each_workspace_in_order() -> None:
    # GIVEN the interleaved send plans
    workload = generate_workload(WorkloadSpec(workspaces=4, jobs=60, duplicate_rate=0.3, seed=2))
    # WHEN only the originals of one workspace are kept
    for workspace in workload.workspace_ids:
        for sends in (workload.sends, workload.notification_sends):
            originals = [
                s.job.index for s in sends if s.kind == "original" and s.job.workspace_id == workspace
            ]
            # THEN they are in the workspace's sequence order
            assert originals == sorted(originals)


def test_batches_hold_at_most_ten_and_never_repeat_a_dedup_id() -> None:
    # GIVEN a workload where an SQS duplicate follows right after its original
    workload = generate_workload(
        WorkloadSpec(workspaces=1, jobs=30, duplicate_rate=1.0, poison=0, last_attempt=0, seed=4)
    )
    for queue in ("workspaces", "notifications"):
        # WHEN a queue's sends are split into batches
        batches = list(workload.batches(queue=queue))
        # THEN no batch is larger than 10 or holds one dedup id twice, and nothing is lost or reordered
        assert all(1 <= len(batch) <= 10 for batch in batches)
        assert all(len({s.deduplication_id for s in batch}) == len(batch) for batch in batches)
        assert [s for batch in batches for s in batch] == list(workload.sends_to(queue))


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        (WorkloadSpec(workspaces=0, jobs=5), "workspaces=0"),
        (WorkloadSpec(workspaces=10, jobs=5), "jobs=5: must be at least the number of workspaces"),
        (WorkloadSpec(duplicate_rate=1.5), "duplicate_rate=1.5"),
        (WorkloadSpec(failure_rate=-0.1), "failure_rate=-0.1"),
        (WorkloadSpec(poison=-1), "poison=-1: must be 0 or more; pass --poison 0"),
        (WorkloadSpec(last_attempt=-1), "last_attempt=-1: must be 0 or more; pass --last-attempt 0"),
        (
            WorkloadSpec(jobs=40, workspaces=4, poison=2, last_attempt=1),
            "each needs a workspace of its own with at least 11 jobs (10 healthy jobs behind it), and only 0 "
            "of the 4 workspaces have that many",
        ),
        (WorkloadSpec(workspaces=2, jobs=30, poison=2, last_attempt=1), "only 2 of the 2 workspaces"),
        (WorkloadSpec(max_attempts=1), "max_attempts=1: a job failing until its last attempt needs 2"),
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
