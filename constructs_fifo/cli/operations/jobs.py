"""``constructs-fifo jobs show JOB``: one job's outcome, as ``JobOutcomes`` reads it; ``jobs cancel JOB``:
cancel it (``JobSteering``; shown, confirmed and applied as every change, by
:func:`constructs_fifo.cli.operations.commands.cancel_job`).

Registers the subcommand (:func:`add_parser`) and runs it (:func:`run`). The stack and queue resolve as
for every operations command (``--stack``, ``--queue``); the tables are the queue's function's. Claim
mode reads the job's claim (``--group`` also tells a job kept by a held or parked group from one not
taken yet: without it, such a job reads unknown and the text says to pass it); state mode needs
``--group`` (and ``--seq`` for a job that carries one). ``--wait SECONDS`` polls until the job settles
(succeeded, dead, parked) or the time passes, at 1 read unit a second at most in claim mode
(docs/outcomes.md).

Output: ``label  value`` pairs (a table on a terminal); ``--json``: one document under the CLI's
convention (camelCase keys, times as ISO 8601 with epoch ms beside), the job's ``result`` as the job
function returned it. Exit codes: 0 succeeded; 1 dead, parked or cancelled; 2 bad arguments; 3 the environment
(no stack, a table that cannot be read); 4 not settled (pending, running or unknown; with ``--wait``,
when the time passed first).
"""

from __future__ import annotations

import argparse
import time
from typing import Any, Final

from constructs_fifo.cli.json_output import Verbatim, print_json
from constructs_fifo.cli.operations.output import Output, when
from constructs_fifo.client.errors import OutcomeQueryError, OutcomeReadError
from constructs_fifo.client.job_status import JobOutcome, JobStatus
from constructs_fifo.client.outcomes import JobOutcomes
from constructs_fifo.ops.errors import OperationError
from constructs_fifo.runtime.settings.spec import SETTINGS
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import DeployedQueue, find_queues, select_queue
from constructs_fifo.stacks.errors import CommandError

__all__ = ["EXIT_NOT_SETTLED", "add_parser", "run"]

#: The job has not settled: pending, running or unknown (with ``--wait``: when the time passed first).
EXIT_NOT_SETTLED: Final = 4
_EXIT_SUCCEEDED: Final = 0
_EXIT_DEAD_OR_PARKED: Final = 1


def _wait_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} must be 0 seconds or more")
    return value


def add_parser(commands: Any, *, aws_options: Any, stack_options: Any) -> argparse.ArgumentParser:
    """Add ``jobs show`` to the CLI's subparsers (``aws_options``/``stack_options`` add the shared flags)."""
    jobs: argparse.ArgumentParser = commands.add_parser(
        "jobs", help="one job's outcome: pending, running, succeeded (its result), dead, parked"
    )
    job_commands = jobs.add_subparsers(dest="jobs_command", required=True, metavar="COMMAND")
    show: argparse.ArgumentParser = job_commands.add_parser(
        "show",
        help="one job's status by its id, and its result (claim mode) or state version (state mode)",
        description="Read one job's outcome from the queue's tables (consistent reads only).",
    )
    aws_options(show)
    stack_options(show, stack_help="deployed stack")
    show.add_argument("job", metavar="JOB", help="the job id (the body's jobId)")
    show.add_argument(
        "--group",
        metavar="GROUP",
        help="the job's message group id: required in state mode; in claim mode it tells a job kept by a "
        "held or parked group (held, parked) from one not taken yet (unknown without it)",
    )
    show.add_argument("--seq", type=int, metavar="N", help="state mode: the job's seq, when it carries one")
    show.add_argument(
        "--wait",
        type=_wait_seconds,
        metavar="SECONDS",
        help="poll until the job succeeded, died or is parked, or SECONDS passed (0.1 s doubling to 1 s)",
    )
    show.add_argument("--json", action="store_true", help="print one JSON document (camelCase keys)")
    cancel: argparse.ArgumentParser = job_commands.add_parser(
        "cancel",
        help="cancel one job: not started, it never runs; running, its result is not recorded",
        description="Cancel one job by its id (docs/steering.md). Refused for a job that succeeded or died.",
    )
    aws_options(cancel)
    stack_options(cancel, stack_help="deployed stack")
    cancel.add_argument("job", metavar="JOB", help="the job id (the body's jobId)")
    cancel.add_argument("--group", metavar="GROUP", help="the job's message group id: required in state mode")
    cancel.add_argument("--seq", type=int, metavar="N", help="state mode: the job's seq, when it carries one")
    cancel.add_argument("--reason", default="", help="why: the job's outcome shows it (256 characters)")
    cancel.add_argument("--by", default="", help="who: the job's outcome shows it (default: user@host)")
    cancel.add_argument("--json", action="store_true", help="print one JSON document (for scripts)")
    cancel.add_argument("--dry-run", action="store_true", help="print what would be done; change nothing")
    cancel.add_argument("--yes", "-y", action="store_true", help="do not ask for confirmation on a terminal")
    cancel.epilog = (
        "A job not started never runs (its message is deleted when it arrives; its group goes on). A job "
        "running on a container worker is told through context.cancelled within one heartbeat interval; on "
        "a function it runs to its end. Either way its result is not recorded and its effect may have "
        "happened. State mode: a cancelled job is never applied."
    )
    show.epilog = (
        "Exits 0 succeeded, 1 dead or parked, 4 not settled (pending, running, unknown). Nothing in the "
        "tables records a send: a job not taken yet reads unknown, as one never sent or expired."
    )
    return jobs


