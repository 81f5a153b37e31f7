"""The demo's workload: agent jobs per workspace, with duplicates, transient failures and poison jobs.

Pure and deterministic: the same :class:`WorkloadSpec` (seed included) always gives the same jobs, ids
and send plan, so a failed demo run can be replayed exactly.

Each workspace gets a sequence ``apply_patch -> run_tests -> open_pr -> apply_patch -> ...`` in the
message group ``ws#<workspaceId>``. On top of the originals the plan holds two kinds of duplicate send:

* ``sqs_duplicate``: the same deduplication id, sent right after the original (a producer retrying a
  send that timed out). SQS accepts it and does not deliver it.
* ``late_duplicate``: a new deduplication id, sent later in the group (a producer retrying after the
  5-minute deduplication window). SQS delivers it; the claim table must skip it.

Examples
--------
>>> workload = generate_workload(WorkloadSpec(workspaces=2, jobs=6, duplicate_rate=0, failure_rate=0,
...                                            poison=0, seed=1))
>>> [job.job_type for job in workload.jobs[:3]]
['apply_patch', 'run_tests', 'open_pr']
>>> workload.expected_order()["ws-s1-00"]
['s1-w00-j000', 's1-w00-j001', 's1-w00-j002']
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from constructs_fifo.client.limits import MAX_ID_LENGTH
from constructs_fifo.local.demo.sample_app import JOB_TYPES, group_of, poison, transient_failure
from constructs_fifo.local.errors import WorkloadError

__all__ = [
    "PlannedJob",
    "PlannedSend",
    "SendKind",
    "Workload",
    "WorkloadSpec",
    "generate_workload",
]

SendKind = Literal["original", "sqs_duplicate", "late_duplicate"]


@dataclass(frozen=True)
class WorkloadSpec:
    """What the demo sends.

    Parameters
    ----------
    workspaces
        Number of workspaces (message groups), at least 1.
    jobs
        Total number of distinct jobs, at least ``workspaces`` (every workspace gets one or more).
    duplicate_rate
        Fraction (0 to 1) of jobs sent twice; half of them with the same deduplication id, half with a
        new one.
    failure_rate
        Fraction (0 to 1) of jobs that fail transiently on their first 1 or 2 attempts.
    poison
        Number of jobs that fail permanently and must end in the dead-letter queue.
    seed
        Seeds every random choice and is part of every id, so runs with different seeds never collide.
    """

    workspaces: int = 20
    jobs: int = 500
    duplicate_rate: float = 0.1
    failure_rate: float = 0.1
    poison: int = 2
    seed: int = 7

    def problems(self) -> list[str]:
        """Return every broken rule as one message each (empty when the spec is valid)."""
        found: list[str] = []
        if self.workspaces < 1:
            found.append(f"workspaces={self.workspaces}: must be at least 1; pass --workspaces 1 or more")
        if self.jobs < max(self.workspaces, 1):
            found.append(
                f"jobs={self.jobs}: must be at least the number of workspaces ({self.workspaces}) so "
                "every workspace gets a job; raise --jobs or lower --workspaces"
            )
        for name, rate in (("duplicate_rate", self.duplicate_rate), ("failure_rate", self.failure_rate)):
            if not 0.0 <= rate <= 1.0:
                found.append(f"{name}={rate}: must be between 0 and 1; pass a fraction such as 0.1")
        if self.poison < 0:
            found.append(f"poison={self.poison}: must be 0 or more; pass --poison 0 to send none")
        elif self.poison > self.jobs:
            found.append(f"poison={self.poison}: cannot exceed jobs={self.jobs}; lower --poison")
        if self.seed < 0:
            found.append(f"seed={self.seed}: must be 0 or more; pass a non-negative --seed")
        return found

    def validate(self) -> None:
        """Raise :class:`WorkloadError` listing every broken rule at once."""
        found = self.problems()
        if found:
            raise WorkloadError("invalid workload: " + "; ".join(found), "change each value as its rule says")


@dataclass(frozen=True)
class PlannedJob:
    """One distinct job of the workload."""

    job_id: str
    workspace_id: str
    job_type: str
    payload: Mapping[str, Any]
    #: Position of the job in its workspace's sequence (0-based).
    index: int
    #: Attempts 1..fail_attempts fail transiently (0: never).
    fail_attempts: int = 0
    poison: bool = False

    @property
    def group(self) -> str:
        """The job's MessageGroupId."""
        return group_of(self.workspace_id)

    def body(self) -> dict[str, Any]:
        """The message body: ``{"jobId", "type", "payload"}``."""
        return {"jobId": self.job_id, "type": self.job_type, "payload": dict(self.payload)}


