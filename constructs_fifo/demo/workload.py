"""The demo's workload: agent jobs per workspace and their notifications, with every kind of trouble.

Pure and deterministic: the same :class:`WorkloadSpec` (seed included) always gives the same jobs, ids
and send plan, so a failed demo run can be replayed exactly.

Each workspace gets a sequence ``apply_patch -> run_tests -> open_pr -> apply_patch -> ...`` for the
workspace queue (state mode), in the message group ``ws#<workspaceId>``, each job with ``seq`` = its
position in the workspace (the workspace's version after it). Every ``open_pr`` has a ``notify`` job
for the notification queue (claim mode), in the same group id on that queue. On top of the originals:

* ``sqs_duplicate``: the same deduplication id, sent right after the original (a producer retrying a
  send that timed out). SQS accepts it and does not deliver it.
* ``late_duplicate``: a new deduplication id, sent later in the group (a producer retrying after the
  5-minute deduplication window). SQS delivers it; the state's sequence (workspaces) or the claim
  table (notifications) must skip it.
* transient failures: a job fails its first 1 or 2 attempts, then succeeds.
* ``last_attempt``: a workspace job fails every attempt but its last (``max_attempts - 1`` failures):
  not dead, it is applied on attempt ``max_attempts``; ten healthy jobs stand behind it.
* ``poison``: a workspace job that fails permanently, sent twice (``poison_copy``: the second copy with
  a new deduplication id, a few jobs later); ten healthy jobs stand behind it. Under the default PARK
  policy its workspace parks at it, and the demo resumes it skipping the dead job.

Each special job (poison or last attempt) gets a workspace of its own.

Examples
--------
>>> workload = generate_workload(WorkloadSpec(workspaces=2, jobs=6, duplicate_rate=0, failure_rate=0,
...                                            poison=0, last_attempt=0, seed=1))
>>> [job.job_type for job in workload.jobs[:3]]
['apply_patch', 'run_tests', 'open_pr']
>>> workload.expected_order()["ws-s1-00"]
['s1-w00-j000', 's1-w00-j001', 's1-w00-j002']
>>> [job.job_id for job in workload.notifications]
['s1-w00-j002-n', 's1-w01-j002-n']
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from constructs_fifo.client.limits import MAX_BATCH_ENTRIES, MAX_ID_LENGTH
from constructs_fifo.demo.errors import WorkloadError
from constructs_fifo.demo.sample_app import (
    JOB_TYPES,
    NOTIFICATION_TYPE,
    group_of,
    poison,
    transient_failure,
)
from constructs_fifo.runtime.constants import DEFAULT_MAX_ATTEMPTS, MAX_ATTEMPTS_MAX

__all__ = [
    "HEALTHY_BEHIND",
    "PlannedJob",
    "PlannedSend",
    "QueueRole",
    "SendKind",
    "Workload",
    "WorkloadSpec",
    "generate_workload",
]

SendKind = Literal["original", "sqs_duplicate", "late_duplicate", "poison_copy"]
#: Which of the sample's queues a job goes to.
QueueRole = Literal["workspaces", "notifications"]

#: Healthy jobs behind each poison and last-attempt job in its workspace: the
#: failures that must not drag them into the DLQ.
HEALTHY_BEHIND: Final = 10
_OPEN_PR: Final = JOB_TYPES[2]


@dataclass(frozen=True)
class WorkloadSpec:
    """What the demo sends.

    Parameters
    ----------
    workspaces
        Number of workspaces (message groups), at least 1.
    jobs
        Total number of distinct workspace jobs, at least ``workspaces`` (every workspace gets one or
        more). Each ``open_pr`` also has a notification job.
    duplicate_rate
        Fraction (0 to 1) of healthy jobs (of each queue) sent twice; half of them with the same
        deduplication id, half with a new one.
    failure_rate
        Fraction (0 to 1) of jobs (of each queue) that fail transiently on their first 1 or 2 attempts.
    poison
        Workspace jobs that fail permanently, each sent twice, each with ten healthy jobs behind it.
    last_attempt
        Workspace jobs that fail every attempt but the last, each with ten healthy jobs behind it.
    max_attempts
        The workspace queue's ``max_attempts`` (the construct's default, 5, in the sample app).
    seed
        Seeds every random choice and is part of every id, so runs with different seeds never collide.
    """

    workspaces: int = 20
    jobs: int = 500
    duplicate_rate: float = 0.1
    failure_rate: float = 0.1
    poison: int = 2
    last_attempt: int = 1
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
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
        for name, count in (("poison", self.poison), ("last_attempt", self.last_attempt)):
            if count < 0:
                flag = name.replace("_", "-")
                found.append(f"{name}={count}: must be 0 or more; pass --{flag} 0 to send none")
        if self.last_attempt > 0 and not 2 <= self.max_attempts <= MAX_ATTEMPTS_MAX:
            found.append(
                f"max_attempts={self.max_attempts}: a job failing until its last attempt needs 2 to "
                f"{MAX_ATTEMPTS_MAX} attempts; pass --last-attempt 0 or deploy max_attempts of 2 or more"
            )
        specials = max(self.poison, 0) + max(self.last_attempt, 0)
        if specials and self.workspaces >= 1 and self.jobs >= self.workspaces:
            roomy = sum(1 for count in _split(self.jobs, self.workspaces) if count > HEALTHY_BEHIND)
            if specials > roomy:
                found.append(
                    f"poison={self.poison} and last_attempt={self.last_attempt}: each needs a workspace of "
                    f"its own with at least {HEALTHY_BEHIND + 1} jobs ({HEALTHY_BEHIND} healthy jobs behind "
                    f"it), and only {roomy} of the {self.workspaces} workspaces have that many; raise --jobs "
                    "or lower --poison or --last-attempt"
                )
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
    #: Position of the job in its workspace's sequence (0-based); a notification: its open_pr's.
    index: int
    #: The queue it is sent to.
    queue: QueueRole = "workspaces"
    #: Attempts 1..fail_attempts fail transiently (0: never).
    fail_attempts: int = 0
    poison: bool = False
    #: Fails every attempt but the last (``fail_attempts = max_attempts - 1``).
    last_attempt: bool = False

    @property
    def group(self) -> str:
        """The job's MessageGroupId."""
        return group_of(self.workspace_id)

    @property
    def seq(self) -> int | None:
        """The producer's sequence number: a workspace job's position (notifications carry none)."""
        return self.index if self.queue == "workspaces" else None

    def body(self) -> dict[str, Any]:
        """The message body: ``{"jobId", "type", "payload"}``, and ``seq`` when the job has one."""
        body = {"jobId": self.job_id, "type": self.job_type, "payload": dict(self.payload)}
        return body if self.seq is None else {**body, "seq": self.seq}


