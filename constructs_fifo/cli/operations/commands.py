"""The operations commands: ``status``, ``groups``, ``dlq``, ``claims``, ``state``.

What each command does lives in :mod:`constructs_fifo.ops`; the parser is
:mod:`~constructs_fifo.cli.operations.parser`, the printing :mod:`~constructs_fifo.cli.operations.output`
(a table on a terminal, plain lines otherwise, one JSON document with ``--json``). This module resolves
``--stack``/``--queue`` as ``deploy`` and ``drain`` do and puts the three together. Every command
that changes something builds its plan first, prints it, stops there with ``--dry-run``, then
confirms (:func:`_confirmed`), then prints what it did.

The confirmation rule is one an operator can predict from where the command's input comes from: with
``--yes`` it acts; otherwise, when stdin is a terminal it asks (the question and the plan it asks about
go to stderr with ``--json``, so stdout holds the JSON document alone, and ``... | tee incident.log``
still asks); without a terminal on stdin (a script, cron, a pipe into the command) it refuses, exit 1,
naming ``--yes`` and ``--dry-run``: a script that meant to act says so.
"""

from __future__ import annotations

import argparse
import functools
import sys
from collections.abc import Callable
from typing import Any, Final

from constructs_fifo.cli.json_output import Verbatim, print_json
from constructs_fifo.cli.operations.fix import complete_commands
from constructs_fifo.cli.operations.output import Output, when
from constructs_fifo.cli.operations.parser import add_ops_commands
from constructs_fifo.ops import STATE_MODE, OpsQueue, Plan
from constructs_fifo.ops.claims import plan_release, plan_reset, show_claim
from constructs_fifo.ops.dlq import list_dead_letters, plan_drop, plan_redrive
from constructs_fifo.ops.errors import OperationError, OperationRefusedError
from constructs_fifo.ops.groups import plan_resume, plan_skip_gap, show_group, show_state
from constructs_fifo.ops.listing import list_groups
from constructs_fifo.ops.plan import command
from constructs_fifo.ops.status import AGE_FROM_EMPTY_QUEUE, AGE_UNKNOWN, QueueStatus, queue_status
from constructs_fifo.ops.steering import groups as holds
from constructs_fifo.ops.steering.jobs import default_by, plan_cancel
from constructs_fifo.ops.steering.pace import plan_set_pace, show_pace
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import DeployedQueue, find_queues, select_queue
from constructs_fifo.stacks.errors import CommandError

__all__ = ["OPS_COMMANDS", "add_ops_commands", "cancel_job"]


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


#: What a read prints for one queue: its ``--json`` document (printed by :func:`_read_each`), after it
#: printed its text itself.
Read = Callable[[argparse.Namespace, OpsQueue], Any]


def _read_each(args: argparse.Namespace, read: Read) -> int:
    """Run a read-only command on the queue ``--queue`` names, or on every queue of the stack (as
    ``status`` does), each block titled by its queue; a queue the read does not apply to (the other
    mode) or that holds nothing of the id is said in a note, and refused only when every queue is.

    ``--json``: one queue's document as it is; several: ``{"stack": ..., "queues": [{"queue": label,
    ...}, ...]}``, with ``notes`` for the queues that had nothing.
    """
    queues, clients = _find(args)
    if args.queue or len(queues) <= 1:
        document = read(args, _connect(select_queue(args.stack, queues, args.queue), clients))
        if args.json:
            print_json(document)
        return 0
    documents: list[dict[str, Any]] = []
    refusals: list[tuple[str, CommandError]] = []
    for queue in queues:
        try:
            document = read(args, _connect(queue, clients))
        except (OperationError, OperationRefusedError) as refused:
            refusals.append((queue.label, refused))
            continue
        documents.append({"queue": queue.label, **(document or {})})
    notes = [
        refused.message if label in refused.message else f"{label}: {refused.message}"
        for label, refused in refusals
    ]
    if not documents:  # refused on every queue: each queue's reason, the first fix
        first = refusals[0][1]
        if len(refusals) == 1:
            raise first
        refused_any = any(isinstance(refused, OperationRefusedError) for _, refused in refusals)
        raise (OperationRefusedError if refused_any else OperationError)("; ".join(notes), first.fix)
    if args.json:
        print_json({"stack": args.stack, "queues": documents, "notes": notes})
    else:
        for note in notes:
            Output().line(f"note: {note}")
    return 0


