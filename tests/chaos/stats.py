"""What the chaos suite tried, summed over a pytest session and printed at its end (``make chaos``).

Each property records its world after every example (:meth:`ChaosStats.record`); the suite's
``conftest.py`` prints :meth:`ChaosStats.summary` in pytest's terminal summary, so a run says how
many schedules it played and how many faults of which kind it injected where.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .faults import Fault

if TYPE_CHECKING:
    from .world import ChaosWorld

#: Where a crash stopped its worker: (point, table) -> (moment before the call, moment after it).
_MOMENTS = {
    ("dynamodb.BatchGetItem", ""): ("before the claim / the state read",) * 2,
    ("dynamodb.PutItem", "claims"): ("before the claim", "after the claim"),
    ("job.start", ""): ("after the claim",) * 2,
    ("job.end", ""): ("after the side effect, before the commit",) * 2,
    ("job.gate", ""): ("waiting at a worker's run gate",) * 2,
    ("dynamodb.UpdateItem", "claims"): ("after the side effect, before the commit", "after the commit"),
    ("dynamodb.PutItem", "groups"): ("before the commit", "after the commit"),
    ("dynamodb.TransactWriteItems", "groups"): ("before the commit (or park)", "after the commit (or park)"),
    ("sqs.ChangeMessageVisibilityBatch", ""): ("during the visibility change",) * 2,
    ("sqs.SendMessage", ""): ("around a dead-letter or wake-up send",) * 2,
}


def crash_moment(fault: Fault, label: str, target: str) -> str:
    """Where a crash stopped its worker, in the words of the chaos issue."""
    moments = _MOMENTS.get((label, target)) or _MOMENTS.get((label, ""))
    if moments is None:
        return f"at {label}"
    return moments[1] if fault is Fault.CRASH_AFTER else moments[0]


@dataclass
class ChaosStats:
    """Counters summed over the session."""

    schedules: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    crashes: Counter[str] = field(default_factory=Counter)
    events: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0

    def record(self, name: str, world: ChaosWorld) -> None:
        """Add one example (one schedule) of property ``name``."""
        history = world.history
        self.schedules[name] += 1
        self.seconds += time.perf_counter() - world.started
        for given in history.faults:
            self.faults[given.fault.name] += 1
            if given.fault in (Fault.CRASH, Fault.CRASH_AFTER):
                self.crashes[crash_moment(given.fault, given.point.label, given.point.target)] += 1
        events = self.events
        events["scheduling steps"] += world.steps
        events["invocations"] += world.invocations
        events["stale receives (a live worker still held the message)"] += history.stale_receives
        events["runs by a worker past its lease"] += sum(
            run.clock_at_start > run.deadline for run in history.runs
        )
        events["refused conditional writes (fenced, lost races)"] += len(history.refused)
        events["jobs run"] += len(history.runs)
        events.update(history.events)

    def summary(self) -> str:
        """The lines printed at the end of the session (empty when no schedule ran)."""
        total = sum(self.schedules.values())
        if not total:
            return ""
        lines = [
            f"chaos: {total} schedules in {self.seconds:.0f} s ("
            + ", ".join(f"{name}: {count}" for name, count in sorted(self.schedules.items()))
            + ")",
            f"chaos: {sum(self.faults.values())} faults injected: "
            + ", ".join(f"{name} {count}" for name, count in self.faults.most_common()),
            "chaos: crashes: "
            + ", ".join(f"{moment} {count}" for moment, count in self.crashes.most_common()),
            "chaos: " + ", ".join(f"{name} {count}" for name, count in self.events.items()),
        ]
        return "\n".join(lines)


#: The session's counters.
STATS = ChaosStats()
