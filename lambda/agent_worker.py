"""Sample job code: an agent's workspace, changed by ordered jobs.

Each workspace (MessageGroupId ``ws#<workspaceId>``) is one item of the workspace table (env
``WORKSPACE_TABLE_NAME``). A job loads the item, applies itself and writes the item back under an
optimistic lock on ``version``, so order matters and shows:

- ``apply_patch`` appends ``payload["patch"]`` (default: the jobId) to ``patches``;
- ``run_tests`` records ``tested_head`` = number of patches and appends to ``test_runs``;
- ``open_pr`` appends ``{"jobId", "head", "tested"}`` to ``prs``, where ``tested`` says whether the
  tests ran on exactly the patches the PR holds.

Every applied jobId is appended to ``applied``; a job already there is not applied again, and its
delivery is appended to ``replayed`` instead. For demos
the payload may ask for failure: ``{"simulate": {"fail_attempts": n}}`` fails attempts 1..n,
``{"simulate": "poison"}`` fails permanently.
"""

from __future__ import annotations

import os
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import boto3
from botocore.exceptions import ClientError

from constructs_fifo.runtime import Job, PermanentJobError

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.service_resource import Table

__all__ = [
    "ENV_WORKSPACE_TABLE",
    "GROUP_PREFIX",
    "JOB_TYPES",
    "REPLAYED",
    "SimulatedFailureError",
    "WorkspaceConflictError",
    "WorkspaceStore",
    "apply_job",
    "handle",
    "workspace_id_of",
]

ENV_WORKSPACE_TABLE = "WORKSPACE_TABLE_NAME"
#: Job ids delivered to the worker again after they were applied (not applied a second time).
REPLAYED = "replayed"
GROUP_PREFIX = "ws#"
JOB_TYPES = ("apply_patch", "run_tests", "open_pr")


class SimulatedFailureError(RuntimeError):
    """A transient failure the payload asked for (``simulate.fail_attempts``)."""


class WorkspaceConflictError(RuntimeError):
    """The workspace changed between load and save; the job is retried."""


def workspace_id_of(job: Job) -> str:
    """The workspace id of ``job``: its group without the ``ws#`` prefix.

    Raises
    ------
    PermanentJobError
        The group does not start with ``ws#`` or names no workspace.
    """
    if not job.group.startswith(GROUP_PREFIX) or len(job.group) == len(GROUP_PREFIX):
        raise PermanentJobError(
            f"job {job.id!r} has MessageGroupId {job.group!r}: the sample worker needs "
            f"'{GROUP_PREFIX}<workspaceId>'; send it with that group id."
        )
    return job.group[len(GROUP_PREFIX) :]


def _simulate(job: Job) -> None:
    payload = job.payload if isinstance(job.payload, dict) else {}
    simulate = payload.get("simulate")
    if simulate == "poison":
        raise PermanentJobError(f"job {job.id!r} is poison (payload.simulate='poison')")
    if isinstance(simulate, dict):
        fail_attempts = int(simulate.get("fail_attempts", 0))
        if job.attempt <= fail_attempts:
            raise SimulatedFailureError(
                f"job {job.id!r} attempt {job.attempt} fails on purpose "
                f"(payload.simulate.fail_attempts={fail_attempts})"
            )


def apply_job(job: Job, state: dict[str, Any]) -> dict[str, Any]:
    """Return ``state`` with ``job`` applied (pure; ``state`` is not changed).

    Parameters
    ----------
    job
        The job; ``job.type`` is one of :data:`JOB_TYPES`.
    state
        The workspace item without its key and version.

    Raises
    ------
    PermanentJobError
        Unknown job type.
    """
    new = {key: list(value) if isinstance(value, list) else value for key, value in state.items()}
    payload = job.payload if isinstance(job.payload, dict) else {}
    patches: list[Any] = new.setdefault("patches", [])
    if job.type == "apply_patch":
        patches.append(payload.get("patch", job.id))
    elif job.type == "run_tests":
        new["tested_head"] = len(patches)
        new.setdefault("test_runs", []).append({"jobId": job.id, "head": len(patches)})
    elif job.type == "open_pr":
        tested = new.get("tested_head") == len(patches)
        new.setdefault("prs", []).append({"jobId": job.id, "head": len(patches), "tested": tested})
    else:
        raise PermanentJobError(
            f"job {job.id!r} has type {job.type!r}: the sample worker handles {', '.join(JOB_TYPES)}; "
            "send one of those."
        )
    new.setdefault("applied", []).append(job.id)
    return new