def _plan_lines(plan: Plan, *, dry_run: bool) -> list[str]:
    return [f"note: {note}" for note in plan.notes] + [
        f"{'would ' if dry_run else 'will '}{step.describe}" for step in plan.steps
    ]


def _confirmed(args: argparse.Namespace, plan: Plan, out: Output) -> bool:
    """Whether to apply ``plan`` (the module docstring's rule); ``False`` when the operator said no.

    Raises
    ------
    OperationRefusedError
        No ``--yes`` and no terminal on stdin: nobody can be asked.
    """
    if args.yes:
        return True
    if not sys.stdin.isatty():
        raise OperationRefusedError(
            f"`{plan.command}` changes the queue and asks first, and stdin is not a terminal (a script, "
            "a pipe): there is nobody to ask; nothing was changed",
            f"pass --yes to act without asking ({command(*plan.argv, '--yes')}), or --dry-run to see what "
            f"it would do ({command(*plan.argv, '--dry-run')})",
        )
    if args.json:  # stdout holds the JSON document alone: the plan asked about goes with the question
        for line in _plan_lines(plan, dry_run=False):
            print(line, file=sys.stderr)
    print(f"{plan.command}: go ahead? [y/N] ", end="", file=sys.stderr, flush=True)
    try:
        answer = input("").strip().lower()
    except EOFError:  # Ctrl-D: no answer is a no
        answer = ""
        print(file=sys.stderr)
    except KeyboardInterrupt:
        print(file=sys.stderr)
        out.line("nothing was changed")
        raise
    if answer in {"y", "yes"}:
        return True
    out.line("nothing was changed")
    return False


def _run_plan(args: argparse.Namespace, make: Callable[[], Plan]) -> int:
    """Show the plan; stop at --dry-run; confirm (:func:`_confirmed`); apply; say what was done."""
    plan = make()
    out = Output()
    try:
        if not args.json:
            for line in _plan_lines(plan, dry_run=args.dry_run):
                out.line(line)
        if args.dry_run:
            if args.json:
                print_json(plan.to_dict(dry_run=True))
            else:
                out.line("dry run: nothing was changed")
            return 0
        if not _confirmed(args, plan, out):
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
                ("resuming groups", ", ".join(status.resuming_groups) or "none"),
                (
                    "held groups",
                    ", ".join(f"{group} ({age:.0f} s)" for group, age in status.held_groups) or "none",
                ),
                (
                    "open sequence gaps",
                    ", ".join(status.gap_groups) or ("none" if status.mode == "state" else "n/a"),
                ),
                (
                    "IN_FLIGHT claims, lease expired",
                    ", ".join(status.expired_claims) or ("none" if status.mode == "claim" else "n/a"),
                ),
                ("cancelled jobs (remembered)", status.cancelled_jobs),
                ("pace", _pace_line(status)),
                ("alarms in ALARM", ", ".join(status.alarms) or "none"),
                ("largest backlogs", ", ".join(f"{g} ({n})" for g, n in status.backlog) or "none known"),
                (
                    "staging queues (DLQ)",
                    ", ".join(
                        f"{staged.queue_name} {staged.depth} ({staged.dead_letter_queue_name} "
                        f"{staged.dead_letter_depth})"
                        for staged in status.staging
                    )
                    or "none",
                ),
            ],
        )
    return 0


def _pace_line(status: QueueStatus) -> str:
    """``status``'s pace line: the limit in force, per key value, and where it comes from."""
    if not isinstance(status.pace, dict):
        return status.pace or "not paced"
    construct, override = status.pace["construct"], status.pace["override"]
    numbers = override or construct
    limit = f"{numbers['jobs']} jobs per {numbers['period_seconds']} s, bursts of {numbers['burst']}"
    source = "override (pace set)" if override else "the construct's"
    return f"{limit} per {construct['key']} ({source})"


def _age(status: QueueStatus) -> str:
    age = status.oldest_age_seconds
    if age is None:
        return f"unknown: {AGE_UNKNOWN}"
    if status.oldest_age_source == AGE_FROM_EMPTY_QUEUE:
        return "0 s (the queue is empty)"
    return f"{age:.0f} s ({status.oldest_age_source})"