@dataclass(frozen=True)
class PlannedSend:
    """One SendMessage of the plan: a job and the deduplication id it is sent with."""

    job: PlannedJob
    deduplication_id: str
    kind: SendKind


@dataclass(frozen=True)
class Workload:
    """The generated jobs and the order in which they are sent, per queue."""

    spec: WorkloadSpec
    jobs: tuple[PlannedJob, ...]
    sends: tuple[PlannedSend, ...]
    workspace_ids: tuple[str, ...] = field(default=())
    notifications: tuple[PlannedJob, ...] = field(default=())
    notification_sends: tuple[PlannedSend, ...] = field(default=())

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
        """The jobs that must reach the dead-letter queue (each sent twice)."""
        return tuple(job for job in self.jobs if job.poison)

    @property
    def last_attempt_jobs(self) -> tuple[PlannedJob, ...]:
        """The jobs that fail every attempt but the last, and must be applied."""
        return tuple(job for job in self.jobs if job.last_attempt)

    @property
    def transient_jobs(self) -> tuple[PlannedJob, ...]:
        """The jobs (both queues) that fail on their first 1 or 2 attempts and then succeed."""
        return tuple(
            job for job in (*self.jobs, *self.notifications) if job.fail_attempts and not job.last_attempt
        )

    def sends_to(self, queue: QueueRole) -> tuple[PlannedSend, ...]:
        """The send plan of one queue."""
        return self.sends if queue == "workspaces" else self.notification_sends

    def count(self, kind: SendKind, queue: QueueRole | None = None) -> int:
        """Number of sends of one kind (to one queue, or to both)."""
        queues: tuple[QueueRole, ...] = ("workspaces", "notifications") if queue is None else (queue,)
        return sum(1 for q in queues for send in self.sends_to(q) if send.kind == kind)

    def batches(
        self, size: int = MAX_BATCH_ENTRIES, *, queue: QueueRole = "workspaces"
    ) -> Iterator[list[PlannedSend]]:
        """Split one queue's sends into SendMessageBatch-sized chunks, in plan order.

        A chunk never holds two sends with the same deduplication id, so an ``sqs_duplicate`` always
        goes out in a later request than its original, as a retried send would.
        """
        if not 1 <= size <= MAX_BATCH_ENTRIES:
            raise WorkloadError(
                f"batch size={size}: SendMessageBatch takes 1 to {MAX_BATCH_ENTRIES} entries",
                f"pass 1 to {MAX_BATCH_ENTRIES}",
            )
        chunk: list[PlannedSend] = []
        seen: set[str] = set()
        for send in self.sends_to(queue):
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


