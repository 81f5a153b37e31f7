"""``dlq list``, ``dlq show``, ``dlq redrive``, ``dlq drop``: the dead-letter queue, read and acted on.

Reading goes through :mod:`.dead_letters` (SQS has no peek: receive, then release). What the tables
know is preferred and shown beside the message: the job's claim (claim mode) or whether its group's
state remembers it dead (state mode).

Redrive
-------
* **The whole DLQ** (no ``--group``/``--job``): ``StartMessageMoveTask`` from the DLQ to the queue, as
  AWS documents it (FIFO to FIFO keeps each message's group; SQS moves the messages in the DLQ's order).
  The messages are first peeked, to check and (``--reset``) reset their jobs, then released.
* **One group or one job**: SQS cannot move chosen messages, so they are received and sent again,
  each group's in the DLQ's order, with the same ``MessageGroupId`` and body, and deleted from the DLQ
  only after their send succeeded: a failure leaves the message in the DLQ (nothing lost). The send's
  deduplication id is ``redrive-<DLQ message id>``, the same on every try: a crash between the send and
  the delete leaves the message in the DLQ, and the next redrive's send of it is collapsed by SQS within
  its 5-minute deduplication interval. After that interval the copy is delivered, and the tables make
  its effect happen once all the same: its claim is ``SUCCEEDED`` (claim mode) or its id or ``seq`` is
  remembered as applied (state mode), so the runtime skips it as a duplicate.

With ``--reset`` each job is first made runnable (claim mode: its DEAD claim is deleted,
:meth:`ClaimStore.reset`; state mode: its group forgets it died, :mod:`.state_edits`); without it a
redriven dead job follows itself back to the DLQ as ``COPY_OF_DEAD_JOB``. A job whose claim SUCCEEDED,
or that its state already applied, is refused unless ``--force`` (it would be skipped).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.local.errors import OperationError, OperationRefusedError
from constructs_fifo.local.ops.dead_letters import MUTATE_VISIBILITY_SECONDS, DlqMessage, Peek, peek
from constructs_fifo.local.ops.plan import Plan
from constructs_fifo.local.ops.state_edits import check_forget, forget_dead_job
from constructs_fifo.local.queues import queue_counts
from constructs_fifo.runtime.aws_limits import SQS_MAX_ID_LENGTH, SQS_MAX_LIST_MOVE_TASKS_RESULTS
from constructs_fifo.runtime.constants import STATUS_DEAD, STATUS_SUCCEEDED
from constructs_fifo.runtime.state.core.records import job_key

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.local.ops.target import OpsQueue
    from constructs_fifo.runtime.claim.store import ClaimStore
    from constructs_fifo.runtime.state.core.records import GroupState
    from constructs_fifo.runtime.state.storage.store import StateStore

__all__ = [
    "REDRIVE_DEDUP_PREFIX",
    "DeadLetterListing",
    "list_dead_letters",
    "move_tasks",
    "plan_drop",
    "plan_redrive",
]

#: Prefix of a redriven message's deduplication id (then the DLQ message id).
REDRIVE_DEDUP_PREFIX: Final = "redrive-"


@dataclass
class DeadLetterListing:
    """What ``dlq list`` / ``dlq show`` found: the messages, what the tables say, and the DLQ's depth."""

    queue: str
    letters: list[DlqMessage]
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    complete: bool = True
    depth: int = 0

    def table_view(self, letter: DlqMessage) -> dict[str, Any]:
        return self.tables.get(letter.job_id or "", {})

    def to_dict(self) -> dict[str, Any]:
        return {
            "queue": self.queue,
            "deadLetterQueueDepth": self.depth,
            "complete": self.complete,
            "messages": [{**letter.to_dict(), "tables": self.table_view(letter)} for letter in self.letters],
        }


def _table_view(ops: OpsQueue, letters: list[DlqMessage]) -> dict[str, dict[str, Any]]:
    """Per job id: the claim (claim mode) or the group state's memory of it (state mode)."""
    views: dict[str, dict[str, Any]] = {}
    claims = ops.claims
    states = ops.states
    groups: dict[str, GroupState] = {}
    if states is not None:
        groups = states.load({letter.group for letter in letters if letter.group})
    for letter in letters:
        job_id = letter.job_id
        if not job_id or job_id in views:
            continue
        if claims is not None:
            claim = claims.get(job_id)
            views[job_id] = (
                {"claimStatus": None}
                if claim is None
                else {
                    "claimStatus": claim.get("status"),
                    "claimAttempts": claim.get("attempts"),
                    "claimError": claim.get("error"),
                    "claimErrorType": claim.get("error_type"),
                    "claimDeadReason": claim.get("dead_reason"),
                }
            )
        elif letter.group in groups:
            book = groups[letter.group].book
            entry = next((e for e in book.dead_entries if e.job_id == job_id), None)
            views[job_id] = {
                "stateRemembersDead": job_id in book.dead,
                "stateDeadReason": None if entry is None else entry.reason.value,
                "stateDeadError": None if entry is None else entry.error,
                "stateLastSeq": book.last_seq,
            }
    return views