def _groups(args: argparse.Namespace) -> int:
    if args.ops_command == "list":
        if args.max_items is not None or args.starting_token is not None:
            document = _list_groups(args, _queue(args))  # a page is one queue's: paging needs --queue
            if args.json:
                print_json(document)
            return 0
        return _read_each(args, _list_groups)
    if args.ops_command == "show":
        return _read_each(args, _show_group)
    ops = _queue(args)
    if args.ops_command == "resume":
        return _run_plan(args, lambda: plan_resume(ops, args.group, skip_dead=args.skip_dead))
    if args.ops_command in _STEER_GROUP:
        return _run_plan(args, lambda: _STEER_GROUP[args.ops_command](ops, args))
    return _run_plan(args, lambda: plan_skip_gap(ops, args.group))


def _list_groups(args: argparse.Namespace, ops: OpsQueue) -> Any:
    page = list_groups(
        ops,
        parked=args.parked,
        gaps=args.gaps,
        max_items=args.max_items,
        starting_token=args.starting_token,
    )
    if args.json:
        return page.to_dict()
    out = Output()
    rows = page.rows
    columns = ["group", "status", "dead job", "reason", "kept", "last seq", "buffered"]
    cells = [[r.group, r.status, r.dead_job_id, r.reason, r.kept, r.last_seq, r.buffered] for r in rows]
    if ops.mode != STATE_MODE:  # no seq bookkeeping in claim mode
        columns, cells = columns[:5], [row[:5] for row in cells]
    out.rows(f"groups of {ops.label}", columns, cells)
    if page.next_token is not None:
        out.line(f"more groups: pass --starting-token {page.next_token}")
    return None


def _show_group(args: argparse.Namespace, ops: OpsQueue) -> Any:
    detail = show_group(ops, args.group)
    document = detail.to_dict()
    if args.json:
        return {**document, "state": _users(document["state"])}
    out = Output()
    dead = document["dead"] or {}
    kept = document["kept"]
    rows = [("status", document["status"]), *_stop_rows(dead, ops), _kept_row(document, kept)]
    out.pairs(f"group {args.group} of {ops.label}", rows)
    if kept:
        state_mode = ops.mode == STATE_MODE  # a job's seq orders it in state mode only
        out.rows(
            "kept jobs, in order",
            ["position", *(["seq"] if state_mode else []), "job", "type", "message"],
            [
                [
                    k["position"],
                    *([k["seq"]] if state_mode else []),
                    k["jobId"],
                    k["jobType"],
                    k["messageId"],
                ]
                for k in kept
            ],
        )
        if document["keptTotal"] > len(kept):
            out.line(
                f"... and {document['keptTotal'] - len(kept)} more kept job(s), in order (resuming the "
                "group replays them all)"
            )
    if document["state"] is not None:
        _state_pairs(out, args.group, document["state"])
    for note in document["notes"]:
        out.line(f"note: {note}")
    return None


def _stop_rows(dead: dict[str, Any], ops: OpsQueue) -> list[tuple[str, object]]:
    """What stopped the group: an operator's hold (no message: who, why, when), or a dead job."""
    if dead and not dead.get("jobId") and not dead.get("messageId"):  # a steering header: a hold
        return [
            ("held by", dead.get("errorType")),
            ("reason", dead.get("error")),
            ("held at", when(dead.get("at"), now_ms=ops.now_ms())),
        ]
    malformed = bool(dead) and not dead.get("jobId")
    return [
        (
            "dead job",
            f"none: message {dead.get('messageId')} has a malformed body (no job id)"
            if malformed
            else dead.get("jobId"),
        ),
        ("type", "unknown (a malformed body)" if malformed else dead.get("jobType")),
        ("reason", dead.get("reason")),
        ("error", f"{dead.get('errorType') or ''}: {dead.get('error') or ''}" if dead else None),
        ("attempts", dead.get("attempts")),
        ("parked at", when(dead.get("at"), now_ms=ops.now_ms())),
    ]


def _kept_row(document: dict[str, Any], kept: list[Any]) -> tuple[str, object]:
    total = document["keptTotal"]
    return ("kept jobs", f"{total} (the first {len(kept)} below)" if total > len(kept) else total)


def cancel_job(args: argparse.Namespace) -> int:
    """``jobs cancel JOB`` (:mod:`constructs_fifo.cli.operations.jobs` parses it): the plan of
    :func:`constructs_fifo.ops.steering.jobs.plan_cancel`, shown, confirmed and applied as every change is."""
    ops = _queue(args)
    by = args.by or default_by("jobs cancel")
    return _run_plan(
        args, lambda: plan_cancel(ops, args.job, group=args.group, seq=args.seq, reason=args.reason, by=by)
    )


