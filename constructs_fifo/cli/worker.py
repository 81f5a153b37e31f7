"""``constructs-fifo worker``: the container worker's command line (parsing only; the worker is
:mod:`constructs_fifo.worker`).

With no arguments it reads the ``CONSTRUCTS_FIFO_*`` environment a container is given (as the function
reads it); with none set, in a CDK app's directory, it takes the app's stack as every other command
does (:func:`reads_app_stack`). With ``--stack`` (and ``--queue``, ``--endpoint-url``, ``--region``)
it reads a deployed stack's queue settings and job code as ``drain`` does, so it runs on a laptop
against the emulator; that part imports :mod:`constructs_fifo.local` inside the functions that need it.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from constructs_fifo.cli.worker_view import LOG_FORMATS, WorkerView
from constructs_fifo.runtime.constants import ENV_QUEUE_URL
from constructs_fifo.worker.loop import LONG_POLL_SECONDS

__all__ = ["add_parser", "log_format", "reads_app_stack", "run"]

EXIT_USAGE = 2


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: give a whole number of 1 or more")
    return value


def _seconds(text: str) -> float:
    value = float(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: give seconds, 0 or more")
    return value


def _wait_seconds(text: str) -> int:
    value = int(text)
    if not 0 <= value <= LONG_POLL_SECONDS:
        raise argparse.ArgumentTypeError(f"{text!r}: ReceiveMessage waits 0 to {LONG_POLL_SECONDS} seconds")
    return value


def add_parser(commands: Any, *, aws_options: Any, queue_help: str) -> argparse.ArgumentParser:
    """Add ``worker`` to the CLI's subparsers; ``aws_options`` adds --endpoint-url and --region."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "worker",
        help="run the container worker: long-poll the queue, run jobs in slots with heartbeats",
        description="Receive batches from the FIFO queue and run them through the runtime (claim or state "
        "mode) in concurrent slots, renewing each running batch's visibility and claim (heartbeats), "
        "deleting what succeeded. SIGTERM stops it gracefully: no new receive, running jobs finish within "
        "the grace period, records not started are made visible at once; then it exits 0.",
    )
    aws_options(parser)
    parser.add_argument(
        "--stack",
        help="read this deployed stack's queue settings and job code (default: the environment's "
        "CONSTRUCTS_FIFO_* settings; with none, the app's stack in a CDK app's directory)",
    )
    parser.add_argument("--queue", metavar="PATH_OR_NAME", help=queue_help)
    parser.add_argument(
        "--code-dir",
        help="with --stack: the job code's directory (default: the deployed function's code; required for "
        "a container queue, whose code is in the image)",
    )
    parser.add_argument(
        "--slots", type=_positive_int, help="concurrent batches (default $CONSTRUCTS_FIFO_SLOTS, else 4)"
    )
    parser.add_argument(
        "--heartbeat-interval",
        type=_seconds,
        metavar="SECONDS",
        help="seconds between renewals (default $CONSTRUCTS_FIFO_HEARTBEAT_INTERVAL_SECONDS, else a third "
        "of the visibility timeout)",
    )
    parser.add_argument(
        "--grace-seconds",
        type=_seconds,
        metavar="SECONDS",
        help="after SIGTERM, how long running jobs may finish (default 110: under Fargate's 120 s "
        "stopTimeout)",
    )
    parser.add_argument(
        "--batch-size",
        type=_positive_int,
        help="records per receive, 1 to 10 (default: the mapping's, else 10)",
    )
    parser.add_argument(
        "--wait-time-seconds",
        type=_wait_seconds,
        default=LONG_POLL_SECONDS,
        metavar="SECONDS",
        help="ReceiveMessage's long poll, 0 to 20 (default 20: the fewest empty receives; a stop waits for "
        "the receive in flight)",
    )
    parser.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        help="json: the JSON log lines with their EMF metrics, as a container ships them; text: one short "
        "line per job, heartbeat and event (default: text at a terminal when the settings come from a "
        "stack, else json: a container's come from its environment)",
    )
    parser.epilog = (
        "A job function reads context.cancelled (a threading.Event, set when its run went stale or was "
        "stopped) and context.get_remaining_time_in_millis(). Logs go to stdout (--log-format). Exits 0 "
        "after a graceful stop, 2 when the settings are wrong."
    )
    return parser


