"""What the producers send: the jobs of a chaos run and the order of their sends (the independent model).

The invariants compare what the runtime did with this, never with the runtime's own bookkeeping: a
job's kind says what its function does when it runs, and the sends say what reached the queue and in
which order. A group's jobs are sent in their order, except that a producer of a group with ``seq``
may send them in any order (the runtime must apply them in ``seq`` order). Copies of a job come
later: the same deduplication id within SQS's 5-minute window (SQS drops it), the same id after it
(delivered again), or a new id (delivered again).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass

from hypothesis import strategies as st

#: What a job's function does when it runs (until an operator heals it):
#: ok; transient (raises ``times`` times, then works); permanent (``PermanentJobError``);
#: malformed (its body is not a job); crash (stops the worker dead ``times`` times, then works).
KINDS = ("ok", "transient", "permanent", "malformed", "crash")

#: How a copy is sent: same dedup id soon (dropped), same id after the window, a new id.
COPIES = ("same-soon", "same-late", "new")

#: A poison job (``poison=True`` workloads): a crash job that stops its worker on every run.
POISON_TIMES = 10_000

#: Past SQS's 5-minute deduplication window.
LATE_SECONDS = 301


@dataclass(frozen=True)
class JobSpec:
    """One job: its group, what its function does, its producer's ``seq`` (state mode), its
    ``supersede`` key (claim mode: the newest job of a key wins) and its ``tenant`` (in its payload:
    a pace key across groups)."""

    job_id: str
    group: str
    kind: str = "ok"
    times: int = 0
    seq: int | None = None
    supersede: str | None = None
    tenant: str | None = None

    def payload(self) -> dict[str, object]:
        """The job's payload: its tenant, when it has one."""
        return {} if self.tenant is None else {"tenant": self.tenant}

    def body(self) -> str:
        """The message body the producer sends."""
        if self.kind == "malformed":
            return f"not json #{self.job_id}"
        envelope: dict[str, object] = {"jobId": self.job_id, "type": "apply_patch", "payload": self.payload()}
        if self.seq is not None:
            envelope["seq"] = self.seq
        if self.supersede is not None:
            envelope["supersede"] = self.supersede
        return json.dumps(envelope)

    def must_die(self, max_attempts: int, *, crashes_count: bool, shared_runs: bool = False) -> bool:
        """Whether the job dies on its own, whatever else happens.

        ``crashes_count``: a crash inside the job counts as one of its attempts (claim mode).
        ``shared_runs``: runs share their process (a worker of several slots), so a run cut short by a
        slot-mate's crash is not counted: a transient job may outlive its ``times``, and a crash costs
        an attempt only once the job runs alone (its first run's crash is free).
        """
        if self.kind in ("permanent", "malformed"):
            return True
        if self.kind == "crash" and crashes_count:
            return self.times >= max_attempts + int(shared_runs)
        return self.kind == "transient" and not shared_runs and self.times >= max_attempts


@dataclass(frozen=True)
class Send:
    """One send of a producer: the job, its deduplication id, and how long the producer waited first."""

    spec: JobSpec
    dedup_id: str
    wait_seconds: int = 0
    copy: str | None = None


@dataclass(frozen=True)
class Workload:
    """The jobs and the sends of one run."""

    specs: tuple[JobSpec, ...]
    sends: tuple[Send, ...]

    def groups(self) -> list[str]:
        """The groups, in the order their first job was sent."""
        return list(dict.fromkeys(send.spec.group for send in self.sends))

    def spec(self, job_id: str) -> JobSpec:
        return next(spec for spec in self.specs if spec.job_id == job_id)

    def jobs_of(self, group: str) -> list[JobSpec]:
        """A group's jobs in the order they must be applied: by ``seq`` when they have one, else sent."""
        jobs = [spec for spec in self.specs if spec.group == group]
        if jobs and jobs[0].seq is not None:
            return sorted(jobs, key=lambda spec: spec.seq or 0)
        sent = [send.spec.job_id for send in self.sends if send.copy is None]
        return sorted(jobs, key=lambda spec: sent.index(spec.job_id))


@st.composite
def workloads(
    draw: st.DrawFn,
    *,
    max_groups: int = 3,
    max_jobs: int = 5,
    max_times: int = 4,
    seq: bool = False,
    poison: bool = False,
    keys: bool = False,
    tenants: bool = False,
) -> Workload:
    """Jobs over 1 to ``max_groups`` groups and their sends, copies included.

    ``seq``: a group may give its jobs sequence numbers (0, 1, ...), and then its producer sends them
    in any order; such a group has no malformed job (a body that cannot be read has no ``seq``, and
    the gap it leaves would wait for an operator). ``poison``: a job may also be a poison one (a crash
    job of :data:`POISON_TIMES`: it stops its worker on every run). ``keys``: a job may carry the
    ``supersede`` key ``run_tests`` (claim mode's newest wins); such a job is sent once, no copies.
    ``tenants``: each job carries its group's tenant in its payload, two tenants over the groups
    (``ws#0`` and ``ws#2`` share ``t0``): a pace key across groups.
    """
    specs: list[JobSpec] = []
    originals: dict[str, list[JobSpec]] = {}
    for g in range(draw(st.integers(1, max_groups))):
        group = f"ws#{g}"
        numbered = seq and draw(st.booleans())
        kinds = [k for k in KINDS if not (numbered and k == "malformed")] + (["poison"] if poison else [])
        jobs: list[JobSpec] = []
        for j in range(draw(st.integers(1, max_jobs))):
            kind = draw(st.sampled_from(kinds))
            times = draw(st.integers(1, max_times)) if kind in ("transient", "crash") else 0
            if kind == "poison":
                kind, times = "crash", POISON_TIMES
            key = "run_tests" if keys and kind != "malformed" and draw(st.booleans()) else None
            tenant = f"t{g % 2}" if tenants else None
            jobs.append(JobSpec(f"g{g}j{j}", group, kind, times, j if numbered else None, key, tenant))
        specs += jobs
        originals[group] = draw(st.permutations(jobs)) if numbered else jobs
    # The groups' sends interleave; each group's sends keep its producer's order.
    queues: dict[str, Iterator[JobSpec]] = {group: iter(jobs) for group, jobs in originals.items()}
    order = draw(st.permutations([spec.group for spec in specs]))
    sends = [Send(spec, spec.job_id) for spec in (next(queues[group]) for group in order)]
    for spec in specs:
        copy = draw(st.sampled_from((None, None, None, *COPIES)))
        if copy is None or spec.supersede is not None:
            continue
        after = next(i for i, send in enumerate(sends) if send.spec == spec and send.copy is None)
        position = draw(st.integers(after + 1, len(sends)))
        dedup_id = f"{spec.job_id}-again" if copy == "new" else spec.job_id
        wait = LATE_SECONDS if copy == "same-late" else 0
        sends.insert(position, Send(spec, dedup_id, wait, copy))
    return Workload(tuple(specs), tuple(sends))
