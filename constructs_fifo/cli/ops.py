"""The operations commands: ``status``, ``groups``, ``dlq``, ``claims``, ``state``.

What each command does lives in :mod:`constructs_fifo.local.ops`; the parser is
:mod:`~constructs_fifo.cli.ops_parser`, the printing :mod:`~constructs_fifo.cli.ops_output` (a table on
a terminal, plain lines otherwise, one JSON document with ``--json``). This module resolves
``--stack``/``--queue`` as ``deploy`` and ``drain`` do and puts the three together. Every command
that changes something builds its plan first, prints it, stops there with ``--dry-run``, asks on a
terminal unless ``--yes``, then prints what it did.
"""

from __future__ import annotations

import argparse
import functools
import re
import sys
from collections.abc import Callable
from typing import Any, Final

from constructs_fifo.cli.ops_output import Output, print_json, when
from constructs_fifo.cli.ops_parser import add_ops_commands
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
    out = Output()
    try:
        if not args.json:
            for note in plan.notes:
                out.line(f"note: {note}")
            for step in plan.steps:
                out.line(f"{'would ' if args.dry_run else 'will '}{step.describe}")
        if args.dry_run:
            if args.json:
                print_json(plan.to_dict(dry_run=True))
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
            print_json(plan.to_dict(dry_run=False))
    finally:
        plan.close()
    return 0


# --- commands -------------------------------------------------------------------------------------------


def _status(args: argparse.Namespace) -> int:
    queues, clients = _find(args)
    chosen = [select_queue(args.stack, queues, args.queue)] if args.queue or len(queues) <= 1 else queues
    statuses = [queue_status(_connect(queue, clients)) for queue in chosen]
    if args.json:
        print_json({"stack": args.stack, "queues": [status.to_dict() for status in statuses]})
        return 0
    out = Output()
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
            print_json(page.to_dict())
            return 0
        out = Output()
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
            print_json(document)
            return 0
        out = Output()
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
                ("parked at", when(dead.get("at"))),
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


def _state_pairs(out: Output, group: str, state: dict[str, Any]) -> None:
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
            print_json(listing.to_dict())
            return 0
        if args.ops_command == "show" and not listing.letters:
            raise OperationRefusedError(
                f"the dead-letter queue of {ops.label} holds no message of job {job!r}",
                "list what it holds: `constructs-fifo dlq list`",
            )
        out = Output()
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
                        f"{letter.attributes.error_type or ''}: {letter.attributes.error or ''}",
                        letter.attributes.attempts,
                        letter.attributes.dead_at,
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
            print_json(shown)
            return 0
        claim = shown["claim"]
        Output().pairs(
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
        print_json(shown)
        return 0
    _state_pairs(Output(), args.group, shown)
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