def list_dead_letters(
    ops: OpsQueue, *, group: str | None = None, job: str | None = None
) -> DeadLetterListing:
    """Peek the DLQ (receive, then release at once), keep the group's or job's messages, add the tables."""
    url = ops.dead_letter_queue_url
    with peek(ops.sqs, url) as held:
        letters = [
            letter
            for letter in held.letters
            if (group is None or letter.group == group) and (job is None or letter.job_id == job)
        ]
        complete = held.complete
    depth = queue_counts(ops.sqs, url).total
    return DeadLetterListing(ops.label, letters, _table_view(ops, letters), complete, depth)


# --- redrive ------------------------------------------------------------------------------------------


def _check_jobs(ops: OpsQueue, letters: list[DlqMessage], plan: Plan, *, reset: bool, force: bool) -> None:
    """Refuse jobs that would be skipped (unless ``force``); add the reset steps (``reset``)."""
    claims = ops.claims
    states = ops.states
    seen: set[str] = set()
    groups = states.load({letter.group for letter in letters}) if states is not None else {}
    for letter in letters:
        job_id = letter.job_id
        if not job_id or job_id in seen:
            continue
        seen.add(job_id)
        if claims is not None:
            claim = claims.get(job_id)
            status = None if claim is None else claim.get("status")
            if status == STATUS_SUCCEEDED:
                if not force:
                    raise OperationRefusedError(
                        f"job {job_id!r} (group {letter.group!r}) has a SUCCEEDED claim: redriven, it "
                        "would be "
                        "skipped as a duplicate",
                        "drop it instead (`constructs-fifo dlq drop JOB`), or pass --force to redrive it "
                        "anyway",
                    )
                plan.notes.append(f"job {job_id} has a SUCCEEDED claim: it will be skipped as a duplicate")
            elif status == STATUS_DEAD:
                if reset:
                    plan.add(
                        f"reset the DEAD claim of job {job_id} (it runs again)",
                        functools.partial(_reset_claim, claims, job_id),
                    )
                else:
                    plan.notes.append(
                        f"job {job_id} has a DEAD claim: without --reset the redriven copy follows it "
                        "back to the "
                        "DLQ (COPY_OF_DEAD_JOB)"
                    )
            continue
        if states is None or letter.group not in groups:
            continue
        group_state = groups[letter.group]
        book = group_state.book
        applied = job_key(job_id) in book.applied or (
            letter.seq is not None and book.last_seq is not None and letter.seq <= book.last_seq
        )
        if job_id in book.dead:
            if not reset:
                plan.notes.append(
                    f"group {letter.group} remembers job {job_id} dead: without --reset the redriven "
                    "copy follows "
                    "it back to the DLQ (COPY_OF_DEAD_JOB)"
                )
                continue
            try:
                check_forget(group_state, job_id, seq=letter.seq)
            except OperationRefusedError:
                if not force:
                    raise
                plan.notes.append(f"job {job_id}'s seq was given up: it will be skipped as a duplicate")
                continue
            plan.add(
                f"make group {letter.group} forget that job {job_id} died (it runs again)",
                functools.partial(_forget, states, letter.group, job_id, letter.seq),
            )
        elif applied:
            if not force:
                raise OperationRefusedError(
                    f"job {job_id!r}: group {letter.group!r}'s state already applied it (its id or seq): "
                    "redriven, it would be skipped as a duplicate",
                    "drop it instead (`constructs-fifo dlq drop JOB`), or pass --force to redrive it anyway",
                )
            plan.notes.append(f"job {job_id} was already applied: it will be skipped as a duplicate")


def _reset_claim(store: ClaimStore, job_id: str) -> str:
    if store.reset(job_id):
        return f"reset the DEAD claim of job {job_id}"
    return f"job {job_id} had no DEAD claim left to reset"


def _forget(states: StateStore, group: str, job_id: str, seq: int | None) -> str:
    if forget_dead_job(states, group, job_id, seq=seq):
        return f"group {group} forgot that job {job_id} died"
    return f"group {group} no longer remembered job {job_id} dead"


def _resend(ops: OpsQueue, held: Peek, letter: DlqMessage) -> str:
    """Send one DLQ message to the queue in its group, then delete it from the DLQ (see the docstring)."""
    ops.sqs.send_message(
        QueueUrl=ops.deployed.queue_url,
        MessageBody=letter.body,
        MessageGroupId=letter.group,
        MessageDeduplicationId=f"{REDRIVE_DEDUP_PREFIX}{letter.message_id}"[:SQS_MAX_ID_LENGTH],
    )
    held.delete(letter)
    job = letter.job_id or "(no job id)"
    return f"redrove job {job} (group {letter.group}, DLQ message {letter.message_id})"


def _rest_of_group(ops: OpsQueue, held: Peek, group: str) -> str | None:
    """Redrive what the DLQ returns of ``group`` once its front messages are gone, until none is left."""
    moved = 0
    while True:
        more = [letter for letter in held.more(MUTATE_VISIBILITY_SECONDS) if letter.group == group]
        if not more:
            return f"redrove {moved} more message(s) of group {group}" if moved else None
        for letter in more:
            _resend(ops, held, letter)
            moved += 1


