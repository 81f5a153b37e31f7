"""``constructs-fifo demo --scenario divergence``: FIFO keeps the producer's order; ``seq`` repairs it.

What a shuffled producer does on the real pipeline, in three runs of the same three events on the
workspace queue (state mode), each in a workspace of its own:

1. **in order**: the producer sends ``apply_patch -> run_tests -> open_pr``;
2. **shuffled, without seq**: the producer sends ``apply_patch -> open_pr -> run_tests``. FIFO delivers
   it exactly as sent and the runtime applies each job once, and still the workspace ends differently:
   its pull request was opened on a head that had not been tested;
3. **shuffled, with seq**: the same shuffled send, each job carrying the producer's sequence number
   (``seq``, the workspace's version). The runtime holds ``open_pr`` (seq 2) in the group's reorder
   buffer until ``run_tests`` (seq 1) arrives, applies them in ``seq`` order, and the workspace
   converges to the in-order result.

Ordering is a contract of three parts (a producer that sequences correctly, a queue keyed by a group,
a stateful consumer); the queue alone cannot repair the producer, a sequence number can.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from constructs_fifo.client import JobMessage
from constructs_fifo.client.state_reader import GroupStateReader
from constructs_fifo.demo import steps
from constructs_fifo.demo.sample_app import ACTIVITY_ATTRIBUTE, JOB_TYPES, group_of
from constructs_fifo.demo.steps import DemoOptions, Phase, Reporter

__all__ = [
    "EVENTS",
    "RUNS",
    "SHUFFLED",
    "DivergenceResult",
    "Run",
    "WorkspaceOutcome",
    "outcome_state",
    "plan",
    "run_divergence",
]

_APPLY_PATCH, _RUN_TESTS, _OPEN_PR = JOB_TYPES
#: The events, as the right producer sends them: (suffix, type, payload).
EVENTS: Final = (
    ("patch", _APPLY_PATCH, {"patch": "fix-login-timeout", "files": ["src/auth.py"]}),
    ("tests", _RUN_TESTS, {"suite": "unit"}),
    ("pr", _OPEN_PR, {"title": "Fix login timeout", "base": "main"}),
)
#: The wrong producer's order: indexes into :data:`EVENTS`.
SHUFFLED: Final = (0, 2, 1)


@dataclass(frozen=True)
class Run:
    """One of the three runs: its name (also the workspace's suffix), send order and whether it sends seq."""

    name: str
    title: str
    order: tuple[int, ...]
    with_seq: bool


#: The three runs, in the order they are shown.
RUNS: Final = (
    Run("in-order", "in order", (0, 1, 2), with_seq=False),
    Run("shuffled", "shuffled, no seq", SHUFFLED, with_seq=False),
    Run("shuffled-seq", "shuffled, with seq", SHUFFLED, with_seq=True),
)


@dataclass(frozen=True)
class WorkspaceOutcome:
    """One workspace: what its producer sent and what it ended as."""

    workspace: str
    title: str
    sent: tuple[str, ...]
    sent_types: tuple[str, ...]
    applied: tuple[str, ...]
    applied_types: tuple[str, ...]
    with_seq: bool
    state: Mapping[str, Any]

    @property
    def applied_as_sent(self) -> bool:
        """True when the jobs were applied exactly in the order they were sent."""
        return self.applied == self.sent


@dataclass
class DivergenceResult:
    """The three outcomes side by side."""

    in_order: WorkspaceOutcome
    shuffled: WorkspaceOutcome
    shuffled_with_seq: WorkspaceOutcome
    timings: Phase = field(default_factory=Phase)

    @property
    def outcomes(self) -> tuple[WorkspaceOutcome, WorkspaceOutcome, WorkspaceOutcome]:
        """The three, in run order."""
        return self.in_order, self.shuffled, self.shuffled_with_seq

    @staticmethod
    def _differing(first: WorkspaceOutcome, second: WorkspaceOutcome) -> list[str]:
        keys = set(first.state) | set(second.state)
        return sorted(k for k in keys if first.state.get(k) != second.state.get(k))

    @property
    def differing_keys(self) -> list[str]:
        """State attributes in which the shuffled run (no seq) differs from the in-order one."""
        return self._differing(self.in_order, self.shuffled)

    @property
    def diverged(self) -> bool:
        """Both runs without seq were applied as sent, and still their states differ."""
        return self.in_order.applied_as_sent and self.shuffled.applied_as_sent and bool(self.differing_keys)

    @property
    def converged(self) -> bool:
        """The shuffled run with seq ends in the in-order run's state, its jobs applied in seq order."""
        return (
            bool(self.in_order.state)
            and not self._differing(self.in_order, self.shuffled_with_seq)
            and self.shuffled_with_seq.applied_types == self.in_order.sent_types
        )

    @property
    def shown(self) -> bool:
        """Both lessons shown: divergence without seq, convergence with it."""
        return self.diverged and self.converged

    def rows(self) -> Iterator[tuple[str, ...]]:
        """Table rows: label, then the value of each run."""
        outcomes = self.outcomes
        yield ("workspace", *(o.workspace for o in outcomes))
        yield ("producer sent", *(" -> ".join(o.sent_types) for o in outcomes))
        yield ("seq sent", *("yes" if o.with_seq else "no" for o in outcomes))
        yield ("applied", *(" -> ".join(o.applied_types) or "-" for o in outcomes))
        keys = sorted({key for o in outcomes for key in o.state})
        for key in keys:
            marker = " *" if key in self.differing_keys else ""
            yield (f"{key}{marker}", *(_show(o.state.get(key)) for o in outcomes))

    def verdict(self) -> str:
        """What the runs showed, in two sentences."""
        if not self.in_order.state:
            return "Not shown: the in-order workspace has no state (see above)."
        lines = []
        if self.diverged:
            lines.append(
                "Without seq: the same events, each applied in the order its producer sent them, left the "
                f"workspaces different in {', '.join(self.differing_keys)} (* above); FIFO preserves the "
                "producer's order, it cannot repair it."
            )
        elif not (self.in_order.applied_as_sent and self.shuffled.applied_as_sent):
            lines.append("Not shown: a workspace without seq was not applied in the order it was sent.")
        else:
            lines.append("Not shown: without seq both workspaces ended in the same state.")
        if self.converged:
            lines.append(
                "With seq: the runtime held the early job in the group's reorder buffer, applied all three "
                "in seq order, and the workspace converged to the in-order result."
            )
        else:
            differing = self._differing(self.in_order, self.shuffled_with_seq)
            lines.append(
                "Not converged: with seq the workspace differs from the in-order one in "
                f"{', '.join(differing) or 'the order its jobs were applied'}."
            )
        return " ".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "diverged": self.diverged,
            "converged": self.converged,
            "differing": self.differing_keys,
            "runs": {o.title: _outcome_dict(o) for o in self.outcomes},
            "timings_seconds": self.timings.seconds,
        }


