"""A coding agent's workspace in S3, where every worker task reaches it, and the guard on its commits.

A workspace's jobs run in order (one message group per workspace), but not on one machine: the next
job of a group may run on another task, and a task may die in the middle of a job, whose next run is
then on another task too. So the workspace lives in a bucket, not on a task's disk:

- ``<workspace>/commits/<job id>.json``: the commit a job made (its files, its parent), written once
  per job id with ``If-None-Match: *``. This is the effect guard: a job that runs again (its task
  died after the commit and before its claim said SUCCEEDED, or a stale run whose lease another task
  took over) finds its commit recorded and does not apply its patch a second time;
- ``<workspace>/HEAD``: the workspace's current commit and the job that made it, moved with
  ``If-Match`` on the ETag read before the commit was computed, so it moves only from the parent the
  commit was built on (two runs of one job cannot both move it; a run that finds it already moved
  past its parent leaves it);
- ``<workspace>/checks/<commit>.json``: a test run's verdict on a commit (same commit, same verdict:
  a second run writes the same object);
- ``<workspace>/pulls/<job id>.json``: the pull request a job opened, once per job id (``If-None-Match``).

The job's commit is looked up before its patch is applied (a run that finds it does no work), and
written with ``If-None-Match`` (of two runs that both found none, one records it; the other takes the
recorded one): the lookup saves the work, the conditional write holds in a race.

A crash between the commit and HEAD leaves the commit recorded and HEAD at its parent: the job's next
run finds the commit and moves HEAD to it. Conditional writes are S3's (PutObject ``If-None-Match`` and
``If-Match``, since 2024), so no other store is needed.

The S3 client is passed in (tests give one bound to moto).

Examples
--------
>>> commit_key("ws-1", "job-7")
'ws-1/commits/job-7.json'
>>> commit_id(None, {"a.py": "x = 1"})[:12]
'2f8522731554'
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Commit",
    "PullRequest",
    "WorkspaceStore",
    "check_key",
    "commit_id",
    "commit_key",
    "head_key",
    "pull_key",
]

_PRECONDITION_FAILED = ("PreconditionFailed", "412", "ConditionalRequestConflict")
_NOT_FOUND = ("NoSuchKey", "404", "NotFound")


def head_key(workspace: str) -> str:
    """The key of the workspace's HEAD."""
    return f"{workspace}/HEAD"


def commit_key(workspace: str, job_id: str) -> str:
    """The key of the commit ``job_id`` made: one per job id."""
    return f"{workspace}/commits/{job_id}.json"


def check_key(workspace: str, commit: str) -> str:
    """The key of a test run's verdict on ``commit``."""
    return f"{workspace}/checks/{commit}.json"


def pull_key(workspace: str, job_id: str) -> str:
    """The key of the pull request ``job_id`` opened: one per job id."""
    return f"{workspace}/pulls/{job_id}.json"


