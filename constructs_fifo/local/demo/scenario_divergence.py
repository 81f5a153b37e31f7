"""``constructs-fifo demo --scenario divergence``: FIFO keeps the producer's order, right or wrong.

Seed 004's lesson on the real pipeline. Two workspaces get the same three events; the producer of the
first sends them in order (``apply_patch -> run_tests -> open_pr``), the producer of the second sends
them shuffled (``apply_patch -> open_pr -> run_tests``). FIFO delivers both exactly as sent, the claim
table applies each job once, and still the two workspaces end differently: the second opened its pull
request on a head that had not been tested. Ordering is a contract of three parts (a producer that
sequences correctly, a queue keyed by a group, a stateful consumer); the queue cannot repair the
producer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from constructs_fifo.client import JobMessage
from constructs_fifo.local.demo import steps
from constructs_fifo.local.demo.sample_app import (
    APPLIED_ATTRIBUTE,
    JOB_TYPES,
    VERSION_ATTRIBUTE,
    WORKSPACE_KEY,
    group_of,
    read_workspace,
)
from constructs_fifo.local.demo.steps import DemoOptions, Phase, Reporter

__all__ = [
    "EVENTS",
    "SHUFFLED",
    "DivergenceResult",
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

#: Bookkeeping attributes that are the same kind of thing in both outcomes, not the state.
_BOOKKEEPING: Final = frozenset({WORKSPACE_KEY, APPLIED_ATTRIBUTE, VERSION_ATTRIBUTE})


@dataclass(frozen=True)
class WorkspaceOutcome:
    """One workspace: what its producer sent and what it ended as."""

    workspace: str
    sent: tuple[str, ...]
    sent_types: tuple[str, ...]
    applied: tuple[str, ...]
    state: Mapping[str, Any]

    @property
    def delivered_faithfully(self) -> bool:
        """True when the applied order is exactly the sent order."""
        return self.applied == self.sent


@dataclass
class DivergenceResult:
    """Both outcomes side by side."""

    in_order: WorkspaceOutcome
    shuffled: WorkspaceOutcome
    timings: Phase = field(default_factory=Phase)

    @property
    def differing_keys(self) -> list[str]:
        """State attributes whose values differ between the two workspaces."""
        keys = set(self.in_order.state) | set(self.shuffled.state)
        return sorted(k for k in keys if self.in_order.state.get(k) != self.shuffled.state.get(k))

    @property
    def diverged(self) -> bool:
        """Both delivered faithfully, and still the outcomes differ."""
        return (
            self.in_order.delivered_faithfully
            and self.shuffled.delivered_faithfully
            and bool(self.differing_keys)
        )

    def rows(self) -> Iterator[tuple[str, str, str]]:
        """Table rows: label, in-order value, shuffled value."""
        yield "producer sent", " -> ".join(self.in_order.sent_types), " -> ".join(self.shuffled.sent_types)
        yield (
            "FIFO delivered as sent",
            "yes" if self.in_order.delivered_faithfully else "NO",
            "yes" if self.shuffled.delivered_faithfully else "NO",
        )
        for key in sorted(set(self.in_order.state) | set(self.shuffled.state)):
            marker = " *" if key in self.differing_keys else ""
            yield (
                f"{key}{marker}",
                _show(self.in_order.state.get(key)),
                _show(self.shuffled.state.get(key)),
            )

    def verdict(self) -> str:
        """One sentence: what the run showed."""
        if self.diverged:
            return (
                "Divergence shown: the same events, each delivered in the order its producer sent them, "
                f"left the workspaces different in {', '.join(self.differing_keys)} (* above). "
                "FIFO preserves the producer's order; it cannot repair it."
            )
        if not (self.in_order.delivered_faithfully and self.shuffled.delivered_faithfully):
            return "Not shown: a workspace did not apply its jobs in the order they were sent (see above)."
        return "Not shown: both workspaces ended in the same state."

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "diverged": self.diverged,
            "differing": self.differing_keys,
            "in_order": _outcome_dict(self.in_order),
            "shuffled": _outcome_dict(self.shuffled),
            "timings_seconds": self.timings.seconds,
        }


def _outcome_dict(outcome: WorkspaceOutcome) -> dict[str, Any]:
    return {
        "workspace": outcome.workspace,
        "sent": list(outcome.sent),
        "sent_types": list(outcome.sent_types),
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
    """Drop ``jobId`` fields: the two workspaces' job ids differ by construction, not by outcome."""
    if isinstance(value, list):
        return [_without_job_ids(v) for v in value]
    if isinstance(value, dict):
        return {k: _without_job_ids(v) for k, v in value.items() if k != "jobId"}
    return value


def outcome_state(item: Mapping[str, Any]) -> dict[str, Any]:
    """The comparable state of a workspace item: no bookkeeping, no job ids."""
    return {k: _without_job_ids(v) for k, v in item.items() if k not in _BOOKKEEPING}


def plan(seed: int) -> tuple[tuple[str, list[JobMessage]], tuple[str, list[JobMessage]]]:
    """The two workspaces and their messages, in send order."""
    workspaces = (f"div-s{seed}-in-order", f"div-s{seed}-shuffled")
    plans: list[tuple[str, list[JobMessage]]] = []
    for workspace, order in zip(workspaces, ((0, 1, 2), SHUFFLED), strict=True):
        messages = []
        for index in order:
            suffix, job_type, payload = EVENTS[index]
            messages.append(
                JobMessage(f"{workspace}-{suffix}", job_type, dict(payload), group=group_of(workspace))
            )
        plans.append((workspace, messages))
    return plans[0], plans[1]


def run_divergence(options: DemoOptions, *, say: Reporter = print) -> DivergenceResult:
    """Deploy (unless told not to), send both workspaces' events, drain, and read both outcomes."""
    timings = Phase()
    with steps.connect(options, timings) as target:
        clients = steps.make_clients(target)
        with timings.timed("deploy"):
            prepared = steps.prepare(options, target, say=say)
        resources = prepared.resources
        (first, first_messages), (second, second_messages) = plan(options.spec.seed)
        with timings.timed("send"):
            say(f"sending the same 3 events to {first} (in order) and {second} (shuffled) ...")
            steps.send(
                first_messages + second_messages, resources.queue_url, sqs_client=clients.sqs, target=target
            )
        with timings.timed("drain"):
            say("draining both workspaces through the function's handler ...")
            steps.drain(prepared, target=target, say=say)
        outcomes = []
        for workspace, messages in ((first, first_messages), (second, second_messages)):
            item = read_workspace(clients.dynamodb, resources.workspace_table, workspace) or {}
            outcomes.append(
                WorkspaceOutcome(
                    workspace=workspace,
                    sent=tuple(m.job_id for m in messages),
                    sent_types=tuple(m.job_type for m in messages),
                    applied=tuple(str(j) for j in item.get(APPLIED_ATTRIBUTE, [])),
                    state=outcome_state(item),
                )
            )
    return DivergenceResult(in_order=outcomes[0], shuffled=outcomes[1], timings=timings)
