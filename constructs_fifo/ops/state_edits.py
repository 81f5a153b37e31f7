"""An operator's two changes to a state-mode group's bookkeeping: forget a dead job, give up a gap.

Both are one conditional write of the group's state item through the runtime's own store
(:meth:`~constructs_fifo.runtime.state.storage.store.StateStore.commit`, conditioned on the version read),
so a worker that commits meanwhile wins and the operator's write fails with nothing changed (run the command
again). The run marker in force, if any (the run item's, or the state item's own), is written into the
state item: it is the crash watch's evidence, and the edit's new version passes the run item.

* **Forget a dead job** (``dlq redrive --reset``, state mode): its id leaves ``dead``, its entry
  ``dead_entries`` and its count ``attempts``. A redelivered copy then runs as a new job instead of
  following it to the dead-letter queue as ``COPY_OF_DEAD_JOB``. Refused for a job whose ``seq`` is at
  or below the group's last ``seq`` (its place in the order was given up when it died: it would be
  skipped as a duplicate) and for the job a group is parked at (``groups resume`` decides that one).
* **Skip a gap** (``groups skip-gap``): what ``GapPolicy.SKIP_GAP`` does when a gap times out. The
  missing ``seq`` values up to the lowest buffered one are given up and recorded in ``skipped``;
  ``last_seq`` moves to just before that job. The buffered jobs are applied by the runtime, which is
  where the transition lives: the command sends the group a wake-up message, and the runtime ticks a
  group whose next ``seq`` waits in the buffer (its first receive waits out one backoff).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from constructs_fifo.ops.errors import OperationRefusedError
from constructs_fifo.ops.plan import command
from constructs_fifo.runtime.constants import DEFAULT_FIRST_SEQ
from constructs_fifo.runtime.dead_jobs.parking import wake_up_message
from constructs_fifo.runtime.state.core.engine import MAX_SKIPPED_RANGES, next_seq
from constructs_fifo.runtime.state.core.records import GroupState, SkippedRange

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_sqs.client import SQSClient

    from constructs_fifo.runtime.state.storage.runs import RunMarker
    from constructs_fifo.runtime.state.storage.store import StateStore

__all__ = ["check_forget", "dead_job_seq", "forget_dead_job", "read_group", "skip_gap", "skip_gap_range"]


def read_group(states: StateStore, group: str) -> tuple[GroupState, RunMarker | None]:
    """The group's committed state and the run marker in force (one consistent read).

    An edit commits the state with that marker (in the state item), so that a crash a worker's run
    marker names is still counted after the edit's new version passes the run item.
    """
    found, _, runs = states.load_for_batch([group], runs_of=[group])
    return found[group], runs[group].marker


def dead_job_seq(group_state: GroupState, job_id: str) -> int | None:
    """The ``seq`` the dead job carried, from its bookkeeping entry (``None`` without one)."""
    for entry in group_state.book.dead_entries:
        if entry.job_id == job_id:
            return entry.seq
    return None


def check_forget(group_state: GroupState, job_id: str, *, seq: int | None = None) -> None:
    """Refuse what :func:`forget_dead_job` refuses, before anything is written (see its docstring)."""
    group = group_state.group
    book = group_state.book
    if book.parked is not None and book.parked.job_id == job_id:
        raise OperationRefusedError(
            f"group {group!r} is parked at job {job_id!r}; its dead job is the group's to decide",
            f"retry it with {command('groups', 'resume', group)}, or skip it with "
            f"{command('groups', 'resume', group, '--skip-dead')}",
        )
    seq = seq if seq is not None else dead_job_seq(group_state, job_id)
    if seq is not None and book.last_seq is not None and seq <= book.last_seq:
        raise OperationRefusedError(
            f"job {job_id!r} carries seq {seq}, at or below group {group!r}'s last seq {book.last_seq}: its "
            "place in the order was given up when it died, so a redriven copy would be "
            "skipped as a duplicate",
            "send the work again as a new job with the next seq, or pass --force to redrive it anyway "
            "(it is then skipped)",
        )


def forget_dead_job(states: StateStore, group: str, job_id: str, *, seq: int | None = None) -> bool:
    """Forget that ``job_id`` died, so a redriven copy runs again. Returns ``False`` when nothing was dead.

    ``seq`` is the job's own ``seq`` when the caller knows it (the DLQ message's body): a job whose
    ``seq`` is at or below the group's last one is refused.

    Raises
    ------
    OperationRefusedError
        The group is parked at the job, or its ``seq`` was given up (see the module docstring), or a
        worker committed the group meanwhile.
    """
    group_state, marker = read_group(states, group)
    book = group_state.book
    check_forget(group_state, job_id, seq=seq)
    if job_id not in book.dead and job_id not in book.attempts:
        return False
    forgotten = replace(
        book,
        dead=tuple(dead for dead in book.dead if dead != job_id),
        dead_entries=tuple(entry for entry in book.dead_entries if entry.job_id != job_id),
        attempts={job: count for job, count in book.attempts.items() if job != job_id},
    )
    if not states.commit(group, replace(group_state, book=forgotten), group_state.version, run=marker):
        raise OperationRefusedError(
            f"group {group!r} was committed by a worker while its dead job {job_id!r} was being forgotten; "
            "nothing was changed",
            "run the command again",
        )
    return True


def skip_gap_range(group_state: GroupState, first_seq: int = DEFAULT_FIRST_SEQ) -> tuple[int, int] | None:
    """The ``seq`` values a skip gives up (first, last), ``None`` when the group waits on no gap."""
    book = group_state.book
    if not book.buffer:
        return None
    expected = next_seq(book.last_seq, first_seq)
    lowest = min(entry.seq for entry in book.buffer)
    if lowest <= expected:
        return None
    return expected, lowest - 1


def skip_gap(
    states: StateStore,
    sqs: SQSClient,
    queue_url: str,
    group: str,
    *,
    first_seq: int = DEFAULT_FIRST_SEQ,
) -> SkippedRange:
    """Give up the group's missing ``seq`` values (as ``SKIP_GAP`` would) and wake the group.

    Raises
    ------
    OperationRefusedError
        The group waits on no gap, is parked, or a worker committed it meanwhile.
    """
    group_state, marker = read_group(states, group)
    book = group_state.book
    if book.parked is not None:
        raise OperationRefusedError(
            f"group {group!r} is parked at job {book.parked.job_id!r}; a parked group applies nothing, "
            "gap or not",
            f"resume it first: {command('groups', 'resume', group)}",
        )
    missing = skip_gap_range(group_state, first_seq)
    if missing is None:
        raise OperationRefusedError(
            f"group {group!r} waits on no sequence gap (last seq {book.last_seq}, "
            f"{len(book.buffer)} buffered)",
            f"list the groups with gaps: {command('groups', 'list', '--gaps')}",
        )
    skipped = SkippedRange(missing[0], missing[1], states.now_ms())
    given_up = replace(
        book,
        last_seq=missing[1],
        skipped=(*book.skipped, skipped)[-MAX_SKIPPED_RANGES:],
        gap_since_ms=None,
    )
    if not states.commit(group, replace(group_state, book=given_up), group_state.version, run=marker):
        raise OperationRefusedError(
            f"group {group!r} was committed by a worker while its gap was being skipped; nothing was changed",
            f"look again ({command('groups', 'show', group)}): the gap may have closed",
        )
    sqs.send_message(**wake_up_message(queue_url, group))
    return skipped