@dataclass(frozen=True)
class PlannedSend:
    """One SendMessage of the plan: a job and the deduplication id it is sent with."""

    job: PlannedJob
    deduplication_id: str
    kind: SendKind


@dataclass(frozen=True)
class Workload:
    """The generated jobs and the order in which they are sent."""

    spec: WorkloadSpec
    jobs: tuple[PlannedJob, ...]
    sends: tuple[PlannedSend, ...]
    workspace_ids: tuple[str, ...] = field(default=())

    def expected_order(self) -> dict[str, list[str]]:
        """For each workspace, the job ids it must apply, in order: the sent order without poison."""
        order: dict[str, list[str]] = {workspace: [] for workspace in self.workspace_ids}
        for job in self.jobs:
            if not job.poison:
                order.setdefault(job.workspace_id, []).append(job.job_id)
        return order

    def sent_order(self) -> dict[str, list[str]]:
        """For each workspace, every job id in the order the producer sent it (poison included)."""
        order: dict[str, list[str]] = {workspace: [] for workspace in self.workspace_ids}
        for job in self.jobs:
            order.setdefault(job.workspace_id, []).append(job.job_id)
        return order

    @property
    def poison_jobs(self) -> tuple[PlannedJob, ...]:
        """The jobs that must reach the dead-letter queue."""
        return tuple(job for job in self.jobs if job.poison)

    @property
    def transient_jobs(self) -> tuple[PlannedJob, ...]:
        """The jobs that fail on their first attempts and then succeed."""
        return tuple(job for job in self.jobs if job.fail_attempts)

    def count(self, kind: SendKind) -> int:
        """Number of sends of one kind."""
        return sum(1 for send in self.sends if send.kind == kind)

    def batches(self, size: int = 10) -> Iterator[list[PlannedSend]]:
        """Split the sends into SendMessageBatch-sized chunks, in plan order.

        A chunk never holds two sends with the same deduplication id, so an ``sqs_duplicate`` always
        goes out in a later request than its original, as a retried send would.
        """
        if not 1 <= size <= 10:
            raise WorkloadError(f"batch size={size}: SendMessageBatch takes 1 to 10 entries", "pass 1 to 10")
        chunk: list[PlannedSend] = []
        seen: set[str] = set()
        for send in self.sends:
            if len(chunk) == size or send.deduplication_id in seen:
                yield chunk
                chunk, seen = [], set()
            chunk.append(send)
            seen.add(send.deduplication_id)
        if chunk:
            yield chunk


def _payload(job_type: str, workspace_id: str, index: int) -> dict[str, Any]:
    cycle = index // len(JOB_TYPES)
    if job_type == "apply_patch":
        return {"patch": f"{workspace_id}-patch-{cycle:03d}", "files": [f"src/module_{cycle % 7}.py"]}
    if job_type == "run_tests":
        return {"suite": "unit"}
    return {"title": f"Patch {cycle} for {workspace_id}", "base": "main"}


def _split(total: int, parts: int) -> list[int]:
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


