"""The operations commands' parser and rendering: ``status``, ``groups``, ``dlq``, ``claims``, ``state``.

What each command does lives in :mod:`constructs_fifo.local.ops`; this module parses, resolves
``--stack``/``--queue`` as ``deploy`` and ``drain`` do, and renders: a ``rich`` table on a terminal,
plain lines otherwise (``key: value``, and tab-separated rows under a header line), one JSON document
with ``--json``. Every command that changes something builds its plan first, prints it, stops there
with ``--dry-run``, asks on a terminal unless ``--yes``, then prints what it did.
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, Final

from constructs_fifo.cli import render
from constructs_fifo.local.aws import AwsTarget
from constructs_fifo.local.demo.sample_app import STACK_NAME
from constructs_fifo.local.errors import LocalError, OperationRefusedError
from constructs_fifo.local.ops import STATE_MODE, OpsQueue, Plan
from constructs_fifo.local.ops.claims import plan_release, plan_reset, show_claim
from constructs_fifo.local.ops.dlq import list_dead_letters, plan_drop, plan_redrive
from constructs_fifo.local.ops.groups import plan_resume, plan_skip_gap, show_group, show_state
from constructs_fifo.local.ops.listing import list_groups
from constructs_fifo.local.ops.status import AGE_FROM_EMPTY_QUEUE, AGE_UNKNOWN, QueueStatus, queue_status
from constructs_fifo.local.stack import DeployedQueue, find_queues, select_queue

__all__ = ["OPS_COMMANDS", "add_ops_commands"]

AddOptions = Callable[..., None]

_PEEK_NOTE = (
    "SQS has no peek: the DLQ is read by receiving its messages with a 30-second visibility timeout and "
    "releasing them at once (ChangeMessageVisibility 0). Each read raises their ApproximateReceiveCount and "
    "hides them from other readers meanwhile; at most the first 10 messages of each "
    "group are seen. Where the "
    "claim table or the group's state knows the answer, it is shown beside the message."
)


#: A width no table reaches: what a table measures when nothing bounds it.
_UNBOUNDED_COLUMNS: Final = 100_000

_GROUP_HELP = "the message group id, e.g. ws#42 (`groups list` shows them)"
_JOB_HELP = "the job id (the body's jobId; `dlq list` shows the dead ones)"


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
    dlq_show.add_argument("job", metavar="JOB", help=_JOB_HELP)
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
    drop.add_argument("job", metavar="JOB", help=_JOB_HELP)

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
    reset = claim_commands.add_parser("reset", help="delete a DEAD claim, so the job may run again")
    _common(reset, add_aws, add_stack, mutates=True)
    reset.add_argument("job", metavar="JOB", help=_JOB_HELP)

    state = commands.add_parser("state", help="state mode: a group's state and bookkeeping")
    state_commands = state.add_subparsers(dest="ops_command", required=True, metavar="COMMAND")
    state_show = state_commands.add_parser(
        "show", help="the state, version, last seq, buffer, dead jobs, skips"
    )
    _common(state_show, add_aws, add_stack, mutates=False)
    state_show.add_argument("group", metavar="GROUP", help=_GROUP_HELP)

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
        skip: "State mode: give up the seqs a group waits on, as GapPolicy.SKIP_GAP would (recorded in its "
        "bookkeeping), and wake it so its buffered jobs apply." + untouched,
        dlq_list: "The DLQ's jobs: id, group, type, reason, error, attempts, dead at, and what the claim "
        "table or the group's state says. Reading moves nothing, but see below.",
        dlq_show: "One job's DLQ messages: attributes, body, and its claim or state. Reading moves "
        "nothing, but see below.",
        redrive: "Move dead jobs from the DLQ back to the queue, each group's in the DLQ's order; a "
        "message leaves the DLQ only once it is in the queue.",
        drop: "Delete a job's messages from the DLQ for good: they cannot be redriven afterwards. Its "
        "claim or state stays dead, so a later copy of the job follows it to the DLQ (COPY_OF_DEAD_JOB).",
        claim_show: "Claim mode: the job's claim item." + read_only,
        release: "Claim mode: mark an IN_FLIGHT claim whose lease expired FAILED, so the next delivery "
        "retakes it (a live lease only with --force)." + untouched,
        reset: "Claim mode: delete a DEAD claim so the job's next copy runs; runs nothing by itself "
        "(redrive the job or resume its group)." + untouched,
        state_show: "State mode: the group's state, version, last seq, buffered seqs, dead jobs and skipped "
        "ranges (GroupStateReader)." + read_only,
    }
    for parser, description in descriptions.items():
        parser.description = description


# --- output ---------------------------------------------------------------------------------------------


def _cell(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, list | dict):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return str(value)


class _Out:
    """Prints tables and key/value blocks: rich on a terminal, plain lines otherwise.

    Nothing an operator types next (a job id, a group) is ever cut: values fold onto more lines, and a
    table too wide for the terminal is printed as one key/value block per row instead.
    """

    def __init__(self) -> None:
        self.tty = sys.stdout.isatty()
        self.console = render.console()

    def pairs(self, title: str, values: Sequence[tuple[str, object]]) -> None:
        if self.tty:
            from rich.table import Table  # noqa: PLC0415 - rich is a base dependency; local to the renderer

            table = Table(title=title, show_header=False, min_width=min(len(title), self.console.width))
            table.add_column("", no_wrap=True)
            table.add_column("", overflow="fold")
            for key, value in values:
                table.add_row(key, _cell(value))
            self.console.print(table)
            return
        print(f"# {title}")
        for key, value in values:
            print(f"{key}: {_cell(value)}")

    def rows(self, title: str, columns: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
        if self.tty:
            from rich.measure import Measurement  # noqa: PLC0415
            from rich.table import Table  # noqa: PLC0415

            table = Table(title=title, min_width=min(len(title), self.console.width))
            for column in columns:
                table.add_column(column, no_wrap=True)
            for row in rows:
                table.add_row(*(_cell(value) for value in row))
            unbounded = self.console.options.update_width(_UNBOUNDED_COLUMNS)
            needed = Measurement.get(self.console, unbounded, table).maximum
            if needed <= self.console.width or not rows:
                self.console.print(table)
                return
            self.console.print(
                f"{title}: one block per row (a table is too wide for {self.console.width} columns)"
            )
            for row in rows:
                self.pairs(f"{columns[0]} {_cell(row[0])}", list(zip(columns[1:], row[1:], strict=True)))
            return
        print(f"# {title}")
        print("\t".join(columns))
        for row in rows:
            print("\t".join(_cell(value) for value in row))

    def line(self, text: str) -> None:
        if self.tty:
            self.console.print(text, markup=False)
        else:
            print(text)


def _when(epoch_ms: object) -> str | None:
    """Epoch milliseconds as ISO 8601 UTC (what the DLQ's ``deadAt`` says), for people."""
    if not isinstance(epoch_ms, int | float) or isinstance(epoch_ms, bool):
        return None
    return dt.datetime.fromtimestamp(epoch_ms / 1000, tz=dt.UTC).isoformat(timespec="seconds")


def _json(document: object) -> None:
    print(json.dumps(document, indent=2, sort_keys=True, default=str))


@functools.cache
def _session(target: AwsTarget) -> Any:
    """One boto3 session per target for the process: a session loads each service's model once (~0.3 s a
    client otherwise, and a command makes six)."""
    return target.session()


def _clients(args: argparse.Namespace) -> tuple[AwsTarget, dict[str, Any]]:
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    session = _session(target)
    return target, {
        name: target.client(name, session)
        for name in ("cloudformation", "lambda", "sqs", "dynamodb", "cloudwatch")
    }


def _connect(queue: DeployedQueue, clients: dict[str, Any]) -> OpsQueue:
    return OpsQueue(queue, clients["sqs"], clients["dynamodb"], clients["cloudwatch"])


def _find(args: argparse.Namespace) -> tuple[list[DeployedQueue], dict[str, Any]]:
    target, clients = _clients(args)
    queues = find_queues(
        args.stack,
        target=target,
        cloudformation_client=clients["cloudformation"],
        lambda_client=clients["lambda"],
        sqs_client=clients["sqs"],
    )
    return queues, clients


def _queue(args: argparse.Namespace) -> OpsQueue:
    queues, clients = _find(args)
    return _connect(select_queue(args.stack, queues, args.queue), clients)


def _run_plan(args: argparse.Namespace, make: Callable[[], Plan]) -> int:
    """Show the plan; stop at --dry-run; confirm on a terminal unless --yes; apply; say what was done."""
    plan = make()
    out = _Out()
    try:
        if not args.json:
            for note in plan.notes:
                out.line(f"note: {note}")
            for step in plan.steps:
                out.line(f"{'would ' if args.dry_run else 'will '}{step.describe}")
        if args.dry_run:
            if args.json:
                _json(plan.to_dict(dry_run=True))
            else:
                out.line("dry run: nothing was changed")
            return 0
        if sys.stdin.isatty() and sys.stdout.isatty() and not args.yes and not args.json:
            try:
                answer = input(f"{plan.command}: go ahead? [y/N] ").strip().lower()
            except EOFError:  # Ctrl-D: no answer is a no
                answer = ""
                print()
            except KeyboardInterrupt:
                print()
                out.line("nothing was changed")
                raise
            if answer not in {"y", "yes"}:
                out.line("nothing was changed")
                return 1
        try:
            plan.apply()
        finally:
            if not args.json:
                for done in plan.done:
                    out.line(f"done: {done}")
        if args.json:
            _json(plan.to_dict(dry_run=False))
    finally:
        plan.close()
    return 0


# --- commands -------------------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    queues, clients = _find(args)
    chosen = [select_queue(args.stack, queues, args.queue)] if args.queue or len(queues) <= 1 else queues
    statuses = [queue_status(_connect(queue, clients)) for queue in chosen]
    if args.json:
        _json({"stack": args.stack, "queues": [status.to_dict() for status in statuses]})
        return 0
    out = _Out()
    for status in statuses:
        out.pairs(
            f"{status.queue} ({status.mode} mode)",
            [
                (
                    "visible / in flight / delayed",
                    f"{status.visible} / {status.in_flight} / {status.delayed}",
                ),
                ("oldest message age", _age(status)),
                (
                    "oldest parked job",
                    "none"
                    if status.oldest_parked is None
                    else f"{status.oldest_parked[1]:.0f} s (group {status.oldest_parked[0]}; not in the "
                    "queue's age)",
                ),
                ("DLQ depth", status.dead_letter_depth),
                ("parked groups", ", ".join(status.parked_groups) or "none"),
                (
                    "open sequence gaps",
                    ", ".join(status.gap_groups) or ("none" if status.mode == "state" else "n/a"),
                ),
                (
                    "IN_FLIGHT claims, lease expired",
                    ", ".join(status.expired_claims) or ("none" if status.mode == "claim" else "n/a"),
                ),
                ("alarms in ALARM", ", ".join(status.alarms) or "none"),
                ("largest backlogs", ", ".join(f"{g} ({n})" for g, n in status.backlog) or "none known"),
            ],
        )
    return 0


def _age(status: QueueStatus) -> str:
    age = status.oldest_age_seconds
    if age is None:
        return f"unknown: {AGE_UNKNOWN}"
    if status.oldest_age_source == AGE_FROM_EMPTY_QUEUE:
        return "0 s (the queue is empty)"
    return f"{age:.0f} s ({status.oldest_age_source})"


def _groups(args: argparse.Namespace) -> int:
    ops = _queue(args)
    if args.ops_command == "list":
        page = list_groups(
            ops,
            parked=args.parked,
            gaps=args.gaps,
            max_items=args.max_items,
            starting_token=args.starting_token,
        )
        if args.json:
            _json(page.to_dict())
            return 0
        out = _Out()
        rows = page.rows
        columns = ["group", "status", "dead job", "reason", "kept", "last seq", "buffered"]
        cells = [[r.group, r.status, r.dead_job_id, r.reason, r.kept, r.last_seq, r.buffered] for r in rows]
        if ops.mode != STATE_MODE:  # no seq bookkeeping in claim mode
            columns, cells = columns[:5], [row[:5] for row in cells]
        out.rows(f"groups of {ops.label}", columns, cells)
        if page.next_token is not None:
            out.line(f"more groups: pass --starting-token {page.next_token}")
        return 0
    if args.ops_command == "show":
        detail = show_group(ops, args.group)
        document = detail.to_dict()
        if args.json:
            _json(document)
            return 0
        out = _Out()
        dead = document["dead"] or {}
        out.pairs(
            f"group {args.group} of {ops.label}",
            [
                ("status", document["status"]),
                ("dead job", dead.get("jobId")),
                ("type", dead.get("jobType")),
                ("reason", dead.get("reason")),
                ("error", f"{dead.get('errorType') or ''}: {dead.get('error') or ''}" if dead else None),
                ("attempts", dead.get("attempts")),
                ("parked at", _when(dead.get("parkedAt"))),
                ("kept jobs", document["keptTotal"]),
            ],
        )
        if document["kept"]:
            out.rows(
                "kept jobs, in order",
                ["seq", "job", "type", "message"],
                [[k["seq"], k["jobId"], k["jobType"], k["messageId"]] for k in document["kept"]],
            )
        if document["state"] is not None:
            _state_pairs(out, args.group, document["state"])
        for note in document["notes"]:
            out.line(f"note: {note}")
        return 0
    if args.ops_command == "resume":
        return _run_plan(args, lambda: plan_resume(ops, args.group, skip_dead=args.skip_dead))
    return _run_plan(args, lambda: plan_skip_gap(ops, args.group))


def _state_pairs(out: _Out, group: str, state: dict[str, Any]) -> None:
    out.pairs(
        f"state of group {group}",
        [
            ("version", state["version"]),
            ("last seq", state["lastSeq"]),
            ("buffered seqs", state["bufferedSeqs"]),
            ("gap age", None if state["gapAgeSeconds"] is None else f"{state['gapAgeSeconds']} s"),
            ("parked at job", state["parkedJobId"]),
            ("dead jobs", state["deadJobIds"]),
            ("skipped ranges", state["skipped"]),
            ("dead letters owed", state["deadLettersOwed"]),
            ("state", state["state"]),
        ],
    )


def _dlq(args: argparse.Namespace) -> int:
    ops = _queue(args)
    if args.ops_command in {"list", "show"}:
        group = getattr(args, "group", None)
        job = getattr(args, "job", None)
        listing = list_dead_letters(ops, group=group, job=job)
        if args.json:
            _json(listing.to_dict())
            return 0
        if args.ops_command == "show" and not listing.letters:
            raise OperationRefusedError(
                f"the dead-letter queue of {ops.label} holds no message of job {job!r}",
                "list what it holds: `constructs-fifo dlq list`",
            )
        out = _Out()
        if args.ops_command == "list":
            out.rows(
                f"dead-letter queue of {ops.label} ({listing.depth} message(s))",
                ["job", "group", "type", "reason", "error", "attempts", "dead at", "table says"],
                [
                    [
                        letter.job_id,
                        letter.group,
                        letter.job_type,
                        letter.reason,
                        f"{letter.attributes.get('errorType', '')}: {letter.attributes.get('error', '')}",
                        letter.attributes.get("attempts"),
                        letter.attributes.get("deadAt"),
                        _table_says(listing.table_view(letter)),
                    ]
                    for letter in listing.letters
                ],
            )
        else:
            for letter in listing.letters:
                document = letter.to_dict()
                out.pairs(
                    f"DLQ message {letter.message_id}",
                    [(key, document[key]) for key in sorted(document)]
                    + [(f"table: {k}", v) for k, v in listing.table_view(letter).items()],
                )
        if not listing.complete:
            out.line("note: the peek saw only part of the DLQ (the first 10 messages of each group)")
        return 0
    if args.ops_command == "redrive":
        return _run_plan(
            args,
            lambda: plan_redrive(ops, group=args.group, job=args.job, reset=args.reset, force=args.force),
        )
    return _run_plan(args, lambda: plan_drop(ops, args.job))


def _table_says(view: dict[str, Any]) -> str:
    if "claimStatus" in view:
        return f"claim {view['claimStatus'] or 'none'}"
    if "stateRemembersDead" in view:
        return "state: dead" if view["stateRemembersDead"] else "state: not dead"
    return "-"


def _claims(args: argparse.Namespace) -> int:
    ops = _queue(args)
    if args.ops_command == "show":
        shown = show_claim(ops, args.job)
        if args.json:
            _json(shown)
            return 0
        claim = shown["claim"]
        _Out().pairs(
            f"claim of job {args.job} ({shown['table']})",
            [(key, claim[key]) for key in sorted(claim)]
            + [("lease remaining (s)", shown["leaseRemainingSeconds"])],
        )
        return 0
    if args.ops_command == "release":
        return _run_plan(args, lambda: plan_release(ops, args.job, force=args.force))
    return _run_plan(args, lambda: plan_reset(ops, args.job))


def _state(args: argparse.Namespace) -> int:
    ops = _queue(args)
    shown = show_state(ops, args.group)
    if args.json:
        _json(shown)
        return 0
    _state_pairs(_Out(), args.group, shown)
    return 0


_SUGGESTED: Final = re.compile(r"`(constructs-fifo [^`]*)`")


def _same_target(args: argparse.Namespace, command: Callable[[argparse.Namespace], int]) -> int:
    """Run ``command``; a command its error suggests gets the ``--stack``/``--queue`` of this one, so
    it can be pasted as it is."""
    try:
        return command(args)
    except LocalError as error:
        words = ([f"--stack {args.stack}"] if args.stack != STACK_NAME else []) + (
            [f"--queue {args.queue}"] if getattr(args, "queue", None) else []
        )

        def complete(match: re.Match[str]) -> str:
            line = match.group(1)
            extra = [word for word in words if word.split()[0] not in line.split()]
            return f"`{' '.join([line, *extra])}`"

        error.message = _SUGGESTED.sub(complete, error.message)
        error.fix = _SUGGESTED.sub(complete, error.fix)
        raise


OPS_COMMANDS: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    name: functools.partial(_same_target, command=command)
    for name, command in {
        "status": _status,
        "groups": _groups,
        "dlq": _dlq,
        "claims": _claims,
        "state": _state,
    }.items()
}
