"""``groups show``, ``groups resume``, ``groups skip-gap``, ``state show``.

What a group is doing, from the tables that know it: its park header and kept records
(:class:`~constructs_fifo.client.ParkedGroups`, both modes) and, in state mode, its state item
(:class:`~constructs_fifo.client.state_reader.GroupStateReader` for the snapshot; the runtime's store
for the bookkeeping's detail: buffered ``seq`` values, dead ids, skipped ranges). SQS knows nothing
per group (it cannot even receive from a chosen one), so a group the tables do not mention is live.

``groups list`` is :mod:`.listing` (one Scan of the group table, paged as the AWS CLI pages).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from constructs_fifo.client.parked import GroupNotParkedError
from constructs_fifo.ops.dead_letters import decode_body
from constructs_fifo.ops.errors import OperationRefusedError
from constructs_fifo.ops.plan import Plan, command
from constructs_fifo.ops.state_edits import skip_gap, skip_gap_range
from constructs_fifo.ops.target import STATE_MODE
from constructs_fifo.runtime.constants import GROUP_ATTR_GROUP, GROUP_ATTR_SK, SK_KEPT_PREFIX, DeadReason
from constructs_fifo.runtime.dead_jobs.parking import CANCELLING, PARKED, ParkHeader
from constructs_fifo.runtime.dead_jobs.record import encode_dead_job

if TYPE_CHECKING:  # pragma: no cover - typing only
    from constructs_fifo.ops.target import OpsQueue
    from constructs_fifo.runtime.dead_jobs.parking import KeptRecord

__all__ = [
    "KEPT_SHOWN",
    "GroupDetail",
    "kept_count",
    "plan_resume",
    "plan_skip_gap",
    "show_group",
    "show_state",
]

#: Kept jobs ``groups show`` lists (the first ones, in order).
KEPT_SHOWN: Final = 10
#: Parked groups a refusal names as close to a mistyped one (more when equally close), and how close
#: (``difflib``'s ratio, its own default cutoff).
CLOSE_SHOWN: Final = 3
CLOSE_CUTOFF: Final = 0.6


def kept_count(ops: OpsQueue, group: str) -> int:
    """How many kept records the group has (a COUNT Query: the items are not returned)."""
    table = ops.deployed.group_table
    if not table:
        return 0
    params: dict[str, Any] = {
        "TableName": table,
        "KeyConditionExpression": "#group = :group AND begins_with(#sk, :kept)",
        "ExpressionAttributeNames": {"#group": GROUP_ATTR_GROUP, "#sk": GROUP_ATTR_SK},
        "ExpressionAttributeValues": {":group": {"S": group}, ":kept": {"S": SK_KEPT_PREFIX}},
        "Select": "COUNT",
        "ConsistentRead": True,
    }
    total = 0
    while True:
        response = ops.dynamodb.query(**params)
        total += int(response.get("Count", 0))
        if "LastEvaluatedKey" not in response:
            return total
        params["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def _str(value: object) -> str | None:
    return None if value in (None, "") else str(value)


@dataclass
class GroupDetail:
    """``groups show``: why the group stopped and what it keeps; its state's bookkeeping in state mode."""

    group: str
    mode: str
    header: ParkHeader | None
    kept: list[KeptRecord]
    kept_total: int
    state: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        header = self.header
        return {
            "group": self.group,
            "mode": self.mode,
            "status": "LIVE" if header is None else header.status,
            "dead": None if header is None else encode_dead_job(header.dead),
            "keptTotal": self.kept_total,
            "kept": [_kept_dict(kept) for kept in self.kept],
            "state": self.state,
            "notes": self.notes,
        }


def _kept_dict(kept: KeptRecord) -> dict[str, Any]:
    """One kept job: its place among the group's kept records (``position``, the order they replay
    in) and the job's own ``seq`` when its body carries one (state mode's sequence)."""
    body = decode_body(str(kept.record.get("body", "")))
    seq = body.get("seq")
    return {
        "position": kept.seq,
        "seq": seq if isinstance(seq, int) and not isinstance(seq, bool) else None,
        "messageId": kept.record.get("messageId"),
        "jobId": body.get("jobId"),
        "jobType": body.get("type"),
    }


