"""One group's run, committed: what it owes paid, its records through the core, one conditional write.

The one unit both paths use: a live group's batch (:mod:`constructs_fifo.runtime.state.processor`)
and each page of a resuming group's replay (:mod:`constructs_fifo.runtime.state.replay`). It goes
down state mode's rooms once, in order:

1. **Pay** (:mod:`~constructs_fifo.runtime.state.outcomes`). What an earlier run owes is sent before
   anything of this run (:meth:`~constructs_fifo.runtime.state.outcomes.OwedLetters.pay`; a failed
   send raises: nothing is committed).
2. **Plan and watch** (:mod:`~constructs_fifo.runtime.state.crash_watch`).
   :func:`~constructs_fifo.runtime.state.crash_watch.plan_run` decides how the run is watched from
   what the read found of the group's run and whether the records were received before; the
   transition runs inside a :class:`~constructs_fifo.runtime.state.crash_watch.CrashWatch` (marker
   writes) inside a :class:`~constructs_fifo.runtime.state.core.apply.RecordingTransition` (errors,
   attempts and durations for the outcome lines).
3. **Run** (:mod:`~constructs_fifo.runtime.state.core`).
   :func:`~constructs_fifo.runtime.state.core.apply.run_group` runs the records through the core.
4. **Items.** The caller's ``items_of`` gives the park header and the items written in the same
   transaction (a live group that parks: its header and kept records; a replay page: its header and
   the deletes of the kept records it finished, after sending the dead ones that must go first).
5. **Settle** (the crash watch). The state to commit is the run's, with a replayed crash still
   counted (:meth:`~constructs_fifo.runtime.state.crash_watch.RunPlan.settle`), and the marker the
   commit keeps (:meth:`~constructs_fifo.runtime.state.crash_watch.RunPlan.carried`).
6. **Owe and commit** (the outcomes, then :mod:`~constructs_fifo.runtime.state.storage`). The state
   owes the buffered jobs that died in the run
   (:func:`~constructs_fifo.runtime.state.outcomes.owing`), then one conditional write on the version
   read: with the marker the run keeps (rule 5 of the crash watch), or, without one, a write only
   when something changed (the state, the marker opened, the resume, what was owed), else only the
   items.

The caller sends what the commit owes afterwards, and writes the lines. Failures raise
(:class:`~constructs_fifo.runtime.state.crash_watch.RunInterrupted` when a marker write lost or
failed, anything else as it came): each caller answers them its own way.

The paths differ in one parameter, ``keep_marker``. A live group keeps a group marker after an
isolated run that stopped, so its next batch stays isolated until a run goes through (the
transition that crashed may not have been reached yet). A replay page keeps none: every replay page
is watched as a redelivery, so the next page writes its own marker before its first transition and a
crash there is found and isolated all the same, and its commit always writes the state, passing the
marker, as the page's header update (``retry_at_ms``) is what brings a stopped replay back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from constructs_fifo.runtime.batch_processor import NO_HEARTBEAT
from constructs_fifo.runtime.state.core.apply import RecordingTransition, run_group
from constructs_fifo.runtime.state.core.records import BatchResult
from constructs_fifo.runtime.state.crash_watch import CrashWatch, plan_run
from constructs_fifo.runtime.state.outcomes import owing

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.runtime.dead_jobs.parking import ParkHeader
    from constructs_fifo.runtime.state.core.engine import Transition
    from constructs_fifo.runtime.state.core.records import BatchSettings, GroupState
    from constructs_fifo.runtime.state.outcomes import OwedLetters, OwedSend, StateOutcomes
    from constructs_fifo.runtime.state.storage.runs import FoundRun, RunMarker
    from constructs_fifo.runtime.state.storage.store import StateStore
    from constructs_fifo.runtime.types import SQSRecord

__all__ = ["Committed", "GroupCommit", "ItemsOf"]

#: Step 5: the park header after the run (``None``: none, or deleted) and the transaction's other items.
ItemsOf = Callable[[BatchResult], "tuple[ParkHeader | None, Sequence[Mapping[str, Any]]]"]


@dataclass(frozen=True)
class Committed:
    """What one group commit did.

    Attributes
    ----------
    committed : bool
        Whether the write went through (``False``: another worker committed first; nothing written).
    run : BatchResult
        The run's results, one per record.
    recorder : RecordingTransition
        The transitions' errors, attempts and durations.
    final : GroupState
        The state written (its ``version`` still the one read; the item is at ``version + 1``).
    version : int
        The version the write was conditioned on (the one read).
    changed : bool
        Whether the state item was written (else only the items were, if any).
    paid : list of OwedSend
        What an earlier run owed, sent before this one ran.
    carried : RunMarker or None
        The marker the commit kept.
    header : ParkHeader or None
        ``items_of``'s header.
    """

    committed: bool
    run: BatchResult
    recorder: RecordingTransition
    final: GroupState
    version: int
    changed: bool
    paid: list[OwedSend]
    carried: RunMarker | None
    header: ParkHeader | None


class GroupCommit:
    """Runs and commits one group's records; see the module docstring for the steps.

    Parameters
    ----------
    transition : Transition
        The user's transition.
    settings : BatchSettings
        The queue's state-mode settings.
    states : StateStore
        The group table's state and run items (the marker writes and the commit).
    outcomes : StateOutcomes
        The write of a run that keeps no marker.
    owed : OwedLetters
        What an earlier run owes.
    keep_marker : bool
        Whether the commit keeps a group marker after an isolated run that stopped (a live group:
        ``True``; a replay page: ``False``, see the module docstring).
    admit : Callable[..., AbstractContextManager]
        The caller's gate (:meth:`~constructs_fifo.runtime.batch_processor.Heartbeat.admit`), held from
        the run's first marker to its commit: alone for an isolated run, so that a job marker names a
        crash of its own (a worker's slots share one process); Lambda's admits everything at once.
    """

    def __init__(
        self,
        *,
        transition: Transition,
        settings: BatchSettings,
        states: StateStore,
        outcomes: StateOutcomes,
        owed: OwedLetters,
        keep_marker: bool,
        admit: Callable[..., AbstractContextManager[object]] = NO_HEARTBEAT.admit,
    ) -> None:
        self._admit = admit
        self._transition = transition
        self._settings = settings
        self._states = states
        self._outcomes = outcomes
        self._owed = owed
        self._keep_marker = keep_marker

    def run(
        self,
        read: GroupState,
        records: list[SQSRecord],
        *,
        found: FoundRun,
        redelivered: bool,
        now_ms: int,
        items_of: ItemsOf,
        start: GroupState | None = None,
        like: SQSRecord | None = None,
    ) -> Committed:
        """Steps 1-6 for ``records`` of the group ``read`` (``start``: the state to run from, when not
        the one read: a resumed group's; ``found``: what the read found of the group's run).

        Raises
        ------
        RunInterrupted
            A marker write lost its race (``cause`` ``None``: nothing written) or failed.
        Exception
            A send of what is owed, the run, or the write failed: nothing (known to be) committed.
        """
        settings, group = self._settings, read.group
        begin = read if start is None else start
        paid = self._owed.pay(read, like)
        plan = plan_run(begin, found.marker, redelivered=redelivered, max_attempts=settings.max_attempts)
        with self._admit(alone=plan.isolate):
            watch = CrashWatch(self._transition, plan, self._states, group, settings.max_attempts, found)
            recorder = RecordingTransition(watch)
            run = run_group(plan.start, records, recorder, settings, now_ms=now_ms)
            clean = run.stalled_on is None and not any(result.stops_group for result in run.results)
            header, items = items_of(run)
            settled = plan.settle(run.group_state, frozenset(watch.called))
            carried = plan.carried(clean=clean) if self._keep_marker else None
            # a buffered job that died has no record: committed dead and owed, sent after the commit
            final = owing(settled, run.dead_buffered)
            if carried is not None:  # the commit keeps a new marker
                changed = True
                committed = self._states.commit(group, final, watch.version, with_items=items, run=carried)
            else:
                changed = run.changed or watch.opened or begin != read or bool(read.book.owed)
                committed = self._outcomes.write(group, final, watch.version, changed=changed, items=items)
        return Committed(committed, run, recorder, final, watch.version, changed, paid, carried, header)
