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

from constructs_fifo.ops.dead_letters import MUTATE_VISIBILITY_SECONDS, DlqMessage, Peek, peek
from constructs_fifo.ops.errors import OperationError, OperationRefusedError
from constructs_fifo.ops.plan import Plan, command
from constructs_fifo.ops.redrive_checks import check_letters, is_malformed
from constructs_fifo.runtime.aws_limits import SQS_MAX_ID_LENGTH, SQS_MAX_LIST_MOVE_TASKS_RESULTS
from constructs_fifo.stacks.counters import queue_counts

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue
    from constructs_fifo.runtime.state.core.records import GroupState

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
    ops: OpsQueue, *, group: str | None = None, job: str | None = None, message_id: str | None = None
) -> DeadLetterListing:
    """Peek the DLQ (receive, then release at once), keep the group's, job's or one message, add the
    tables."""
    url = ops.dead_letter_queue_url
    with peek(ops.sqs, url) as held:
        letters = _select(held.letters, group=group, job=job, message_id=message_id)
        complete = held.complete
    depth = queue_counts(ops.sqs, url).total
    return DeadLetterListing(ops.label, letters, _table_view(ops, letters), complete, depth)


# --- redrive ------------------------------------------------------------------------------------------


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
            if is_malformed(letter):  # it would park the group again: left, and it holds the rest back
                return (
                    f"redrove {moved} more message(s) of group {group}; left DLQ message "
                    f"{letter.message_id} (a malformed body) and what follows it: "
                    f"{command('dlq', 'list', '--group', group)}"
                )
            _resend(ops, held, letter)
            moved += 1


def _select(
    letters: list[DlqMessage], *, group: str | None, job: str | None, message_id: str | None
) -> list[DlqMessage]:
    return [
        letter
        for letter in letters
        if (group is None or letter.group == group)
        and (job is None or letter.job_id == job)
        and (message_id is None or letter.message_id == message_id)
    ]


def _none_held(
    ops: OpsQueue, held: Peek, *, group: str | None, job: str | None, message_id: str | None
) -> OperationRefusedError:
    what = (
        f"group {group!r}"
        if group
        else f"job {job!r}"
        if job
        else f"message id {message_id!r}"
        if message_id
        else "any job"
    )
    return OperationRefusedError(
        f"the dead-letter queue of {ops.label} holds no message of {what} (peeked {len(held.letters)})",
        f"list what it holds: {command('dlq', 'list')}",
    )


def plan_redrive(
    ops: OpsQueue,
    *,
    group: str | None = None,
    job: str | None = None,
    message_id: str | None = None,
    reset: bool = False,
    force: bool = False,
) -> Plan:
    """The steps of ``dlq redrive`` (see the module docstring); call ``close()`` when done with it.

    A message whose copy could never run (:mod:`.redrive_checks`) is left in the DLQ, named in the
    plan's notes with its fix, and the rest go; a redrive of one job or one message refuses instead.

    Raises
    ------
    OperationRefusedError
        Nothing to redrive, or (one job or message) one that would be skipped or die again without
        ``force``; nothing was changed.
    """
    url = ops.dead_letter_queue_url
    argv = ["dlq", "redrive"]
    for option, value in (("--group", group), ("--job", job), ("--message-id", message_id)):
        argv += [option, value] if value is not None else []
    argv += (["--reset"] if reset else []) + (["--force"] if force else [])
    held = peek(ops.sqs, url, visibility_seconds=MUTATE_VISIBILITY_SECONDS)
    plan = Plan("dlq redrive", argv=argv)
    plan.on_close.append(held.release)
    try:
        chosen = _select(held.letters, group=group, job=job, message_id=message_id)
        if not chosen:
            raise _none_held(ops, held, group=group, job=job, message_id=message_id)
        left = check_letters(ops, chosen, plan, reset=reset, force=force)
        if left and (job is not None or message_id is not None):
            raise OperationRefusedError(left[0].why, left[0].fix)
        gone = {entry.letter.message_id for entry in left}
        sending = [letter for letter in chosen if letter.message_id not in gone]
        if not sending:
            raise OperationRefusedError(
                f"nothing to redrive: every message chosen would be lost by a redrive ({len(left)}): "
                + "; ".join(entry.why for entry in left),
                "; ".join(dict.fromkeys(entry.fix for entry in left)),
            )
        for entry in left:
            plan.notes.append(f"left in the DLQ: {entry.why}. Instead: {entry.fix}")
        plan.details["jobs"] = [letter.to_dict() for letter in sending]
        plan.details["leftInDeadLetterQueue"] = [entry.to_dict() for entry in left]
        if group is None and job is None and message_id is None and not left:
            _plan_move_task(ops, held, plan, len(chosen))
            return plan
        for letter in sending:
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
        elif group is None and not held.complete:
            plan.notes.append(
                f"the peek saw {len(held.letters)} message(s), not the whole DLQ: the rest stay in it; "
                f"run {command(*argv)} again for them"
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


def plan_drop(
    ops: OpsQueue, job: str | None = None, *, message_id: str | None = None, group: str | None = None
) -> Plan:
    """The steps of ``dlq drop``: delete a job's DLQ messages (``job``), one message (``message_id``:
    a malformed body has no job id), or every message of a group (``group``). Its claim or state stays
    dead.

    Raises
    ------
    OperationRefusedError
        The DLQ holds no such message.
    """
    held = peek(ops.sqs, ops.dead_letter_queue_url, visibility_seconds=MUTATE_VISIBILITY_SECONDS)
    argv = [
        "dlq",
        "drop",
        *([job] if job is not None else []),
        *(["--message-id", message_id] if message_id else []),
        *(["--group", group] if group else []),
    ]
    plan = Plan("dlq drop", argv=argv)
    plan.on_close.append(held.release)
    chosen = _select(held.letters, group=group, job=job, message_id=message_id)
    if not chosen:
        plan.close()
        raise _none_held(ops, held, group=group, job=job, message_id=message_id)
    plan.details["jobs"] = [letter.to_dict() for letter in chosen]
    for letter in chosen:
        job_id = letter.job_id or "(none: a malformed body)"
        what = f"DLQ message {letter.message_id} of job {job_id} (group {letter.group})"

        def delete(letter: DlqMessage = letter, what: str = what) -> str:
            held.delete(letter)
            return f"deleted {what}"

        plan.add(f"delete {what}", delete)
    for job_id in dict.fromkeys(letter.job_id for letter in chosen if letter.job_id):
        plan.notes.append(
            f"job {job_id} stays dead in the tables: a later copy of it follows it to the DLQ "
            "(COPY_OF_DEAD_JOB)"
        )
    return plan
