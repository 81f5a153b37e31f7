"""``constructs-fifo describe``: a deployed queue's URL, names, mapping and tables, read-only.

Registers the subcommand (:func:`add_parser`) and runs it (:func:`run`); what is read is
:mod:`constructs_fifo.stacks.describe`, how it is printed
:func:`~constructs_fifo.cli.render.description_lines` (``label  value`` lines, never wrapped) or
one JSON document with ``--json``. Without ``--stack`` the stack is the app's own, as for every
command (:mod:`constructs_fifo.stacks.app_stack`).

Exit codes: 0 described; 2 bad arguments or no stack to take; 3 the environment (the stack missing,
credentials, connection).
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from constructs_fifo.cli import render
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import find_queues, select_queue
from constructs_fifo.stacks.describe import describe

__all__ = ["add_parser", "run"]


def add_parser(commands: Any, *, aws_options: Any, stack_options: Any) -> argparse.ArgumentParser:
    """Add ``describe`` to the CLI's subparsers (``aws_options``/``stack_options`` add the shared flags)."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "describe", help="a deployed queue's URL, names, mapping and tables (read-only)"
    )
    aws_options(parser)
    stack_options(parser, stack_help="deployed stack")
    parser.add_argument("--json", action="store_true", help="print one JSON document (for scripts)")
    parser.epilog = (
        "Without --queue, every queue of the stack. URLs are the ones the endpoint serves (what "
        "JobProducer needs), also in the stack's outputs. Only read calls are made."
    )
    return parser


def run(args: argparse.Namespace) -> int:
    """Describe the queue(s) of ``args.stack`` and print them; 0."""
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    session = target.session()  # one session: each client would load its service model again otherwise
    clients = {name: target.client(name, session) for name in ("cloudformation", "lambda", "sqs")}
    queues = find_queues(
        args.stack,
        target=target,
        cloudformation_client=clients["cloudformation"],
        lambda_client=clients["lambda"],
        sqs_client=clients["sqs"],
    )
    chosen = [select_queue(args.stack, queues, args.queue)] if args.queue or len(queues) <= 1 else queues
    described = describe(
        args.stack,
        chosen,
        cloudformation_client=clients["cloudformation"],
        lambda_client=clients["lambda"],
        sqs_client=clients["sqs"],
    )
    if args.json:
        print(json.dumps(described.to_dict(), indent=2, sort_keys=True))
    else:
        render.print_lines(render.description_lines(described))
    return 0