def plan_redrive(
    ops: OpsQueue,
    *,
    group: str | None = None,
    job: str | None = None,
    reset: bool = False,
    force: bool = False,
) -> Plan:
    """The steps of ``dlq redrive`` (see the module docstring); call ``close()`` when done with it.

    Raises
    ------
    OperationRefusedError
        Nothing to redrive, or a job that would be skipped without ``force``; nothing was changed.
    """
    url = ops.dead_letter_queue_url
    command = "dlq redrive"
    held = peek(ops.sqs, url, visibility_seconds=MUTATE_VISIBILITY_SECONDS)
    plan = Plan(command)
    plan.on_close.append(held.release)
    try:
        chosen = [
            letter
            for letter in held.letters
            if (group is None or letter.group == group) and (job is None or letter.job_id == job)
        ]
        if not chosen:
            what = f"group {group!r}" if group else f"job {job!r}" if job else "any job"
            raise OperationRefusedError(
                f"the dead-letter queue of {ops.label} holds no message of {what} (peeked "
                f"{len(held.letters)})",
                "list what it holds: `constructs-fifo dlq list`",
            )
        _check_jobs(ops, chosen, plan, reset=reset, force=force)
        plan.details["jobs"] = [letter.to_dict() for letter in chosen]
        if group is None and job is None:
            _plan_move_task(ops, held, plan, len(chosen))
        else:
            for letter in chosen:
                plan.add(
                    f"send job {letter.job_id or '(no job id)'} (group {letter.group}, DLQ message "
                    f"{letter.message_id}) to the queue, then delete it from the DLQ",
                    functools.partial(_resend, ops, held, letter),
                )
            if group is not None and not held.complete:
                plan.add(
                    f"then redrive whatever else of group {group} the DLQ returns, in order",
                    lambda: _rest_of_group(ops, held, group) or f"no more messages of group {group}",
                )
    except BaseException:
        plan.close()
        raise
    return plan


def _plan_move_task(ops: OpsQueue, held: Peek, plan: Plan, seen: int) -> None:
    source = ops.dead_letter_queue_arn
    destination = ops.deployed.queue_arn
    if not held.complete:
        plan.notes.append(
            f"the peek saw {seen} message(s), not the whole DLQ: the move task moves every "
            "message, checked or not"
        )

    def start() -> str:
        held.release()
        try:
            response = ops.sqs.start_message_move_task(SourceArn=source, DestinationArn=destination)
        except ClientError as exc:  # e.g. a task already running on this DLQ
            raise OperationError(
                f"StartMessageMoveTask from {source} to {destination} failed: {exc}",
                "look at the running task (`aws sqs list-message-move-tasks --source-arn ...`) and try again",
            ) from exc
        handle = response.get("TaskHandle", "")
        plan.details["taskHandle"] = handle
        return (
            f"started a message move task from the DLQ to the queue (task handle {handle}); it runs in the "
            "background: `aws sqs list-message-move-tasks --source-arn ...` shows its progress"
        )

    plan.add(f"start a message move task: every message of {source} back to {destination}", start)


def move_tasks(ops: OpsQueue) -> list[dict[str, Any]]:
    """The DLQ's message move tasks, newest first (``ListMessageMoveTasks``): status and counts."""
    response = ops.sqs.list_message_move_tasks(
        SourceArn=ops.dead_letter_queue_arn, MaxResults=SQS_MAX_LIST_MOVE_TASKS_RESULTS
    )
    return [dict(task) for task in response.get("Results", [])]


# --- drop ---------------------------------------------------------------------------------------------


def plan_drop(ops: OpsQueue, job: str) -> Plan:
    """The steps of ``dlq drop JOB``: delete the job's DLQ messages. Its claim or state stays dead.

    Raises
    ------
    OperationRefusedError
        The DLQ holds no message of the job.
    """
    held = peek(ops.sqs, ops.dead_letter_queue_url, visibility_seconds=MUTATE_VISIBILITY_SECONDS)
    plan = Plan("dlq drop")
    plan.on_close.append(held.release)
    chosen = [letter for letter in held.letters if letter.job_id == job]
    if not chosen:
        plan.close()
        raise OperationRefusedError(
            f"the dead-letter queue of {ops.label} holds no message of job {job!r} (peeked "
            f"{len(held.letters)})",
            "list what it holds: `constructs-fifo dlq list`",
        )
    plan.details["jobs"] = [letter.to_dict() for letter in chosen]
    for letter in chosen:

        def delete(letter: DlqMessage = letter) -> str:
            held.delete(letter)
            return f"deleted DLQ message {letter.message_id} of job {job} (group {letter.group})"

        plan.add(f"delete DLQ message {letter.message_id} of job {job} (group {letter.group})", delete)
    plan.notes.append(
        f"job {job} stays dead in the tables: a later copy of it follows it to the DLQ (COPY_OF_DEAD_JOB)"
    )
    return plan
