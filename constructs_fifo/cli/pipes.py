"""``constructs-fifo pipes run``: move a deployed stack's EventBridge pipes locally.

Registers the ``pipes`` subcommand (:func:`add_parser`) and runs it (:func:`run`); the moving is
:mod:`constructs_fifo.local.pipes`. On the emulator nothing else runs a pipe (moto deploys it as
configuration), as nothing else runs an event source mapping but ``drain``.

Output: one line per pipe (received, sent, left with each reason); ``--json``: one document with
camelCase keys, ``{"pipes": [...]}``. Exit codes: 0 every record sent; 1 some record failed (left in
the source queue, each reason printed: it comes back after the visibility timeout, and goes to the
source's dead-letter queue after ``maxReceiveCount``); 2 bad arguments; 3 the environment stopped it
(no stack, no pipe, a pipe that is STOPPED or not SQS to SQS).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, Final

from constructs_fifo.local.pipes.runner import PipeRunner, PipeStats
from constructs_fifo.stacks.aws import AwsTarget

__all__ = ["EXIT_FAILED_RECORDS", "add_parser", "format_stats", "run"]

#: Exit code when a record could not be sent (the CLI's "problems found").
EXIT_FAILED_RECORDS: Final = 1
#: Exit code when a pipe was not run (STOPPED): the environment stopped the command.
_EXIT_SKIPPED: Final = 3


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0 seconds")
    return value


def add_parser(commands: Any, *, aws_options: Any, stack_help: str) -> argparse.ArgumentParser:
    """Add ``pipes run`` to the CLI's subparsers; ``aws_options`` adds --endpoint-url and --region."""
    pipes: argparse.ArgumentParser = commands.add_parser(
        "pipes", help="run the deployed EventBridge pipes locally (SQS source to SQS target)"
    )
    pipe_commands = pipes.add_subparsers(dest="pipes_command", required=True, metavar="COMMAND")
    runner = pipe_commands.add_parser(
        "run",
        help="receive from each pipe's source queue, apply its target parameters, send to its target",
        description="Move records through the stack's AWS::Pipes::Pipe resources as EventBridge Pipes "
        "does: MessageGroupId and MessageDeduplicationId from the event's JSON paths, the body from the "
        "input template. A record whose path resolves to nothing is left in the source queue.",
    )
    aws_options(runner)
    runner.add_argument("--stack", help=f"deployed stack ({stack_help})")
    runner.add_argument(
        "--pipe", metavar="NAME", help="only this pipe (name or logical id); default every pipe"
    )
    until = runner.add_mutually_exclusive_group()
    until.add_argument("--until-empty", action="store_true", help="stop when the source is empty (default)")
    until.add_argument(
        "--for", dest="for_seconds", type=_positive_seconds, metavar="SECONDS", help="poll this long"
    )
    runner.add_argument("--json", action="store_true", help="print one JSON document (camelCase keys)")
    runner.epilog = (
        "Exits 1 when a record could not be sent (it stays in the source queue), 3 when a pipe is STOPPED "
        "or the stack has no pipe."
    )
    return runner


def format_stats(stats: PipeStats) -> list[str]:
    """One line for the pipe, then one per failure reason."""
    if stats.skipped:
        return [f"{stats.pipe}: not run: {stats.skipped}"]
    lines = [
        f"{stats.pipe}: received {stats.received}, sent {stats.sent}, left {stats.failed} "
        f"({stats.batches} batches; {stats.left_in_flight} in flight in the source)"
    ]
    lines.extend(f"  {count} x {reason}" for reason, count in stats.failures.most_common())
    return lines


def _say(line: str) -> None:
    print(f"constructs-fifo: {line}", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run every selected pipe in turn and print the stats."""
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    runners = PipeRunner.from_stack(args.stack, target=target, pipe=args.pipe)
    results = [
        runner.run(until_empty=args.for_seconds is None, for_seconds=args.for_seconds, say=_say)
        for runner in runners
    ]
    if args.json:
        print(json.dumps({"pipes": [stats.as_dict() for stats in results]}, indent=2, sort_keys=True))
    else:
        for stats in results:
            print("\n".join(format_stats(stats)))
    if any(stats.skipped for stats in results):
        return _EXIT_SKIPPED
    return EXIT_FAILED_RECORDS if any(stats.failed for stats in results) else 0