def commit_id(parent: str | None, files: dict[str, str]) -> str:
    """A commit's id: the hash of its parent and its files (same patch, same parent: same id)."""
    text = json.dumps({"parent": parent, "files": files}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Commit:
    """One commit of a workspace: the whole tree (a workspace here is small), its parent, its job."""

    commit: str
    parent: str | None
    job_id: str
    files: dict[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"commit": self.commit, "parent": self.parent, "jobId": self.job_id, "files": self.files}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Commit:
        return cls(str(data["commit"]), data.get("parent"), str(data["jobId"]), dict(data["files"]))


@dataclass(frozen=True)
class PullRequest:
    """A pull request opened from a workspace's commit (a stand-in for the forge's API)."""

    job_id: str
    commit: str
    title: str

    def to_json(self) -> dict[str, Any]:
        return {"jobId": self.job_id, "commit": self.commit, "title": self.title}


def _code(error: Exception) -> str:
    response = getattr(error, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


class WorkspaceStore:
    """Workspaces in one bucket; ``s3`` is a boto3 S3 client."""

    def __init__(self, bucket: str, s3: Any) -> None:
        self.bucket = bucket
        self.s3 = s3

    # -- reads -------------------------------------------------------------------------------------

    def _get(self, key: str) -> tuple[dict[str, Any] | None, str | None]:
        """The JSON object at ``key`` and its ETag, or ``(None, None)``."""
        try:
            response = self.s3.get_object(Bucket=self.bucket, Key=key)
        except Exception as error:
            if _code(error) in _NOT_FOUND:
                return None, None
            raise
        return json.loads(response["Body"].read()), str(response["ETag"])

    def head(self, workspace: str) -> Commit | None:
        """The workspace's current commit, or ``None`` before its first."""
        pointer, _ = self._get(head_key(workspace))
        return None if pointer is None else self.commit_of(workspace, str(pointer["jobId"]))

    def commit_of(self, workspace: str, job_id: str) -> Commit | None:
        """The commit ``job_id`` recorded, or ``None``."""
        data, _ = self._get(commit_key(workspace, job_id))
        return None if data is None else Commit.from_json(data)

    def check(self, workspace: str, commit: str) -> bool | None:
        """Whether the tests passed on ``commit``; ``None`` when they never ran on it."""
        data, _ = self._get(check_key(workspace, commit))
        return None if data is None else bool(data["passed"])

    def pull(self, workspace: str, job_id: str) -> PullRequest | None:
        """The pull request ``job_id`` opened, or ``None``."""
        data, _ = self._get(pull_key(workspace, job_id))
        return (
            None if data is None else PullRequest(str(data["jobId"]), str(data["commit"]), str(data["title"]))
        )

    # -- writes ------------------------------------------------------------------------------------

    def _put_once(self, key: str, data: dict[str, Any]) -> bool:
        """Write ``data`` at ``key`` unless something is there; whether this call wrote it."""
        try:
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=json.dumps(data).encode(), IfNoneMatch="*")
        except Exception as error:
            if _code(error) in _PRECONDITION_FAILED:
                return False
            raise
        return True

    def _move_head(self, workspace: str, commit: Commit, etag: str | None) -> bool:
        """Point HEAD at ``commit`` if it is still what was read (ETag ``etag``; ``None``: no HEAD yet)."""
        condition = {"IfMatch": etag} if etag is not None else {"IfNoneMatch": "*"}
        body = json.dumps({"commit": commit.commit, "jobId": commit.job_id}).encode()
        try:
            self.s3.put_object(Bucket=self.bucket, Key=head_key(workspace), Body=body, **condition)
        except Exception as error:
            if _code(error) in _PRECONDITION_FAILED:
                return False
            raise
        return True

    def apply_patch(self, workspace: str, job_id: str, files: dict[str, str]) -> tuple[Commit, bool]:
        """Commit ``files`` (path -> new content) on the workspace's HEAD as ``job_id``'s commit, once.

        Returns the job's commit and whether this call made it (``False``: a run of the same job had
        recorded it; HEAD is moved to it if it still stands at its parent).
        """
        pointer, etag = self._get(head_key(workspace))
        parent = None if pointer is None else self.commit_of(workspace, str(pointer["jobId"]))
        recorded = self.commit_of(workspace, job_id)  # the guard: checked before the write
        made = False
        if recorded is None:
            tree = {**(parent.files if parent else {}), **files}
            parent_id = parent.commit if parent else None
            candidate = Commit(commit_id(parent_id, tree), parent_id, job_id, tree)
            made = self._put_once(commit_key(workspace, job_id), candidate.to_json())
            recorded = candidate if made else self.commit_of(workspace, job_id)
            assert recorded is not None  # written by this call or by the run that won
        head_commit = parent.commit if parent else None
        if head_commit == recorded.parent:  # HEAD still at the commit's parent: move it
            self._move_head(workspace, recorded, etag)
        return recorded, made

    def record_check(self, workspace: str, commit: str, passed: bool, job_id: str) -> None:
        """Record the tests' verdict on ``commit`` (the first run's stands)."""
        self._put_once(check_key(workspace, commit), {"commit": commit, "passed": passed, "jobId": job_id})

    def open_pull(self, workspace: str, job_id: str, commit: str, title: str) -> tuple[PullRequest, bool]:
        """Open ``job_id``'s pull request from ``commit``, once; whether this call opened it."""
        wanted = PullRequest(job_id, commit, title)
        if self._put_once(pull_key(workspace, job_id), wanted.to_json()):
            return wanted, True
        found = self.pull(workspace, job_id)
        assert found is not None  # written once, never deleted
        return found, False
