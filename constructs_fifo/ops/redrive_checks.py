"""Which DLQ messages a redrive sends back, which it leaves in the DLQ, and why.

A redrive that sends a message whose effect can never happen again loses it: the runtime skips the
copy as a duplicate (or kills it again at once) and deletes it from the queue, and the DLQ held the
only copy. Such a message is *left* in the DLQ, with the reason and the fix:

* a **malformed body** (no job id, or the runtime's ``MALFORMED`` reason): it dies again at once, so
  redriven it parks its group again under the PARK policy (under CONTINUE it comes straight back);
* claim mode, a job whose claim **SUCCEEDED**: the copy is skipped as a duplicate;
* state mode, a job its group **already applied** (its id, or a ``seq`` at or below the group's last
  one), or a dead job to forget (``--reset``) whose ``seq`` was **given up** when it died (the
  runbook's ``groups resume --skip-dead`` gives it up): the copy is skipped as a duplicate.

``--force`` sends them all the same (the plan says what becomes of each). A redrive of one job or one
message refuses instead of leaving it (that message was what was asked for); a redrive of a group or
of the whole DLQ leaves it and sends the rest. A job its group is parked at is refused either way: the
group's resume decides it.

The jobs that are sent get their reset steps here too (``--reset``: claim mode, the DEAD claim is
deleted; state mode, the group forgets the death), and notes for what would bring them back.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from constructs_fifo.ops.errors import OperationRefusedError
from constructs_fifo.ops.plan import Plan, command
from constructs_fifo.ops.state_edits import dead_job_seq, forget_dead_job
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_SUCCEEDED, DeadReason
from constructs_fifo.runtime.state.core.records import job_key

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.dead_letters import DlqMessage
    from constructs_fifo.ops.target import OpsQueue
    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.state.core.records import GroupState
    from constructs_fifo.runtime.state.storage.store import StateStore

__all__ = ["Left", "check_letters", "is_malformed"]


@dataclass(frozen=True)
class Left:
    """A DLQ message a redrive leaves where it is: why, and what to do about it instead."""

    letter: DlqMessage
    why: str
    fix: str

    def to_dict(self) -> dict[str, str | None]:
        return {
            "messageId": self.letter.message_id,
            "group": self.letter.group,
            "jobId": self.letter.job_id,
            "why": self.why,
            "fix": self.fix,
        }


def is_malformed(letter: DlqMessage) -> bool:
    """Whether the message's body is no job the runtime can run (no job id, or dead as MALFORMED)."""
    return letter.job_id is None or letter.attributes.reason == DeadReason.MALFORMED.value


def _malformed(letter: DlqMessage) -> Left:
    return Left(
        letter,
        f"DLQ message {letter.message_id} of group {letter.group} has a malformed body (no job the "
        "runtime can run): redriven, it dies again at once and parks group "
        f"{letter.group} again (under CONTINUE it comes straight back to the DLQ)",
        f"drop it: {command('dlq', 'drop', '--message-id', letter.message_id)} (send the work again "
        "as a well-formed job if it matters), or redrive it anyway with "
        f"{command('dlq', 'redrive', '--message-id', letter.message_id, '--force')}",
    )


def _duplicate(letter: DlqMessage, job_id: str, why: str, *, new_job: bool = False) -> Left:
    again = "send the work again as a new job with the next seq, then " if new_job else ""
    return Left(
        letter,
        f"job {job_id} (group {letter.group}) {why}: redriven, it would be skipped as a duplicate",
        f"{again}drop it: {command('dlq', 'drop', job_id)}; or redrive it anyway (it is then skipped) "
        f"with {command('dlq', 'redrive', '--job', job_id, '--force')}",
    )