def _plan_hold(ops: OpsQueue, args: argparse.Namespace) -> Plan:
    return holds.plan_hold(ops, args.group, reason=args.reason, by=args.by or default_by("groups hold"))


def _plan_cancel_group(ops: OpsQueue, args: argparse.Namespace) -> Plan:
    return holds.plan_cancel_group(
        ops,
        args.group,
        reason=args.reason,
        by=args.by or default_by("groups cancel"),
        running=args.running,
        up_to_seq=args.up_to_seq,
    )


#: The steering subcommands of ``groups`` (docs/steering.md): each builds its plan from the arguments.
_STEER_GROUP: Final[dict[str, Callable[[OpsQueue, argparse.Namespace], Plan]]] = {
    "hold": _plan_hold,
    "release": lambda ops, args: holds.plan_release(ops, args.group),
    "cancel": _plan_cancel_group,
    "run-first": lambda ops, args: holds.plan_run_first(ops, args.group, args.job),
}


def _users(view: dict[str, Any] | None) -> dict[str, Any] | None:
    """A state view for ``--json``: the user's state and the per-job-id attempts keep their keys."""
    if view is None:
        return None
    return {**view, "state": Verbatim(view["state"]), "attempts": Verbatim(view["attempts"])}


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


def _one_message(args: argparse.Namespace) -> tuple[str | None, str | None, str | None]:
    """``dlq show``'s JOB or --message-id, ``dlq drop``'s JOB, --message-id or --group: exactly one."""
    given = {
        "a job id": args.job,
        "--message-id": args.message_id,
        **({"--group": args.group} if args.ops_command == "drop" else {}),
    }
    named = [name for name, value in given.items() if value is not None]
    if len(named) != 1:
        raise OperationError(
            f"`dlq {args.ops_command}` takes one of {', '.join(given)}, "
            + (f"not {' and '.join(named)}" if named else "and got none"),
            "pass one: a job id, or --message-id and a message id from "
            f"{command('dlq', 'list')} (a malformed body has no job id)"
            + (", or --group GROUP for every message of a group" if args.ops_command == "drop" else ""),
        )
    return args.job, args.message_id, getattr(args, "group", None)


def _dlq(args: argparse.Namespace) -> int:
    if args.ops_command in {"list", "show"}:
        if args.ops_command == "show":
            _one_message(args)
        return _read_each(args, _read_dead_letters)
    job, message_id, group = _one_message(args) if args.ops_command == "drop" else (None, None, None)
    ops = _queue(args)
    if args.ops_command == "redrive":
        return _run_plan(
            args,
            lambda: plan_redrive(
                ops,
                group=args.group,
                job=args.job,
                message_id=args.message_id,
                reset=args.reset,
                force=args.force,
            ),
        )
    return _run_plan(args, lambda: plan_drop(ops, job, message_id=message_id, group=group))


def _read_dead_letters(args: argparse.Namespace, ops: OpsQueue) -> Any:
    group = getattr(args, "group", None)
    job = getattr(args, "job", None)
    message_id = getattr(args, "message_id", None)
    listing = list_dead_letters(ops, group=group, job=job, message_id=message_id)
    if args.ops_command == "show" and not listing.letters:
        what = f"job {job!r}" if job is not None else f"message id {message_id!r}"
        raise OperationRefusedError(
            f"the dead-letter queue of {ops.label} holds no message of {what}",
            f"list what it holds: {command('dlq', 'list')}",
        )
    if args.json:
        return listing.to_dict()
    out = Output()
    if args.ops_command == "list":
        out.rows(
            f"dead-letter queue of {ops.label} ({listing.depth} message(s))",
            ["job", "group", "type", "reason", "error", "attempts", "dead at", "table says"],
            [
                [
                    letter.job_id or f"none: message {letter.message_id}",
                    letter.group,
                    letter.job_type,
                    letter.reason,
                    f"{letter.attributes.error_type or ''}: {letter.attributes.error or ''}",
                    letter.attributes.attempts,
                    when(letter.attributes.dead_at, now_ms=ops.now_ms()),
                    _table_says(listing.table_view(letter)),
                ]
                for letter in listing.letters
            ],
        )
    else:
        for letter in listing.letters:
            document = letter.to_dict()
            out.pairs(
                f"DLQ message {letter.message_id} ({ops.label})",
                [
                    (key, when(document[key], now_ms=ops.now_ms()) if key == "deadAt" else document[key])
                    for key in sorted(document)
                ]
                + [(f"table: {k}", v) for k, v in listing.table_view(letter).items()],
            )
    if not listing.complete:
        out.line("note: the peek saw only part of the DLQ (the first 10 messages of each group)")
    return None