def _original_at(sends: Sequence[PlannedSend], job_id: str) -> int:
    return next(i for i, s in enumerate(sends) if s.job.job_id == job_id and s.kind == "original")


def _sends_per_group(
    jobs: Sequence[PlannedJob],
    keys: Sequence[str],
    rng: random.Random,
    *,
    duplicated: Mapping[str, SendKind],
    poison_copy_after: Mapping[str, int],
) -> dict[str, list[PlannedSend]]:
    """Per group key: originals in order, each duplicate placed after its original."""
    per_group: dict[str, list[PlannedSend]] = {key: [] for key in keys}
    late: dict[str, list[tuple[str, PlannedSend]]] = {key: [] for key in keys}
    for job in jobs:
        sends = per_group[job.workspace_id]
        sends.append(PlannedSend(job, job.job_id, "original"))
        kind = duplicated.get(job.job_id)
        if kind == "sqs_duplicate":
            sends.append(PlannedSend(job, job.job_id, "sqs_duplicate"))
        elif kind == "late_duplicate":
            late[job.workspace_id].append((job.job_id, PlannedSend(job, f"{job.job_id}.retry", kind)))
    for key, entries in late.items():
        sends = per_group[key]
        for job_id, send in entries:
            original_at = next(
                i for i, s in enumerate(sends) if s.job.job_id == job_id and s.kind == "original"
            )
            sends.insert(rng.randint(original_at + 1, len(sends)), send)
    for job in jobs:
        if job.job_id in poison_copy_after:
            sends = per_group[job.workspace_id]
            original_at = _original_at(sends, job.job_id)
            # A few jobs behind the original, among the healthy jobs that follow it.
            originals = [i for i, s in enumerate(sends) if i > original_at and s.kind == "original"]
            at = originals[poison_copy_after[job.job_id] - 1] + 1
            sends.insert(at, PlannedSend(job, f"{job.job_id}.copy", "poison_copy"))
    return per_group


def _round_robin(per_group: Mapping[str, list[PlannedSend]], keys: Sequence[str]) -> list[PlannedSend]:
    """Interleave the groups' sends round-robin, as many producers would."""
    plan: list[PlannedSend] = []
    queues = [per_group[key] for key in keys]
    position = 0
    while any(position < len(q) for q in queues):
        plan.extend(q[position] for q in queues if position < len(q))
        position += 1
    return plan


def _duplicates(rng: random.Random, healthy: Sequence[str], rate: float, total: int) -> dict[str, SendKind]:
    duplicated = rng.sample(list(healthy), min(len(healthy), round(rate * total)))
    return {
        job_id: ("sqs_duplicate" if n % 2 == 0 else "late_duplicate") for n, job_id in enumerate(duplicated)
    }