def check_letters(
    ops: OpsQueue, letters: list[DlqMessage], plan: Plan, *, reset: bool, force: bool
) -> list[Left]:
    """The messages of ``letters`` to leave in the DLQ (all of them when ``force`` is false; none
    with it); add the reset steps and the notes of the rest to ``plan``.

    Raises
    ------
    OperationRefusedError
        A job its group is parked at (``groups resume`` decides it); nothing was changed.
    """
    states = ops.states
    groups = states.load({letter.group for letter in letters}) if states is not None else {}
    left: list[Left] = []
    verdicts: dict[str, Left | None] = {}
    for letter in letters:
        if is_malformed(letter):
            found = _malformed(letter)
            if force:
                plan.notes.append(f"--force: {found.why}")
            else:
                left.append(found)
            continue
        job_id = str(letter.job_id)
        if job_id not in verdicts:  # a job's copies share its verdict (and its steps)
            checked = _check_job(ops, letter, job_id, groups, plan, reset=reset)
            verdicts[job_id] = checked
            if force and checked is not None:
                plan.notes.append(f"--force: {checked.why}")
        verdict = verdicts[job_id]
        if verdict is not None and not force:
            left.append(Left(letter, verdict.why, verdict.fix))
    return left


def _check_job(
    ops: OpsQueue,
    letter: DlqMessage,
    job_id: str,
    groups: dict[str, GroupState],
    plan: Plan,
    *,
    reset: bool,
) -> Left | None:
    """The job's verdict: a :class:`Left` when its copy would be skipped; else its steps and notes."""
    claims = ops.claims
    if claims is not None:
        claim = claims.get(job_id)
        status = None if claim is None else claim.get("status")
        if status == STATUS_SUCCEEDED:
            return _duplicate(letter, job_id, "has a SUCCEEDED claim")
        if status == STATUS_DEAD:
            if reset:
                plan.add(
                    f"reset the DEAD claim of job {job_id} (it runs again)",
                    functools.partial(_reset_claim, claims, job_id),
                )
            else:
                plan.notes.append(
                    f"job {job_id} has a DEAD claim: without --reset the redriven copy follows it back to "
                    "the DLQ (COPY_OF_DEAD_JOB)"
                )
        return None
    states = ops.states
    if states is None or letter.group not in groups:
        return None
    group_state = groups[letter.group]
    book = group_state.book
    seq = letter.seq if letter.seq is not None else dead_job_seq(group_state, job_id)
    given_up = seq is not None and book.last_seq is not None and seq <= book.last_seq
    if job_id in book.dead:
        if not reset:
            plan.notes.append(
                f"group {letter.group} remembers job {job_id} dead: without --reset the redriven copy "
                "follows it back to the DLQ (COPY_OF_DEAD_JOB)"
            )
            return None
        if book.parked is not None and book.parked.job_id == job_id:
            raise OperationRefusedError(
                f"group {letter.group!r} is parked at job {job_id!r}; its dead job is the group's to decide",
                f"retry it with {command('groups', 'resume', letter.group)}, or skip it with "
                f"{command('groups', 'resume', letter.group, '--skip-dead')}",
            )
        if given_up:
            return _duplicate(
                letter,
                job_id,
                f"carries seq {seq}, at or below group {letter.group!r}'s last seq {book.last_seq} (its "
                "place in the order was given up when it died, e.g. skipped by `groups resume "
                "--skip-dead`)",
                new_job=True,
            )
        plan.add(
            f"make group {letter.group} forget that job {job_id} died (it runs again)",
            functools.partial(_forget, states, letter.group, job_id, letter.seq),
        )
        return None
    if job_key(job_id) in book.applied or given_up:
        return _duplicate(
            letter, job_id, f"was already applied by group {letter.group!r}'s state (its id or seq)"
        )
    return None


def _reset_claim(store: ClaimStore, job_id: str) -> str:
    if store.reset(job_id):
        return f"reset the DEAD claim of job {job_id}"
    return f"job {job_id} had no DEAD claim left to reset"


def _forget(states: StateStore, group: str, job_id: str, seq: int | None) -> str:
    if forget_dead_job(states, group, job_id, seq=seq):
        return f"group {group} forgot that job {job_id} died"
    return f"group {group} no longer remembered job {job_id} dead"
