"""examples/agent_workspace/jobs/workspace_store.py on moto's S3: one commit per job id, HEAD moved once.

The effect guard's promise, driven through the real store: whatever the interleaving of two runs of one
``apply_patch`` (a redelivery beside a stale run), and wherever either dies between its S3 calls, the
job's commit is recorded once, the job's next run finishes what a dead one left (HEAD still at the
commit's parent is moved to it), and the workspace's history is the jobs' order, each patch applied
once. Hypothesis chooses the schedule and the crash points (a bounded number of examples in CI). The
store's two guards (the commit looked up by job id before the patch is applied, and its write with
``If-None-Match``) each hold this alone; the model fails with both removed.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import load_job_module

STORE = load_job_module("agent_workspace", "workspace_store")
BUCKET = "workspaces"
WS = "ws-1"
_BUCKETS = itertools.count()


@pytest.fixture
def s3(patched_moto: None) -> Iterator[Any]:
    client = boto3.client("s3", region_name="us-east-1")
    client.create_bucket(Bucket=BUCKET)
    yield client


def _commits(s3: Any) -> list[str]:
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=f"{WS}/commits/")
    return sorted(item["Key"] for item in listed.get("Contents", []))


def test_a_patch_commits_once_and_moves_head(s3: Any) -> None:
    # GIVEN a workspace with one commit
    store = STORE.WorkspaceStore(BUCKET, s3)
    first, made = store.apply_patch(WS, "p0", {"a.py": "1"})
    assert made and first.parent is None
    # WHEN the next patch applies, and then runs again (its job redelivered)
    second, made = store.apply_patch(WS, "p1", {"b.py": "2"})
    again, made_again = store.apply_patch(WS, "p1", {"b.py": "2"})
    # THEN the second run finds the commit recorded under the job id and changes nothing
    assert made and not made_again and again == second
    assert second.parent == first.commit and second.files == {"a.py": "1", "b.py": "2"}
    assert store.head(WS) == second
    assert _commits(s3) == [f"{WS}/commits/p0.json", f"{WS}/commits/p1.json"]


def test_a_run_that_died_after_its_commit_is_finished_by_the_next(s3: Any) -> None:
    # GIVEN a job whose commit was recorded by a run that died before it moved HEAD
    store = STORE.WorkspaceStore(BUCKET, s3)
    base, _ = store.apply_patch(WS, "p0", {"a.py": "1"})
    tree = {"a.py": "1", "b.py": "2"}
    recorded = STORE.Commit(STORE.commit_id(base.commit, tree), base.commit, "p1", tree)
    s3.put_object(Bucket=BUCKET, Key=STORE.commit_key(WS, "p1"), Body=json.dumps(recorded.to_json()).encode())
    assert store.head(WS) == base
    # WHEN the job runs again
    commit, made = store.apply_patch(WS, "p1", {"b.py": "2"})
    # THEN it moves HEAD to the recorded commit, without committing again
    assert not made and commit == recorded and store.head(WS) == recorded


def test_pull_request_and_verdict_are_written_once(s3: Any) -> None:
    # GIVEN a workspace commit WHEN its verdict and its pull request are written twice each
    store = STORE.WorkspaceStore(BUCKET, s3)
    commit, _ = store.apply_patch(WS, "p0", {"a.py": "1"})
    store.record_check(WS, commit.commit, True, "t0")
    store.record_check(WS, commit.commit, False, "t0-stale")
    opened = store.open_pull(WS, "pr0", commit.commit, "title")
    again = store.open_pull(WS, "pr0", "another-commit", "other")
    # THEN the first of each stands
    assert store.check(WS, commit.commit) is True
    assert opened == (STORE.PullRequest("pr0", commit.commit, "title"), True)
    assert again == (STORE.PullRequest("pr0", commit.commit, "title"), False)
    assert store.check(WS, "never-tested") is None and store.pull(WS, "pr1") is None


class _CrashError(Exception):
    """The run's task died before this S3 call."""