def _plain(value: Any) -> Any:
    """DynamoDB's Decimals back to ints (the workspace holds only integers)."""
    if isinstance(value, Decimal):
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class WorkspaceStore:
    """Load and save workspace items with an optimistic lock on ``version``.

    Parameters
    ----------
    table
        A boto3 DynamoDB ``Table`` resource (tests pass one bound to moto).
    """

    def __init__(self, table: Table) -> None:
        self._table = table

    def load(self, workspace_id: str) -> tuple[dict[str, Any], int]:
        """The workspace's state and version (``{}`` and 0 when it does not exist yet)."""
        item = self._table.get_item(Key={"workspaceId": workspace_id}, ConsistentRead=True).get("Item")
        if not item:
            return {}, 0
        state = {k: _plain(v) for k, v in item.items() if k not in ("workspaceId", "version")}
        return state, int(_plain(item.get("version", 0)))

    def save(self, workspace_id: str, state: dict[str, Any], version: int) -> None:
        """Write ``state`` as version ``version + 1`` if the item is still at ``version``.

        Raises
        ------
        WorkspaceConflictError
            Another writer changed the workspace since it was loaded.
        """
        item = {**state, "workspaceId": workspace_id, "version": version + 1}
        try:
            if version == 0:
                self._table.put_item(Item=item, ConditionExpression="attribute_not_exists(workspaceId)")
            else:
                self._table.put_item(
                    Item=item,
                    ConditionExpression="version = :expected",
                    ExpressionAttributeValues={":expected": version},
                )
        except ClientError as error:
            if error.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException":
                raise WorkspaceConflictError(
                    f"workspace {workspace_id!r} changed since version {version} was loaded; "
                    "the job is retried"
                ) from error
            raise


_store: WorkspaceStore | None = None


def _default_store() -> WorkspaceStore:
    global _store  # noqa: PLW0603 - one resource per Lambda container, created on first use
    if _store is None:
        table_name = os.environ.get(ENV_WORKSPACE_TABLE)
        if not table_name:
            raise RuntimeError(
                f"environment variable {ENV_WORKSPACE_TABLE} is not set: the worker needs the workspace "
                "table's name; set it on the function (the sample app does)."
            )
        _store = WorkspaceStore(boto3.resource("dynamodb").Table(table_name))
    return _store


def handle(job: Job, context: object, *, store: WorkspaceStore | None = None) -> None:
    """Apply ``job`` to its workspace, once.

    Parameters
    ----------
    job
        The job from the constructs-fifo runtime.
    context
        The Lambda context (unused).
    store
        Where workspaces live; by default the table named by ``WORKSPACE_TABLE_NAME``.

    Raises
    ------
    PermanentJobError
        Bad group id, unknown type or a poison job.
    SimulatedFailureError, WorkspaceConflictError
        Transient: the runtime retries the job.
    """
    workspace_id = workspace_id_of(job)
    _simulate(job)
    store = store or _default_store()
    state, version = store.load(workspace_id)
    if job.id in state.get("applied", []):
        # Already applied: the effect happens once even if the claim was lost (a crash between this
        # write and the runtime's SUCCEEDED write). The delivery is recorded in "replayed", so a
        # verifier can tell the claim table did not stop it.
        store.save(workspace_id, {**state, REPLAYED: [*state.get(REPLAYED, []), job.id]}, version)
        return
    store.save(workspace_id, apply_job(job, state), version)