def _queues(args: argparse.Namespace) -> tuple[list[DeployedQueue], Any]:
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    session = target.session()
    clients = {name: target.client(name, session) for name in ("cloudformation", "lambda", "sqs", "dynamodb")}
    queues = find_queues(
        args.stack,
        target=target,
        cloudformation_client=clients["cloudformation"],
        lambda_client=clients["lambda"],
        sqs_client=clients["sqs"],
    )
    if args.queue or len(queues) <= 1 or args.wait is not None:  # a wait polls one queue's tables
        return [select_queue(args.stack, queues, args.queue)], clients["dynamodb"]
    return queues, clients["dynamodb"]


def _read(args: argparse.Namespace, queue: DeployedQueue, dynamodb: Any) -> JobOutcome:
    if not queue.claim_table and not args.group:
        raise OperationError(
            f"job {args.job!r}: {queue.label} is in state mode, where a job is found in its group's state",
            f"pass --group GROUP (the message group id the job was sent with){_seq_hint(args)}",
        )
    try:
        outcomes = JobOutcomes(
            claim_table=queue.claim_table, group_table=queue.group_table, dynamodb=dynamodb
        )
        if args.wait is None:
            return outcomes.get(args.job, args.group, seq=args.seq)
        return outcomes.wait(args.job, args.wait, group=args.group, seq=args.seq, stop_at_parked=True)
    except OutcomeQueryError as exc:
        raise OperationError(str(exc), "correct the arguments named") from exc
    except OutcomeReadError as exc:
        raise CommandError(str(exc), "check the table and the caller's read permissions") from exc


def _seq_hint(args: argparse.Namespace) -> str:
    return "" if args.seq is not None else ", and --seq N when the job carries a seq"


def _document(queue: DeployedQueue, mode: str, outcome: JobOutcome) -> dict[str, Any]:
    """The ``--json`` document: the queue, the mode and the outcome, its result as the job returned it."""
    shown = {key: value for key, value in outcome.as_dict().items() if key != "result"}
    return {"queue": queue.label, "mode": mode, **shown, "result": Verbatim(outcome.result)}