class _Turns:
    """Lets one run at a time make its next S3 call; the test picks whose turn it is and where a run dies.

    Runs are added as they start (``add``); a run that is neither waiting at a call nor done is making one.
    """

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.waiting: set[int] = set()
        self.done: set[int] = set()
        self.go: int | None = None
        self.calls: list[int] = []
        self.crash_before: list[int | None] = []

    def add(self, crash_before: int | None) -> int:
        with self.lock:
            self.calls.append(0)
            self.crash_before.append(crash_before)
            return len(self.calls) - 1

    def point(self, run: int) -> None:
        with self.lock:
            self.waiting.add(run)
            self.lock.notify_all()
            self.lock.wait_for(lambda: self.go == run)
            self.go = None
            self.waiting.discard(run)
            call, self.calls[run] = self.calls[run], self.calls[run] + 1
        if self.crash_before[run] == call:
            raise _CrashError

    def finish(self, run: int) -> None:
        with self.lock:
            self.done.add(run)
            self.lock.notify_all()

    def settle(self) -> list[int]:
        """Wait until every run waits at a call or is done; the waiting ones, in order."""
        with self.lock:
            self.lock.wait_for(
                lambda: len(self.waiting) + len(self.done) == len(self.calls) and self.go is None
            )
            return sorted(self.waiting)

    def let_go(self, run: int) -> None:
        with self.lock:
            self.go = run
            self.lock.notify_all()


class _GatedS3:
    """An S3 client whose every call is one run's turn."""

    def __init__(self, s3: Any, turns: _Turns, run: int) -> None:
        self._s3, self._turns, self._run = s3, turns, run

    def get_object(self, **kwargs: Any) -> Any:
        self._turns.point(self._run)
        return self._s3.get_object(**kwargs)

    def put_object(self, **kwargs: Any) -> Any:
        self._turns.point(self._run)
        return self._s3.put_object(**kwargs)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # a bucket of its own per example
@given(data=st.data())
def test_two_runs_of_one_patch_commit_it_once_whatever_the_schedule(patched_moto: None, data: Any) -> None:
    # GIVEN a workspace with one commit, and two runs of the next patch's job p1 (a redelivery beside a
    # stale run), each perhaps dying before one of its S3 calls; the group's next job p2 starts as soon
    # as a run of p1 has returned (its claim SUCCEEDED), while the other run of p1 may still be going
    s3 = boto3.client("s3", region_name="us-east-1")
    bucket = f"ws-{next(_BUCKETS)}"  # moto's state outlives an example: a fresh bucket for each
    s3.create_bucket(Bucket=bucket)
    store = STORE.WorkspaceStore(bucket, s3)
    base, _ = store.apply_patch(WS, "p0", {"a.py": "1"})
    turns = _Turns()
    returned: dict[int, tuple[str, Any]] = {}
    threads: list[threading.Thread] = []

    def start(job: str, files: dict[str, str], crash_before: int | None) -> None:
        index = turns.add(crash_before)

        def run() -> None:
            try:
                gated = STORE.WorkspaceStore(bucket, _GatedS3(s3, turns, index))
                returned[index] = (job, gated.apply_patch(WS, job, files))
            except _CrashError:
                pass
            finally:
                turns.finish(index)

        threads.append(threading.Thread(target=run, daemon=True))
        threads[-1].start()

    for run in (0, 1):
        start(
            "p1", {"b.py": "2"}, data.draw(st.none() | st.integers(0, 5), label=f"p1 run {run} dies before")
        )
    # WHEN the schedule interleaves their S3 calls
    while waiting := turns.settle():
        p1_returned = any(job == "p1" for job, _ in returned.values())
        if p1_returned and len(turns.calls) == 2:  # p2 not started yet
            start("p2", {"c.py": "3"}, None)
            continue
        turns.let_go(data.draw(st.sampled_from(waiting), label="turn"))
    for thread in threads:
        thread.join(timeout=10)
    # AND, if no run of p1 returned, p1 runs once more (its next delivery), then p2 runs
    if len(turns.calls) == 2:
        returned[2] = ("p1", store.apply_patch(WS, "p1", {"b.py": "2"}))
        returned[3] = ("p2", store.apply_patch(WS, "p2", {"c.py": "3"}))
    # THEN each job's commit is recorded once, every run of a job that returned returned that commit,
    # and the history is p0 -> p1 -> p2, each patch applied once, on the one before
    keys = s3.list_objects_v2(Bucket=bucket, Prefix=f"{WS}/commits/")["Contents"]
    assert sorted(item["Key"] for item in keys) == [f"{WS}/commits/{job}.json" for job in ("p0", "p1", "p2")]
    p1, p2 = store.commit_of(WS, "p1"), store.commit_of(WS, "p2")
    assert all(commit == (p1 if job == "p1" else p2) for job, (commit, _) in returned.values())
    assert p1.parent == base.commit and p1.files == {"a.py": "1", "b.py": "2"}
    assert p2.parent == p1.commit and p2.files == {"a.py": "1", "b.py": "2", "c.py": "3"}
    assert store.head(WS) == p2