def generate_workload(spec: WorkloadSpec) -> Workload:
    """Build the jobs and the send plan of ``spec``; deterministic in ``spec.seed``.

    Parameters
    ----------
    spec
        The workload specification; validated first.

    Returns
    -------
    Workload
        Jobs in workspace order and the interleaved send plan.

    Raises
    ------
    WorkloadError
        When ``spec`` breaks a rule (all problems in one message).
    """
    spec.validate()
    rng = random.Random(spec.seed)
    width = max(2, len(str(spec.workspaces - 1)))
    workspace_ids = tuple(f"ws-s{spec.seed}-{w:0{width}d}" for w in range(spec.workspaces))

    # 1. The distinct jobs, one apply_patch -> run_tests -> open_pr cycle after the other.
    skeleton: list[tuple[str, str, int]] = []  # (job_id, workspace_id, index)
    for w, (workspace_id, count) in enumerate(
        zip(workspace_ids, _split(spec.jobs, spec.workspaces), strict=True)
    ):
        skeleton.extend((f"s{spec.seed}-w{w:0{width}d}-j{i:03d}", workspace_id, i) for i in range(count))

    ids = [job_id for job_id, _, _ in skeleton]
    poison_ids = set(rng.sample(ids, spec.poison))
    healthy = [job_id for job_id in ids if job_id not in poison_ids]
    transient_ids = rng.sample(healthy, min(len(healthy), round(spec.failure_rate * spec.jobs)))
    fail_attempts = {job_id: rng.choice((1, 2)) for job_id in transient_ids}
    duplicated = rng.sample(healthy, min(len(healthy), round(spec.duplicate_rate * spec.jobs)))
    duplicate_kind: dict[str, SendKind] = {
        job_id: ("sqs_duplicate" if n % 2 == 0 else "late_duplicate") for n, job_id in enumerate(duplicated)
    }

    jobs: list[PlannedJob] = []
    for job_id, workspace_id, index in skeleton:
        job_type = JOB_TYPES[index % len(JOB_TYPES)]
        payload = _payload(job_type, workspace_id, index)
        if job_id in poison_ids:
            payload.update(poison())
        elif job_id in fail_attempts:
            payload.update(transient_failure(fail_attempts[job_id]))
        jobs.append(
            PlannedJob(
                job_id=job_id,
                workspace_id=workspace_id,
                job_type=job_type,
                payload=payload,
                index=index,
                fail_attempts=fail_attempts.get(job_id, 0),
                poison=job_id in poison_ids,
            )
        )

    # 2. Per workspace: originals in order, each duplicate placed after its original.
    per_workspace: dict[str, list[PlannedSend]] = {workspace: [] for workspace in workspace_ids}
    late: dict[str, list[tuple[int, PlannedSend]]] = {workspace: [] for workspace in workspace_ids}
    for job in jobs:
        sends = per_workspace[job.workspace_id]
        sends.append(PlannedSend(job, job.job_id, "original"))
        kind = duplicate_kind.get(job.job_id)
        if kind == "sqs_duplicate":
            sends.append(PlannedSend(job, job.job_id, "sqs_duplicate"))
        elif kind == "late_duplicate":
            late[job.workspace_id].append((job.index, PlannedSend(job, f"{job.job_id}.retry", kind)))
    for workspace_id, entries in late.items():
        sends = per_workspace[workspace_id]
        for index, send in entries:
            original_at = next(
                i for i, s in enumerate(sends) if s.job.index == index and s.kind == "original"
            )
            sends.insert(rng.randint(original_at + 1, len(sends)), send)

    # 3. Interleave the workspaces round-robin, as many producers would.
    plan: list[PlannedSend] = []
    queues = [per_workspace[workspace] for workspace in workspace_ids]
    position = 0
    while any(position < len(q) for q in queues):
        plan.extend(q[position] for q in queues if position < len(q))
        position += 1

    for send in plan:
        for value in (send.deduplication_id, send.job.group):
            if len(value) > MAX_ID_LENGTH:  # pragma: no cover - ids are short by construction
                raise WorkloadError(
                    f"id {value!r} is longer than {MAX_ID_LENGTH} characters, SQS's limit",
                    "pass a smaller --seed",
                )
    return Workload(spec=spec, jobs=tuple(jobs), sends=tuple(plan), workspace_ids=workspace_ids)
