"""The operations commands' parser: ``status``, ``groups``, ``dlq``, ``claims``, ``state``.

Each command's own ``--help`` says what it does and what it does to the DLQ (nothing, a peek, a move,
a delete); what the commands do is :mod:`constructs_fifo.cli.operations.commands`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

__all__ = ["AddOptions", "add_ops_commands"]

AddOptions = Callable[..., None]

_PEEK_NOTE = (
    "SQS has no peek: the DLQ is read by receiving its messages with a 30-second visibility timeout and "
    "releasing them at once (ChangeMessageVisibility 0). Each read raises their ApproximateReceiveCount and "
    "hides them from other readers meanwhile; at most the first 10 messages of each "
    "group are seen. Where the "
    "claim table or the group's state knows the answer, it is shown beside the message."
)


_GROUP_HELP = "the message group id, e.g. ws#42 (`groups list` shows them)"
_JOB_HELP = "the job id (the body's jobId; `dlq list` shows the dead ones)"
_DLQ_JOB_HELP = _JOB_HELP + "; or pass --message-id instead"
_MESSAGE_ID_HELP = (
    "one DLQ message by its message id (`dlq list` shows them): the way to name a malformed body, "
    "which has no job id"
)


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number; pass e.g. 50") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is below 1; pass 1 or more")
    return value


def _common(
    parser: argparse.ArgumentParser, add_aws: AddOptions, add_stack: AddOptions, *, mutates: bool
) -> None:
    add_aws(parser)
    add_stack(parser, stack_help="deployed stack")
    parser.add_argument("--json", action="store_true", help="print one JSON document (for scripts)")
    if mutates:
        parser.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
        parser.add_argument(
            "--yes", "-y", action="store_true", help="do not ask for confirmation on a terminal"
        )


def add_ops_commands(commands: Any, *, add_aws: AddOptions, add_stack: AddOptions) -> None:
    """Register the operations commands on the top-level subparsers ``commands``."""
    status = commands.add_parser(
        "status", help="each queue's depth, DLQ, parked groups, gaps, stuck claims, alarms"
    )
    _common(status, add_aws, add_stack, mutates=False)
    status.epilog = "Without --queue, every queue of the stack."

    groups = commands.add_parser("groups", help="list, show, resume message groups; skip a sequence gap")
    group_commands = groups.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    listing = group_commands.add_parser("list", help="groups the tables know: parked, resuming, with a gap")
    _common(listing, add_aws, add_stack, mutates=False)
    listing.add_argument("--parked", action="store_true", help="only parked or resuming groups")
    listing.add_argument(
        "--gaps", action="store_true", help="only groups waiting on a sequence gap (state mode)"
    )
    listing.add_argument(
        "--max-items",
        type=_positive,
        metavar="N",
        help="list at most N groups and print a nextToken for the rest (as the AWS CLI; default: all)",
    )
    listing.add_argument(
        "--starting-token", metavar="TOKEN", help="go on where the nextToken of a previous listing ended"
    )
    listing.epilog = (
        "Reads the group table with one Scan (state mode: one item per group, so a queue with 100,000 "
        "groups lists 100,000 rows; page them with --max-items). Without --max-items the rows are sorted "
        "by group; a page comes in the table's order."
    )
    show = group_commands.add_parser(
        "show", help="why a group stopped, its kept jobs, its state (state mode)"
    )
    _common(show, add_aws, add_stack, mutates=False)
    show.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    resume = group_commands.add_parser(
        "resume", help="resume a parked group: retry its dead job, or --skip-dead"
    )
    _common(resume, add_aws, add_stack, mutates=True)
    resume.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    resume.add_argument(
        "--skip-dead", action="store_true", help="send the dead job to the DLQ instead of running it again"
    )
    hold = group_commands.add_parser("hold", help="hold a group: nothing of it starts until released")
    _common(hold, add_aws, add_stack, mutates=True)
    hold.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    hold.add_argument("--reason", default="", help="why: groups show and jobs show say it (256 characters)")
    hold.add_argument("--by", default="", help="who: groups show says it (default: user@host)")
    group_release = group_commands.add_parser(
        "release", help="release a held group: its kept jobs run in order"
    )
    _common(group_release, add_aws, add_stack, mutates=True)
    group_release.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    run_first = group_commands.add_parser(
        "run-first", help="put a job first in a held or parked group: it runs before the kept jobs"
    )
    _common(run_first, add_aws, add_stack, mutates=True)
    run_first.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    run_first.add_argument(
        "--job", required=True, metavar="FILE", help='the job as JSON: {"jobId", "type", "payload"}'
    )
    group_cancel = group_commands.add_parser(
        "cancel", help="cancel every job of a group sent before the command: none of them runs"
    )
    _common(group_cancel, add_aws, add_stack, mutates=True)
    group_cancel.add_argument("group", metavar="GROUP", help=_GROUP_HELP)
    group_cancel.add_argument("--reason", default="", help="why: jobs show says it (256 characters)")
    group_cancel.add_argument("--by", default="", help="who: jobs show says it (default: user@host)")
    group_cancel.add_argument(
        "--running",
        action="store_true",
        help="claim mode: cancel the group's running job too (a worker is told at its next heartbeat); "
        "state mode: changes nothing (a transition in flight is never committed after a cancel)",
    )
    group_cancel.add_argument(
        "--up-to-seq", type=int, metavar="N", help="state mode: cancel only the jobs whose seq is at most N"
    )
    skip = group_commands.add_parser(
        "skip-gap", help="state mode: give up a group's missing seqs, as SKIP_GAP"
    )
    _common(skip, add_aws, add_stack, mutates=True)
    skip.add_argument("group", metavar="GROUP", help=_GROUP_HELP)

    dlq = commands.add_parser("dlq", help="list, show, redrive, drop dead-letter messages")
    dlq_commands = dlq.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    dlq_list = dlq_commands.add_parser(
        "list", help="the DLQ's jobs: group, type, reason, error", epilog=_PEEK_NOTE
    )
    _common(dlq_list, add_aws, add_stack, mutates=False)
    dlq_list.add_argument("--group", metavar="GROUP", help="only this group's messages")
    dlq_show = dlq_commands.add_parser(
        "show", help="one job's DLQ messages, body and claim or state", epilog=_PEEK_NOTE
    )
    _common(dlq_show, add_aws, add_stack, mutates=False)
    dlq_show.add_argument("job", metavar="JOB", nargs="?", help=_DLQ_JOB_HELP)
    dlq_show.add_argument("--message-id", metavar="MESSAGE_ID", help=_MESSAGE_ID_HELP)
    redrive = dlq_commands.add_parser(
        "redrive",
        help="move dead jobs back to the queue, keeping each group's order",
        epilog="Without --group/--job: StartMessageMoveTask of the whole DLQ. With them: received, "
        "sent again in the DLQ's order with the same group and a deduplication id per DLQ message, "
        "and deleted from the DLQ only after the send. " + _PEEK_NOTE,
    )
    _common(redrive, add_aws, add_stack, mutates=True)
    which = redrive.add_mutually_exclusive_group()
    which.add_argument("--group", metavar="GROUP", help="only this group's messages, in order")
    which.add_argument("--job", metavar="JOB", help="only this job's messages")
    which.add_argument("--message-id", metavar="MESSAGE_ID", help="only this DLQ message (`dlq list`)")
    redrive.add_argument(
        "--reset",
        action="store_true",
        help="first make each dead job runnable (claim mode: its DEAD claim; state mode: its death)",
    )
    redrive.add_argument(
        "--force", action="store_true", help="redrive jobs that already succeeded too (they are skipped)"
    )
    drop = dlq_commands.add_parser("drop", help="delete a job's messages from the DLQ (it stays dead)")
    _common(drop, add_aws, add_stack, mutates=True)
    drop.add_argument("job", metavar="JOB", nargs="?", help=_DLQ_JOB_HELP)
    drop.add_argument("--message-id", metavar="MESSAGE_ID", help=_MESSAGE_ID_HELP)
    drop.add_argument("--group", metavar="GROUP", help="every DLQ message of this group")

    claims = commands.add_parser("claims", help="claim mode: show, release, reset one job's claim")
    claim_commands = claims.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    claim_show = claim_commands.add_parser(
        "show", help="the job's claim: status, owner, lease, attempts, error"
    )
    _common(claim_show, add_aws, add_stack, mutates=False)
    claim_show.add_argument("job", metavar="JOB", help=_JOB_HELP)
    release = claim_commands.add_parser("release", help="end an IN_FLIGHT claim whose lease expired (FAILED)")
    _common(release, add_aws, add_stack, mutates=True)
    release.add_argument("job", metavar="JOB", help=_JOB_HELP)
    release.add_argument(
        "--force", action="store_true", help="release a live lease too (its worker may run on)"
    )
    reset = claim_commands.add_parser("reset", help="reset a DEAD claim, so the job may run again")
    _common(reset, add_aws, add_stack, mutates=True)
    reset.add_argument("job", metavar="JOB", help=_JOB_HELP)

    state = commands.add_parser("state", help="state mode: a group's state and bookkeeping")
    state_commands = state.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    state_show = state_commands.add_parser(
        "show", help="the state, version, last seq, buffer, dead jobs, skips"
    )
    _common(state_show, add_aws, add_stack, mutates=False)
    state_show.add_argument("group", metavar="GROUP", help=_GROUP_HELP)

    pace = commands.add_parser("pace", help="the queue's pace limit: show it, change it without a deploy")
    pace_commands = pace.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    pace_show = pace_commands.add_parser("show", help="the pace override in force, if any")
    _common(pace_show, add_aws, add_stack, mutates=False)
    pace_set = pace_commands.add_parser("set", help="override the construct's pace (or --clear it)")
    _common(pace_set, add_aws, add_stack, mutates=True)
    pace_set.add_argument("--jobs", type=int, help="runs per period, for each value of the key")
    pace_set.add_argument("--per", type=int, metavar="SECONDS", help="the period, in seconds")
    pace_set.add_argument("--burst", type=int, help="runs at once on an idle key (default: --jobs)")
    pace_set.add_argument("--clear", action="store_true", help="drop the override: the construct's pace")
    pace_set.add_argument("--by", default="", help="who: pace show says it (default: user@host)")

    untouched = " The DLQ is not touched."
    read_only = " Read-only: nothing is received from the queue or the DLQ."
    descriptions = {
        status: "Each queue's depth, age of the oldest message, DLQ depth, parked groups, open sequence "
        "gaps, expired IN_FLIGHT claims, alarms in ALARM and largest known backlogs." + read_only,
        listing: "The groups the group table knows: parked, resuming, waiting on a gap, and (state mode) "
        "every group with a state." + read_only,
        show: "Why a group stopped: its dead job, reason, error, attempts and when; its first kept jobs in "
        "order; in state mode its state and bookkeeping." + read_only,
        resume: "Resume a parked group. Without --skip-dead its dead job runs again first (claim mode: its "
        "DEAD claim is reset); the DLQ is not touched. With --skip-dead the dead job is sent to the DLQ "
        "(its body as sent, with its triage attributes) and is never run; the kept jobs then run in order.",
        hold: "Hold a group without a dead job: from its next batch on nothing of it starts; its jobs are "
        "kept in order in the group table (a parked group's place). Claim mode needs the PARK policy."
        + untouched,
        group_release: "Release a held group: its kept jobs replay first, in order, then what was sent later."
        + untouched,
        run_first: "Put a job at the head of a held or parked group (an agent's corrected patch): when "
        "the group is released or resumed it runs first, before the jobs the group keeps." + untouched,
        group_cancel: "Cancel every job of a group sent before the command: none of them runs (state mode: "
        "none is applied; their seqs close). A live group's queued jobs are cancelled as they arrive, up to "
        "a marker message the command sends through the group; a held or parked group's kept jobs at once "
        "(its dead job is left to groups resume). Jobs sent later run. --running also cancels the job "
        "running now (claim mode); --up-to-seq N only the jobs with a seq at most N (state mode)."
        + untouched,
        skip: "State mode: give up the seqs a group waits on, as GapPolicy.SKIP_GAP would (recorded in its "
        "bookkeeping), and wake it so its buffered jobs apply." + untouched,
        dlq_list: "The DLQ's jobs: id, group, type, reason, error, attempts, dead at, and what the claim "
        "table or the group's state says. Reading moves nothing, but see below.",
        dlq_show: "One job's DLQ messages (or one message, --message-id): attributes, body, and its "
        "claim or state. Reading moves nothing, but see below.",
        redrive: "Move dead jobs from the DLQ back to the queue, each group's in the DLQ's order; a "
        "message leaves the DLQ only once it is in the queue. A message whose copy could never run (a "
        "malformed body, a job already done or whose seq was given up) stays in the DLQ, named with its "
        "fix (--force sends it anyway); --job or --message-id of such a message is refused.",
        drop: "Delete a job's messages (or one message, --message-id, or a group's, --group) from the DLQ "
        "for good: they cannot be redriven afterwards. Its "
        "claim or state stays dead, so a later copy of the job follows it to the DLQ (COPY_OF_DEAD_JOB).",
        claim_show: "Claim mode: the job's claim item." + read_only,
        release: "Claim mode: mark an IN_FLIGHT claim whose lease expired FAILED, so the next delivery "
        "retakes it (a live lease only with --force)." + untouched,
        reset: "Claim mode: reset a DEAD claim (FAILED, no attempt used, its runs kept as earlier attempts) "
        "so the job's next copy runs; runs nothing by itself "
        "(redrive the job or resume its group)." + untouched,
        state_show: "State mode: the group's state, version, last seq, buffered seqs, dead jobs and skipped "
        "ranges (GroupStateReader)." + read_only,
        pace_show: "The queue's pace override (docs/steering.md, Pace a key); none: the construct's pace "
        "applies." + read_only,
        pace_set: "Override the construct's pace (jobs, period, burst; never its key) without a deploy: the "
        "consumers read it within a minute. --clear drops it." + untouched,
    }
    for parser, description in descriptions.items():
        parser.description = description
