"""The agent workspace pipeline's job code: ``apply_patch`` -> ``run_tests`` -> ``open_pr``, per workspace.

One claim-mode queue on container workers runs it (handler ``pipeline.handle``); each workspace is a
message group (``ws#<workspace id>``), so its jobs run one at a time, in order, on whichever task
receives them. The workspace is in S3 (:mod:`workspace_store`, the bucket named by
``WORKSPACE_BUCKET``), so a job finds the workspace its group's last job left, whatever task ran it.

- ``apply_patch`` (payload ``{"files": {path: content}}``) commits the files on the workspace's HEAD,
  once per job id (the commit is recorded under the job id before HEAD moves; a run that finds it
  recorded does not apply the patch again);
- ``run_tests`` (payload ``{"durationSeconds": s}``) stands for a long test run: it waits ``s`` seconds
  in short steps, looking at ``context.cancelled`` between them (set by the worker when the run went
  stale or its task is stopping past its grace period), then records the verdict on HEAD's commit (a
  file whose content holds ``FAIL`` fails it). The worker's heartbeats keep the job's records hidden and
  its claim held however long it runs;
- ``open_pr`` (payload ``{"title": ...}``) opens a pull request from HEAD's commit, once per job id,
  and only when the tests passed on that commit: otherwise the job is dead (``PermanentJobError``) and
  the workspace parks there.

Each returns a small JSON result, stored with the job's SUCCEEDED claim (what ``JobOutcomes`` reads).
"""

from __future__ import annotations

import functools
import os
import time
from typing import Any

import boto3
from workspace_store import Commit, WorkspaceStore

from constructs_fifo.runtime import Job, PermanentJobError

__all__ = [
    "APPLY_PATCH",
    "BUCKET_VARIABLE",
    "GROUP_PREFIX",
    "OPEN_PR",
    "RUN_TESTS",
    "STEP_SECONDS",
    "RunCancelledError",
    "handle",
    "workspace_of",
]

APPLY_PATCH = "apply_patch"
RUN_TESTS = "run_tests"
OPEN_PR = "open_pr"
#: The environment variable naming the workspaces' bucket (the stack sets it on the workers).
BUCKET_VARIABLE = "WORKSPACE_BUCKET"
#: A workspace's message group is this prefix and its id.
GROUP_PREFIX = "ws#"
#: How often a test run looks at ``context.cancelled``: a stale run stops within this.
STEP_SECONDS = 0.25
#: What marks a file as failing its tests (the stand-in test suite).
FAILING_MARK = "FAIL"


class RunCancelledError(RuntimeError):
    """The worker cancelled the run (stale, or stopping): it stopped without a verdict."""


def workspace_of(group: str) -> str:
    """The workspace id of a message group."""
    return group.removeprefix(GROUP_PREFIX)


@functools.cache
def _workspaces() -> WorkspaceStore:
    """One store (one S3 client) per worker process."""
    return WorkspaceStore(os.environ[BUCKET_VARIABLE], boto3.client("s3"))


def _head(store: WorkspaceStore, workspace: str, job: Job) -> Commit:
    head = store.head(workspace)
    if head is None:
        raise PermanentJobError(f"job {job.id!r} ({job.type}): workspace {workspace!r} has no commit yet")
    return head


def _run_tests(store: WorkspaceStore, workspace: str, job: Job, context: Any) -> dict[str, Any]:
    head = _head(store, workspace, job)
    cancelled = getattr(context, "cancelled", None)
    deadline = time.monotonic() + float(job.payload.get("durationSeconds", 0))
    while (left := deadline - time.monotonic()) > 0:
        if cancelled is not None and cancelled.is_set():
            raise RunCancelledError(
                f"job {job.id!r}: the test run was cancelled (stale, or its task stopped)"
            )
        time.sleep(min(STEP_SECONDS, left))
    failing = sorted(path for path, content in head.files.items() if FAILING_MARK in content)
    store.record_check(workspace, head.commit, not failing, job.id)
    return {"commit": head.commit, "passed": not failing, "failing": failing, "attempt": job.attempt}


def handle(job: Job, context: Any) -> dict[str, Any]:
    """Run one job of a workspace's pipeline; return its result (stored with its SUCCEEDED claim)."""
    store = _workspaces()
    workspace = workspace_of(job.group)
    payload = job.payload if isinstance(job.payload, dict) else {}
    if job.type == APPLY_PATCH:
        made_commit, made = store.apply_patch(workspace, job.id, dict(payload.get("files", {})))
        return {"commit": made_commit.commit, "parent": made_commit.parent, "replayed": not made}
    if job.type == RUN_TESTS:
        return _run_tests(store, workspace, job, context)
    if job.type == OPEN_PR:
        commit = _head(store, workspace, job).commit
        if store.check(workspace, commit) is not True:
            raise PermanentJobError(
                f"job {job.id!r}: the tests have not passed on {commit[:12]} of workspace {workspace!r}: "
                "no pull request (fix the patch, then resume the group)"
            )
        pull, opened = store.open_pull(workspace, job.id, commit, str(payload.get("title", job.id)))
        return {"commit": pull.commit, "title": pull.title, "replayed": not opened}
    raise PermanentJobError(
        f"job {job.id!r}: unknown job type {job.type!r} (apply_patch, run_tests, open_pr)"
    )