def _outcome_dict(outcome: WorkspaceOutcome) -> dict[str, Any]:
    return {
        "workspace": outcome.workspace,
        "sent": list(outcome.sent),
        "sent_types": list(outcome.sent_types),
        "seq": outcome.with_seq,
        "applied": list(outcome.applied),
        "state": dict(outcome.state),
    }


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | tuple):
        return ", ".join(_show(v) for v in value) or "[]"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_show(v)}" for k, v in sorted(value.items())) or "{}"
    return str(value)


def _without_job_ids(value: Any) -> Any:
    """Drop ``jobId`` fields: the workspaces' job ids differ by construction, not by outcome."""
    if isinstance(value, list):
        return [_without_job_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_job_ids(v) for k, v in value.items() if k != "jobId"}
    return value


def outcome_state(state: Mapping[str, Any] | None) -> dict[str, Any]:
    """The comparable part of a workspace state: no job ids, no activity (shown as the applied order)."""
    return {k: _without_job_ids(v) for k, v in (state or {}).items() if k != ACTIVITY_ATTRIBUTE}


def plan(seed: int) -> tuple[tuple[Run, str, list[JobMessage]], ...]:
    """Each run with its workspace and its messages, in send order."""
    plans: list[tuple[Run, str, list[JobMessage]]] = []
    for run in RUNS:
        workspace = f"div-s{seed}-{run.name}"
        messages = []
        for index in run.order:
            suffix, job_type, payload = EVENTS[index]
            messages.append(
                JobMessage(
                    f"{workspace}-{suffix}",
                    job_type,
                    dict(payload),
                    group=group_of(workspace),
                    seq=index if run.with_seq else None,
                )
            )
        plans.append((run, workspace, messages))
    return tuple(plans)


def _outcome(
    run: Run, workspace: str, messages: list[JobMessage], state: Mapping[str, Any] | None
) -> WorkspaceOutcome:
    activity = [entry for entry in (state or {}).get(ACTIVITY_ATTRIBUTE, []) if isinstance(entry, dict)]
    return WorkspaceOutcome(
        workspace=workspace,
        title=run.title,
        sent=tuple(m.job_id for m in messages),
        sent_types=tuple(m.job_type for m in messages),
        applied=tuple(str(entry.get("jobId")) for entry in activity),
        applied_types=tuple(str(entry.get("type")) for entry in activity),
        with_seq=run.with_seq,
        state=outcome_state(state),
    )


def run_divergence(options: DemoOptions, *, say: Reporter = print) -> DivergenceResult:
    """Deploy (unless told not to), send the three runs' events, drain, and read the three outcomes."""
    timings = Phase()
    with steps.connect(options, timings) as target:
        clients = steps.make_clients(target)
        with timings.timed("deploy"):
            prepared = steps.prepare(options, target, say=say)
        queue = prepared.resources.workspaces
        runs = plan(options.spec.seed)
        with timings.timed("send"):
            for run, workspace, messages in runs:
                say(f"sending 3 events to {workspace} ({run.title}) ...")
                steps.send(messages, queue.queue_url, sqs_client=clients.sqs, target=target)
        with timings.timed("drain"):
            say(f"draining {queue.label} through the function's handler ...")
            steps.drain(prepared.workspaces, target=target, say=say)
        reader = GroupStateReader(queue.group_table, clients.dynamodb)
        outcomes = [
            _outcome(run, workspace, messages, reader.get(group_of(workspace)))
            for run, workspace, messages in runs
        ]
    return DivergenceResult(outcomes[0], outcomes[1], outcomes[2], timings=timings)