def generate_workload(spec: WorkloadSpec) -> Workload:
    """Build the jobs and the send plans of ``spec``; deterministic in ``spec.seed``.

    Parameters
    ----------
    spec
        The workload specification; validated first.

    Returns
    -------
    Workload
        Jobs in workspace order and the interleaved send plan of each queue.

    Raises
    ------
    WorkloadError
        When ``spec`` breaks a rule (all problems in one message).
    """
    spec.validate()
    rng = random.Random(spec.seed)
    width = max(2, len(str(spec.workspaces - 1)))
    workspace_ids = tuple(f"ws-s{spec.seed}-{w:0{width}d}" for w in range(spec.workspaces))
    counts = dict(zip(workspace_ids, _split(spec.jobs, spec.workspaces), strict=True))

    # 1. The distinct jobs, one apply_patch -> run_tests -> open_pr cycle after the other.
    skeleton: list[tuple[str, str, int]] = []  # (job_id, workspace_id, index)
    for w, workspace_id in enumerate(workspace_ids):
        skeleton.extend(
            (f"s{spec.seed}-w{w:0{width}d}-j{i:03d}", workspace_id, i) for i in range(counts[workspace_id])
        )

    # 2. The special jobs: each in a workspace of its own, with HEALTHY_BEHIND jobs behind it.
    roomy = [w for w in workspace_ids if counts[w] > HEALTHY_BEHIND]
    special_workspaces = rng.sample(roomy, spec.poison + spec.last_attempt)
    special_index = {
        w: rng.randint(1, counts[w] - HEALTHY_BEHIND - 1) if counts[w] > HEALTHY_BEHIND + 1 else 0
        for w in special_workspaces
    }
    id_at = {(workspace_id, index): job_id for job_id, workspace_id, index in skeleton}
    poison_ids = {id_at[w, special_index[w]] for w in special_workspaces[: spec.poison]}
    last_attempt_ids = {id_at[w, special_index[w]] for w in special_workspaces[spec.poison :]}
    poison_copy_after = {job_id: rng.randint(1, 5) for job_id in sorted(poison_ids)}

    ids = [job_id for job_id, _, _ in skeleton]
    healthy = [job_id for job_id in ids if job_id not in poison_ids | last_attempt_ids]
    transient_ids = rng.sample(healthy, min(len(healthy), round(spec.failure_rate * spec.jobs)))
    fail_attempts = {job_id: rng.choice((1, 2)) for job_id in transient_ids}
    duplicated = _duplicates(rng, healthy, spec.duplicate_rate, spec.jobs)

    jobs: list[PlannedJob] = []
    for job_id, workspace_id, index in skeleton:
        job_type = JOB_TYPES[index % len(JOB_TYPES)]
        payload = _payload(job_type, workspace_id, index)
        failures = fail_attempts.get(job_id, 0)
        if job_id in poison_ids:
            payload.update(poison())
        elif job_id in last_attempt_ids:
            failures = spec.max_attempts - 1
        if failures:
            payload.update(transient_failure(failures))
        jobs.append(
            PlannedJob(
                job_id=job_id,
                workspace_id=workspace_id,
                job_type=job_type,
                payload=payload,
                index=index,
                fail_attempts=failures,
                poison=job_id in poison_ids,
                last_attempt=job_id in last_attempt_ids,
            )
        )

    # 3. A notification for every pull request, with its own duplicates and transient failures.
    notification_skeleton = [job for job in jobs if job.job_type == _OPEN_PR]
    notified = [job.job_id for job in notification_skeleton]
    n_transient = rng.sample(notified, min(len(notified), round(spec.failure_rate * len(notified))))
    n_fail_attempts = {job_id: rng.choice((1, 2)) for job_id in n_transient}
    n_duplicated = {
        f"{job_id}-n": kind
        for job_id, kind in _duplicates(rng, notified, spec.duplicate_rate, len(notified)).items()
    }
    notifications: list[PlannedJob] = []
    for pr in notification_skeleton:
        failures = n_fail_attempts.get(pr.job_id, 0)
        payload = {"channel": f"#{pr.workspace_id}", "text": f"pull request opened by {pr.job_id}"}
        if failures:
            payload.update(transient_failure(failures))
        notifications.append(
            PlannedJob(
                job_id=f"{pr.job_id}-n",
                workspace_id=pr.workspace_id,
                job_type=NOTIFICATION_TYPE,
                payload=payload,
                index=pr.index,
                queue="notifications",
                fail_attempts=failures,
            )
        )

    # 4. The send plans: per group, then the groups interleaved round-robin.
    plan = _round_robin(
        _sends_per_group(
            jobs, workspace_ids, rng, duplicated=duplicated, poison_copy_after=poison_copy_after
        ),
        workspace_ids,
    )
    notification_plan = _round_robin(
        _sends_per_group(notifications, workspace_ids, rng, duplicated=n_duplicated, poison_copy_after={}),
        workspace_ids,
    )
    for send in (*plan, *notification_plan):
        for value in (send.deduplication_id, send.job.group):
            if len(value) > MAX_ID_LENGTH:  # pragma: no cover - ids are short by construction
                raise WorkloadError(
                    f"id {value!r} is longer than {MAX_ID_LENGTH} characters, SQS's limit",
                    "pass a smaller --seed",
                )
    return Workload(
        spec=spec,
        jobs=tuple(jobs),
        sends=tuple(plan),
        workspace_ids=workspace_ids,
        notifications=tuple(notifications),
        notification_sends=tuple(notification_plan),
    )