def reads_app_stack(
    args: argparse.Namespace, working_dir: Path, environ: Mapping[str, str] | None = None
) -> bool:
    """Whether ``worker`` should take the app's stack: no ``--stack``, no queue in the environment (so
    it is not a configured container) and ``working_dir`` is a CDK app's (it has ``cdk.json``)."""
    from constructs_fifo.stacks.app_stack import CDK_APP_FILE  # noqa: PLC0415 - a local convenience

    env = os.environ if environ is None else environ
    return args.stack is None and not env.get(ENV_QUEUE_URL) and (working_dir / CDK_APP_FILE).is_file()


def run(args: argparse.Namespace) -> int:
    """Build the worker from the environment (or ``--stack``) and serve it until SIGTERM."""
    from constructs_fifo.runtime.exceptions import ConfigurationError  # noqa: PLC0415
    from constructs_fifo.runtime.settings.config import RuntimeConfig  # noqa: PLC0415
    from constructs_fifo.worker.errors import WorkerConfigError  # noqa: PLC0415
    from constructs_fifo.worker.run import build_worker, serve, worker_options  # noqa: PLC0415

    client_factory = None
    batch_size = args.batch_size
    try:
        if args.stack:
            environ, client_factory, deployed_batch = _from_stack(args)
            config = RuntimeConfig.from_env(environ)
            batch_size = batch_size or deployed_batch
        else:
            config = RuntimeConfig.from_env()
        options = worker_options(
            config,
            slots=args.slots,
            heartbeat_interval_seconds=args.heartbeat_interval,
            grace_seconds=args.grace_seconds,
            batch_size=batch_size,
            wait_time_seconds=args.wait_time_seconds,
        )
        worker = build_worker(config, options, client_factory=client_factory, log_stream=_log_stream(args))
    except (ConfigurationError, WorkerConfigError) as error:
        hint = (
            ""
            if args.stack
            else (
                "; on a laptop, run it in the CDK app's directory or give --stack NAME to read a deployed "
                "stack's settings"
            )
        )
        print(f"constructs-fifo worker: {error}{hint}", file=sys.stderr)
        return EXIT_USAGE
    return serve(worker)


def log_format(chosen: str | None, *, stack: str | None, terminal: bool) -> str:
    """``--log-format`` when given; else ``text`` only for a person's run (stdout a ``terminal`` and the
    settings read from a ``stack``). A worker configured by its environment is a container's and keeps
    its JSON lines (and their EMF metrics) even when its task allocates a terminal."""
    if chosen is not None:
        return chosen
    return "text" if stack and terminal else "json"


def _log_stream(args: argparse.Namespace) -> Any:
    """``None`` (stdout, JSON lines) or a :class:`~constructs_fifo.cli.worker_view.WorkerView` on stdout."""
    chosen = log_format(args.log_format, stack=args.stack, terminal=sys.stdout.isatty())
    return WorkerView(sys.stdout) if chosen == "text" else None


def _from_stack(args: argparse.Namespace) -> tuple[dict[str, str], Any, int | None]:
    """The deployed consumer's environment, a client factory on the target, the mapping's batch size.

    A Lambda queue's settings are its function's environment and its code the function's (unless
    ``--code-dir``); a container queue's are its task definition's container environment, and its code
    is the image's, which a laptop runs from ``--code-dir`` (required then).
    """
    from pathlib import Path  # noqa: PLC0415

    from constructs_fifo.local.event_source.deployment import read_deployment  # noqa: PLC0415
    from constructs_fifo.stacks.aws import AwsTarget  # noqa: PLC0415 - a local convenience
    from constructs_fifo.stacks.deployed import resolve_queue  # noqa: PLC0415
    from constructs_fifo.worker.errors import WorkerConfigError  # noqa: PLC0415

    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    deployed = resolve_queue(args.stack, target=target, queue=args.queue)
    if deployed.function_name is None:
        if not args.code_dir:
            raise WorkerConfigError(
                f"--stack {args.stack}: {deployed.describe()} runs on container workers, whose job code is "
                "in the image; give --code-dir with the job code's directory (the sample's: lambda)"
            )
        environment = dict(deployed.function_environment)
        code_dir = Path(args.code_dir).resolve()
        batch_size = None
    else:
        deployment = read_deployment(
            deployed.function_name,
            target=target,
            queue_arn=deployed.queue_arn,
            code_dir=Path(args.code_dir) if args.code_dir else None,
        )
        environment = dict(deployment.function.environment)
        code_dir = deployment.function.code_dir
        batch_size = deployment.mapping.batch_size
    # The job code reads its own variables (a table name...) as it does in the function.
    os.environ.update(environment)
    sys.path.insert(0, str(code_dir))
    return environment, target.client, batch_size