def _state_view(ops: OpsQueue, group: str) -> dict[str, Any]:
    """The state item's snapshot (``GroupStateReader``) and its bookkeeping's detail."""
    reader = ops.state_reader
    states = ops.states
    assert reader is not None and states is not None  # state mode, checked by the caller
    snapshot = reader.snapshot(group)
    book = states.load([group])[group].book
    now_ms = ops.now_ms()
    return {
        "version": snapshot.version,
        "updatedAtMs": snapshot.updated_at_ms,
        "lastSeq": snapshot.last_seq,
        "bufferedSeqs": [entry.seq for entry in book.buffer],
        "bufferedJobs": [entry.job_id for entry in book.buffer],
        "gapOpenSinceMs": snapshot.gap_open_since_ms,
        "gapAgeSeconds": None
        if snapshot.gap_open_since_ms is None
        else round((now_ms - snapshot.gap_open_since_ms) / 1000, 1),
        "parkedJobId": None if book.parked is None else book.parked.job_id,
        "deadJobIds": list(book.dead),
        "dead": [
            {
                "jobId": e.job_id,
                "reason": e.reason.value,
                "errorType": e.error_type,
                "error": e.error,
                "attempts": e.attempts,
                "seq": e.seq,
                "atMs": e.at_ms,
            }
            for e in book.dead_entries
        ],
        "attempts": dict(book.attempts),
        "skipped": [{"first": r.first, "last": r.last, "atMs": r.at_ms} for r in book.skipped],
        "rememberedJobIds": len(book.applied),
        "deadLettersOwed": len(book.owed),
        "state": snapshot.state,
    }


def show_group(ops: OpsQueue, group: str) -> GroupDetail:
    """Why ``group`` stopped (dead job, reason, error, attempts, when), its first kept jobs, its state."""
    operator = ops.parked
    header = operator.get(group) if operator is not None else None
    kept = operator.kept(group, limit=KEPT_SHOWN) if operator is not None and header is not None else []
    detail = GroupDetail(group, ops.mode, header, kept, kept_count(ops, group) if header is not None else 0)
    if ops.mode == STATE_MODE:
        detail.state = _state_view(ops, group)
    if header is None and detail.state is not None and detail.state["version"] == 0:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} has no state item and is not parked: no job of it has run"
            + _did_you_mean(ops, group),
            f"check the group id ({command('groups', 'list')} lists the groups with a state)",
        )
    close = _did_you_mean(ops, group) if header is None and ops.mode != STATE_MODE else ""
    if close:  # claim mode keeps nothing of a live group: a parked one of a close name is likely meant
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is not parked (no park header in the group table; claim "
            f"mode keeps nothing about a live group, so a mistyped id reads the same){close}",
            f"list the parked groups: {command('groups', 'list', '--parked')}",
        )
    if header is not None and header.status == CANCELLING:
        detail.notes.append(
            f"its jobs sent before `groups cancel` are cancelled as they arrive, until its marker "
            f"{header.dead.message_id}; then it is live (jobs sent after the cancel run)"
        )
    if header is None and (detail.state is None or not detail.state["bufferedSeqs"]):
        detail.notes.append(
            "the tables hold nothing that stops this group: it is live"
            + (
                " (claim mode keeps nothing about a group that is not parked, so a mistyped id reads "
                "the same)"
                if ops.mode != STATE_MODE
                else ""
            )
        )
    return detail


def _did_you_mean(ops: OpsQueue, group: str) -> str:
    """``; parked groups with a close name: ws#42, ws#24`` naming the parked groups closest to ``group``
    (a typo), or ``""``: the closest :data:`CLOSE_SHOWN`, and every group as close as the last of them
    (equally close groups are named together or not at all)."""
    operator = ops.parked
    if operator is None:
        return ""
    scored = sorted(
        (-difflib.SequenceMatcher(None, group, header.group).ratio(), header.group)
        for header in operator.list_groups()
    )
    close = [(score, name) for score, name in scored if -score >= CLOSE_CUTOFF]
    if len(close) > CLOSE_SHOWN:
        last = close[CLOSE_SHOWN - 1][0]
        close = [(score, name) for score, name in close if score <= last]
    return f"; parked groups with a close name: {', '.join(name for _, name in close)}" if close else ""


def show_state(ops: OpsQueue, group: str) -> dict[str, Any]:
    """``state show``: the group's state and bookkeeping (state mode only)."""
    ops.require_state_mode("state show", group=group)
    view = _state_view(ops, group)
    operator = ops.parked
    if view["version"] == 0 and (operator is None or operator.get(group) is None):
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} has no state item: no job of it has run"
            + _did_you_mean(ops, group),
            f"check the group id ({command('groups', 'list')} lists the groups with a state)",
        )
    return {"group": group, **view}