def _pairs(mode: str, outcome: JobOutcome, *, now_ms: int) -> list[tuple[str, object]]:
    values: list[tuple[str, object]] = [("status", outcome.status.value), ("mode", mode)]
    optional = (
        ("group", outcome.group),
        ("attempt", outcome.attempt or None),
        ("attempts before a reset", outcome.earlier_attempts or None),
        (
            "lease released" if outcome.lease_released else "lease expires",
            when(outcome.lease_expires_at_ms, now_ms=now_ms),
        ),
        ("result", None if outcome.status is not JobStatus.SUCCEEDED or mode != "claim" else outcome.result),
        ("result not stored", outcome.result_not_stored),
        ("state version", outcome.state_version),
        ("dead reason", outcome.dead_reason),
        ("error", None if outcome.error is None else f"{outcome.error_type or 'Error'}: {outcome.error}"),
        ("parked behind job", outcome.parked_behind),
        ("parked group", outcome.parked_group),
        ("updated", when(outcome.updated_at_ms, now_ms=now_ms)),
        ("cancelled by", outcome.cancelled_by),
        ("cancel reason", outcome.cancel_reason),
        ("cancelled while running", outcome.cancelled_while_running or None),
    )
    values.extend((label, value) for label, value in optional if value is not None)
    values.append(("means", outcome.detail))
    return values


def run(args: argparse.Namespace) -> int:
    """Read (or wait for) the job's outcome and print it; the exit code says whether it settled.

    Without ``--queue`` on a stack of several queues, every queue is read (a job id is one queue's):
    the queues that know the job are shown, or the first one's ``unknown`` when none does; a state-mode
    queue read without ``--group`` is named in a note. ``jobs cancel`` runs its plan instead (exit 0
    done, 1 refused or declined).
    """
    if args.jobs_command == "cancel":
        from constructs_fifo.cli.operations.commands import cancel_job  # noqa: PLC0415 - one command

        return cancel_job(args)
    queues, dynamodb = _queues(args)
    if len(queues) == 1:
        queue = queues[0]
        outcome = _read(args, queue, dynamodb)
        if args.json:
            print_json(_document(queue, _mode(queue), outcome))
        else:
            _print(args, queue, outcome)
        return _exit(outcome)
    read: list[tuple[DeployedQueue, JobOutcome]] = []
    notes: list[str] = []
    for queue in queues:
        try:
            read.append((queue, _read(args, queue, dynamodb)))
        except OperationError as skipped:
            notes.append(f"{skipped.message}; {skipped.fix}")
    if not read:
        raise OperationError("; ".join(notes), "pass --queue, and --group for a state-mode queue")
    known = [(queue, outcome) for queue, outcome in read if outcome.status is not JobStatus.UNKNOWN]
    shown = known or read[:1]
    if args.json:
        documents = [_document(queue, _mode(queue), outcome) for queue, outcome in shown]
        print_json({"stack": args.stack, "queues": documents, "notes": notes})
    else:
        for queue, outcome in shown:
            _print(args, queue, outcome)
        for note in notes:
            Output().line(f"note: {note}")
    return _exit(shown[0][1])


def _mode(queue: DeployedQueue) -> str:
    return "claim" if queue.claim_table else "state"


def _print(args: argparse.Namespace, queue: DeployedQueue, outcome: JobOutcome) -> None:
    now_ms = int(time.time() * 1000)
    out = Output()
    out.pairs(f"job {args.job} ({queue.label})", _pairs(_mode(queue), outcome, now_ms=now_ms))
    if outcome.status is JobStatus.UNKNOWN and queue.claim_table and queue.group_table and not args.group:
        out.line(
            "note: a job kept by a held or parked group has no claim yet, so without --group it reads "
            "unknown: pass --group GROUP (the message group id it was sent with) to tell"
        )
    if outcome.status is JobStatus.UNKNOWN and queue.function_environment.get(SETTINGS["pace"].variable()):
        out.line(
            "note: this queue is paced (pace show): a job waiting for its pace key's token is recorded "
            "only when it runs, so it reads unknown until then"
        )


def _exit(outcome: JobOutcome) -> int:
    if outcome.status is JobStatus.SUCCEEDED:
        return _EXIT_SUCCEEDED
    stopped = outcome.status in (  # an operator's turn (resume, release, triage), or a cancel's end
        JobStatus.DEAD,
        JobStatus.PARKED,
        JobStatus.HELD,
        JobStatus.CANCELLED,
        JobStatus.SUPERSEDED,
    )
    return _EXIT_DEAD_OR_PARKED if stopped else EXIT_NOT_SETTLED
