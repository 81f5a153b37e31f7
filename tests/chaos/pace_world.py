"""The chaos world paced: the queue's ``pace`` limit on the real processors, under the suite's faults.

Each steered world (:mod:`.steering_world`: claim mode on the function or on container workers of
several slots, state mode on the function, an operator's controls among the faults) with a ``pace``
limit (docs/steering.md, "Pace a key"):

- every processor gets the limit's store (:class:`PaceStore`, on the world's clock) on the table its
  mode writes (claim mode: the claim table; state mode: the group table), as ``open_pace`` builds it
  from ``CONSTRUCTS_FIFO_PACE``. On the function, a fresh store per invocation (a cold process) or,
  ``warm``, one for every invocation (what it remembers of a key's ``tat`` is a lower bound whoever
  wrote last); each worker slot has its own for its life, as ``build_worker`` builds it;
- the key is the group, or the tenant in the job's payload (``body:payload.tenant``; two tenants over
  the groups: :func:`.workload.workloads` with ``tenants``);
- SQS's ``maxReceiveCount`` is SQS's most, 1000, as the construct sets it for a paced queue (a paced
  return is a receive, not an attempt);
- every take that took effect is recorded (:class:`Take`): the bucket's successful ``UpdateItem`` (a
  lost response and a crash after the call included: the token is spent), its tokens (the ``tat`` it
  moved, over the interval), the world's clock at the call, and the clock when its worker last left a
  point that is not the pace store's own: the take read its clock then or later, so a worker the
  schedule paused between its clock read and its write is a taker whose clock is behind by the pause
  (docs/steering.md, "Clock"). The world has one clock: no other skew.

:mod:`.pace_invariants` checks the promise on what is recorded here and in the history.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from hypothesis import strategies as st

from constructs_fifo.construct.settings.defaults import MAX_RECEIVE_COUNT_MAX
from constructs_fifo.runtime.constants import ATTR_ID, GROUP_ATTR_GROUP
from constructs_fifo.runtime.observability import JobLogger
from constructs_fifo.runtime.steering.pace import KEY_GROUP, PaceLimit
from constructs_fifo.runtime.steering.pace_store import (
    PACE_BUCKET_PREFIX,
    PACE_OVERRIDE_ID,
    PaceStore,
    claim_table_key,
    group_table_key,
)

from .calls import Point
from .faults import Fault
from .scheduler import Worker
from .steering_world import Steered, SteeredClaimWorld, SteeredStateWorld, SteeredWorkerWorld
from .workload import JobSpec, Workload
from .world import CLAIMS, GROUPS, WorldConfig

__all__ = ["TENANT_KEY", "Paced", "PacedClaimWorld", "PacedStateWorld", "PacedWorkerWorld", "Take", "limits"]

#: The pace key across groups: the tenant in the job's payload.
TENANT_KEY = "body:payload.tenant"
#: The clock when a worker last left a point that is not the pace store's (its ``meta`` key).
_LEFT_AT = "left_non_pace_point_at"


@dataclass(frozen=True)
class Take:
    """One take that took effect: ``tokens`` of ``key`` by ``worker`` at logical time ``time``.

    ``clock`` is the world's clock at the write; ``read_after`` the clock when its worker last left a
    point that is not the pace store's (the take read its own clock at or after it).
    """

    time: int
    worker: str
    key: str
    tokens: float
    clock: float
    read_after: float


def limits(key: str) -> st.SearchStrategy[PaceLimit]:
    """Limits that bite within a schedule (the clock moves by 1 to 121 s a tick): one job per 30 s,
    burst 1 or 2; two per 61 s; three per 100 s (an interval the runtime rounds up to a millisecond)."""
    return st.sampled_from(
        (
            PaceLimit(jobs=1, period_seconds=30, burst=1, key=key),
            PaceLimit(jobs=1, period_seconds=30, burst=2, key=key),
            PaceLimit(jobs=2, period_seconds=61, burst=2, key=key),
            PaceLimit(jobs=3, period_seconds=100, burst=1, key=key),
        )
    )


class Paced(Steered):
    """A steered world whose queue is paced (a mixin: the steered mode is the other base); see the
    module docstring."""

    def __init__(
        self, config: WorldConfig, workload: Workload, limit: PaceLimit, *, warm: bool = False
    ) -> None:
        super().__init__(config, workload)
        self.limit = limit
        self.warm = warm
        #: Whether the processors get the store (a negative control turns it off: a runtime not paced).
        self.paced = True
        #: The limit the processors' store is given (a negative control gives a looser one).
        self.store_limit = limit
        self.takes: list[Take] = []
        self._shared: PaceStore | None = None
        self._streams: list[io.StringIO] = []

    def key_of(self, spec: JobSpec) -> str:
        """The pace key's value of a job (its group, or its tenant)."""
        return spec.group if self.limit.key == KEY_GROUP else str(spec.tenant)

    # --- the runtime's share --------------------------------------------------------------------------

    def pace_store(self) -> PaceStore | None:
        if not self.paced:
            return None
        if self.warm and self._shared is not None:
            return self._shared
        table, key = (CLAIMS, claim_table_key) if self.has_claims else (GROUPS, group_table_key)
        store = PaceStore(table, self.dynamodb, limit=self.store_limit, item_key=key, clock=self.clock)
        if self.warm:
            self._shared = store
        return store

    def max_receive_count(self) -> int:
        return MAX_RECEIVE_COUNT_MAX

    def logger(self) -> JobLogger:
        stream = io.StringIO()
        self._streams.append(stream)
        return JobLogger("Chaos", stream=stream, clock=self.clock)

    # --- what the world sees -----------------------------------------------------------------------

    def step(self, worker: Worker, fault: Fault | None = None) -> None:
        point = worker.point
        if point is None or _pace_item(point) is None:
            worker.meta[_LEFT_AT] = self.clock()
        super().step(worker, fault)

    def observe_write(self, point: Point, worker: str) -> None:
        item = _pace_item(point)
        if item is None:
            super().observe_write(point, worker)  # type: ignore[safe-super]  # the mode's: the other base
            return
        if point.operation != "UpdateItem" or not item.startswith(PACE_BUCKET_PREFIX):
            return
        values = {name: int(value["N"]) for name, value in point.params["ExpressionAttributeValues"].items()}
        step_ms = values[":step"] if ":step" in values else values[":tat"] - values[":now"]
        current = self.scheduler.current()
        read_after = self.clock()
        if current is not None:
            read_after = float(current.meta.get(_LEFT_AT, current.meta["spawned_at"]))
        self.takes.append(
            Take(
                self.history.tick(),
                worker,
                item[len(PACE_BUCKET_PREFIX) :],
                step_ms / interval_ms(self.limit),
                self.clock(),
                read_after,
            )
        )

    def observe_read(self, point: Point, worker: str) -> None:
        if _pace_item(point) is None:  # the override's read is no read of a group's header
            super().observe_read(point, worker)

    # --- the session's summary ----------------------------------------------------------------------

    def paced_returns(self) -> int:
        """The records the runtime reported ``PACED`` (its metric lines, ``JobsPaced``)."""
        return sum(stream.getvalue().count('"JobsPaced"') for stream in self._streams)

    def tally(self) -> None:
        super().tally()
        events = self.history.events
        events["paced schedules"] += 1
        events["pace tokens taken"] += round(sum(take.tokens for take in self.takes))
        events["records paced (PACED, no attempt)"] += self.paced_returns()
        events["takes written after their worker's clock moved (a paused taker)"] += sum(
            take.clock > take.read_after for take in self.takes
        )


def interval_ms(limit: PaceLimit) -> int:
    """The emission interval as docs/steering.md states it: ``per / jobs``, rounded up to a millisecond
    (computed here, not read from the runtime)."""
    return -(-limit.period_seconds * 1000 // limit.jobs)


def _pace_item(point: Point) -> str | None:
    """The pace item a DynamoDB call reads or writes (a bucket ``pace#<value>``, the override), if any."""
    if point.service != "dynamodb":
        return None
    key = point.params.get("Key") or {}
    value = str((key.get(ATTR_ID) or key.get(GROUP_ATTR_GROUP) or {}).get("S", ""))
    return value if value.startswith(PACE_BUCKET_PREFIX) or value == PACE_OVERRIDE_ID else None


class PacedClaimWorld(Paced, SteeredClaimWorld):
    """Claim mode paced and steered, on the function."""


class PacedWorkerWorld(Paced, SteeredWorkerWorld):
    """Claim mode paced and steered, on container workers of several slots."""


class PacedStateWorld(Paced, SteeredStateWorld):
    """State mode paced and steered, on the function."""