def _table_says(view: dict[str, Any]) -> str:
    if "claimStatus" in view:
        return f"claim {view['claimStatus'] or 'none'}"
    if "stateRemembersDead" in view:
        return "state: dead" if view["stateRemembersDead"] else "state: not dead"
    return "-"


def _claims(args: argparse.Namespace) -> int:
    if args.ops_command == "show":
        return _read_each(args, _show_claim)
    ops = _queue(args)
    if args.ops_command == "release":
        return _run_plan(args, lambda: plan_release(ops, args.job, force=args.force))
    return _run_plan(args, lambda: plan_reset(ops, args.job))


#: Claim attributes that are points in time, in epoch milliseconds, and ``expiration``'s unit (epoch s).
_CLAIM_TIMES_MS: Final = frozenset({"lease_expires_at", "updated_at"})
_CLAIM_EXPIRATION_S: Final = "expiration"


def _show_claim(args: argparse.Namespace, ops: OpsQueue) -> Any:
    shown = show_claim(ops, args.job)
    if args.json:
        return shown
    claim = shown["claim"]
    now_ms = ops.now_ms()

    def value(key: str) -> object:
        if key in _CLAIM_TIMES_MS:
            return when(claim[key], now_ms=now_ms) or claim[key]
        if key == _CLAIM_EXPIRATION_S and isinstance(claim[key], int | float):
            return when(claim[key] * 1000, now_ms=now_ms)
        return claim[key]

    Output().pairs(
        f"claim of job {args.job} ({shown['table']}, {ops.label})",
        [(key, value(key)) for key in sorted(claim)]
        + [("lease remaining (s)", shown["leaseRemainingSeconds"])],
    )
    return None


def _state(args: argparse.Namespace) -> int:
    return _read_each(args, _show_state)


def _show_state(args: argparse.Namespace, ops: OpsQueue) -> Any:
    shown = show_state(ops, args.group)
    if args.json:
        return _users(shown)
    _state_pairs(Output(), f"{args.group} ({ops.label})", shown)
    return None


def _pace(args: argparse.Namespace) -> int:
    if args.ops_command == "show":
        return _read_each(args, _show_pace)
    ops = _queue(args)
    by = args.by or default_by("pace set")
    return _run_plan(
        args,
        lambda: plan_set_pace(
            ops, jobs=args.jobs, per_seconds=args.per, burst=args.burst, clear=args.clear, by=by
        ),
    )


def _show_pace(args: argparse.Namespace, ops: OpsQueue) -> Any:
    shown = show_pace(ops)
    if args.json:
        return shown
    construct, override = shown["construct"], shown["override"]
    if construct is None:
        rows: list[tuple[str, object]] = [
            ("construct's pace", "none: this queue is not paced (an override has no effect)")
        ]
    elif isinstance(construct, dict):
        rows = [("construct's pace", _limit_text(construct) + f", key {construct['key']}")]
    else:
        rows = [("construct's pace", "unknown (the consumer's environment was not read)")]
    if override is None:
        rows.append(("override", "none" if construct is None else "none: the construct's pace applies"))
    else:
        rows.append(("override", _limit_text(override)))
        rows += [("updated at", when(override.get("updated_at"))), ("updated by", override.get("updated_by"))]
    Output().pairs(f"pace of {ops.label}", [*rows, ("note", shown["note"])])
    return None


def _limit_text(limit: dict[str, Any]) -> str:
    return f"{limit['jobs']} jobs per {limit['period_seconds']} s, bursts of {limit['burst']}"


def _same_target(args: argparse.Namespace, run: Callable[[argparse.Namespace], int]) -> int:
    """Run ``run``; every command its error suggests gets this invocation's target options
    (:func:`~constructs_fifo.cli.operations.fix.complete_commands`), so it can be pasted as it is."""
    try:
        return run(args)
    except CommandError as error:
        error.message = complete_commands(error.message, args)
        error.fix = complete_commands(error.fix, args)
        raise


OPS_COMMANDS: Final[dict[str, Callable[[argparse.Namespace], int]]] = {
    name: functools.partial(_same_target, run=run)
    for name, run in {
        "status": _status,
        "groups": _groups,
        "dlq": _dlq,
        "claims": _claims,
        "state": _state,
        "pace": _pace,
    }.items()
}