def plan_resume(ops: OpsQueue, group: str, *, skip_dead: bool = False) -> Plan:
    """The steps of ``groups resume``: :meth:`ParkedGroups.resume` (retry, or skip to the DLQ).

    Raises
    ------
    OperationRefusedError
        The group is not parked (no header), or the queue has no group table (the CONTINUE policy).
    """
    operator = ops.parked
    header = operator.get(group) if operator is not None else None
    if operator is None or header is None:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is not parked (no park header in the group table)"
            + _did_you_mean(ops, group),
            f"list the parked groups: {command('groups', 'list', '--parked')}",
        )
    malformed = header.dead.reason == DeadReason.MALFORMED or header.dead_job_id is None
    job = header.dead_job_id or f"(none: message {header.dead_message_id}, a malformed body)"
    if malformed and not skip_dead and header.status == PARKED:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} is parked at message {header.dead_message_id}, whose body is "
            "malformed (no job the runtime can run): retried, it dies again at once and parks the group "
            "again",
            f"skip it: {command('groups', 'resume', group, '--skip-dead')} (it goes to the DLQ, the kept "
            "jobs behind it run in order)",
        )
    plan = Plan(
        "groups resume",
        argv=["groups", "resume", group, *(["--skip-dead"] if skip_dead else [])],
        details={"group": group, "skipDead": skip_dead, "deadJobId": header.dead_job_id},
    )
    first = operator.kept(group, limit=1)
    dead_is_kept = bool(first) and first[0].record.get("messageId") == header.dead_message_id
    behind = kept_count(ops, group) - (1 if dead_is_kept else 0)  # the kept jobs after the dead one
    if header.status != PARKED:
        plan.notes.append(f"group {group} is already {header.status}: only a new wake-up message is sent")
    elif skip_dead:
        plan.notes.append(
            f"job {job} goes to the DLQ and is not run; the group goes on without it (its "
            "effect never happens)"
        )
    else:
        plan.notes.append(f"job {job} runs again first: fix what killed it, or it parks the group again")
    action = f"send dead job {job} to the DLQ" if skip_dead else f"retry dead job {job}"
    describe = (
        f"resume group {group}: {action}, then run the {behind} kept job(s) behind it in order, before "
        "anything sent later"
    )
    plan.details["keptBehind"] = behind

    def resume() -> str:
        try:
            result = operator.resume(group, skip_dead=skip_dead)
        except GroupNotParkedError as exc:
            raise OperationRefusedError(
                str(exc), f"list the parked groups: {command('groups', 'list', '--parked')}"
            ) from exc
        plan.details["wakeUpMessageId"] = result.wake_up_message_id
        plan.details["claimReset"] = result.claim_reset
        skipped = (
            f"job {result.skipped_job_id}"
            if result.skipped_job_id
            else f"message {result.skipped_message_id} (a malformed body)"
            if result.skipped_message_id
            else "nothing new (the dead job was sent before, or the runtime sends it from the buffer)"
        )
        what = f"sent {skipped} to the DLQ" if skip_dead else "retrying the dead job"
        return f"resumed group {group} ({what}; wake-up message {result.wake_up_message_id})"

    plan.add(describe, resume)
    return plan


def plan_skip_gap(ops: OpsQueue, group: str) -> Plan:
    """The steps of ``groups skip-gap`` (state mode): see :func:`~.state_edits.skip_gap`.

    Raises
    ------
    OperationError
        Claim mode.
    OperationRefusedError
        The group waits on no gap.
    """
    states = ops.require_state_mode("groups skip-gap", group=group)
    group_state = states.load([group])[group]
    missing = skip_gap_range(group_state)
    if missing is None:
        raise OperationRefusedError(
            f"group {group!r} of {ops.label} waits on no sequence gap "
            f"(last seq {group_state.book.last_seq}, {len(group_state.book.buffer)} buffered)",
            f"list the groups with gaps: {command('groups', 'list', '--gaps')}",
        )
    first, last = missing
    plan = Plan(
        "groups skip-gap",
        argv=["groups", "skip-gap", group],
        details={"group": group, "firstSkipped": first, "lastSkipped": last},
    )
    plan.notes.append(
        f"seq {first}..{last} are given up for good: if they arrive later they are skipped as duplicates"
    )

    def run() -> str:
        skipped = skip_gap(states, ops.sqs, ops.deployed.queue_url, group)
        return (
            f"gave up seq {skipped.first}..{skipped.last} of group {group} (recorded in its "
            "bookkeeping) and sent "
            "a wake-up message: the runtime applies the buffered jobs"
        )

    plan.add(f"give up seq {first}..{last} of group {group} and wake it (the buffered jobs then apply)", run)
    return plan
