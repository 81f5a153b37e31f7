"""``constructs-fifo``: serve the local emulator, check an account, deploy, drain, run the demo, and
operate a deployed queue.

The parser and the dispatch; what is shown is :mod:`~constructs_fifo.cli.render`, what is done is
the rooms below (:mod:`constructs_fifo.stacks`, :mod:`constructs_fifo.deploy`, :mod:`constructs_fifo.local`,
:mod:`constructs_fifo.demo`). The operations commands (``status``, ``groups``, ``dlq``, ``claims``, ``pace``,
``state``) are registered by :mod:`~constructs_fifo.cli.operations.commands` and done by
:mod:`constructs_fifo.ops`.
``describe`` is :mod:`~constructs_fifo.cli.describe`, ``doctor`` :mod:`~constructs_fifo.cli.doctor`, ``jobs``
:mod:`~constructs_fifo.cli.operations.jobs` (also 4: the job did not settle).
Works on a plain ``pip install constructs-fifo``: only ``local serve``
and a demo that starts its own emulator need the ``local`` extra, and without it they say so in one
line.

Exit codes
----------
0
    Success (for ``demo``: every guarantee verified; for ``--scenario divergence``: divergence shown;
    for ``--scenario events``: every account converged; for ``doctor``: every check passed).
1
    ``demo`` ran and found violations (each is printed), or the divergence did not show; ``doctor``
    found a problem (each printed with its fix); an operations command refused (the tables say no,
    e.g. a live lease) or was not confirmed: nothing was changed.
2
    Invalid command line (argparse) or workload (e.g. ``--jobs`` below ``--workspaces``), an
    operations command that does not apply to the queue's mode, or no ``--stack`` and no one stack
    of the app to take (several, none, or no app directory).
3
    The environment stopped a step: the ``local`` extra missing, no CDK CLI, the emulator did not
    start, the deploy's preflight found a problem, the deploy failed, the stack or its queue is
    missing or ambiguous, an endpoint URL that is not one, an answer that is not AWS's (e.g. a region
    the emulator does not serve), no credentials, no connection, throttled, access denied, a queue
    ``drain`` did not drain (its mapping is disabled) or stopped draining because the function cannot
    run any job (its handler cannot be imported). One line with what failed and the fix; no
    traceback.
130
    Interrupted (Ctrl-C); ``drain`` prints its statistics so far first; ``local serve`` exits so
    when Ctrl-C (or SIGTERM) stops it.
141
    stdout's reader left (``constructs-fifo status | head -6``): a quiet exit, nothing on stderr;
    128 + SIGPIPE, what a shell reports for a writer that signal stopped.

The stack
---------
``--stack`` is optional: run in a CDK app's directory, a command takes the app's one stack holding an
``OrderedAgentQueue`` (read from the app's ``cdk.out``, synthesized when there is none; see
:mod:`constructs_fifo.stacks.app_stack`), never the sample's name. Several such stacks, none, or no
app directory: exit 2, naming the stacks and the fix.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from constructs_fifo import __version__
from constructs_fifo.cli import describe as describe_cli
from constructs_fifo.cli import doctor, pipes, render
from constructs_fifo.cli import worker as worker_cli
from constructs_fifo.cli.drain_view import DrainView
from constructs_fifo.cli.json_output import Verbatim, print_json
from constructs_fifo.cli.operations import jobs
from constructs_fifo.cli.operations.commands import OPS_COMMANDS, add_ops_commands
from constructs_fifo.demo.errors import WorkloadError
from constructs_fifo.demo.sample_app import STACK_NAME
from constructs_fifo.demo.scenarios.divergence import run_divergence
from constructs_fifo.demo.scenarios.events_run import run_events
from constructs_fifo.demo.scenarios.pipeline import run_demo
from constructs_fifo.demo.steps import DemoOptions
from constructs_fifo.demo.workload import WorkloadSpec
from constructs_fifo.deploy.cdk import cdk_executable, deploy, synth
from constructs_fifo.deploy.preflight import ALLOW_UNRESERVED_FLAG
from constructs_fifo.local.emulator.launch import DEFAULT_PORT, MAX_PORT, require_server_packages
from constructs_fifo.local.event_source.reports import DrainStats
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.ops.errors import OperationError, OperationRefusedError
from constructs_fifo.stacks.app_stack import Synthesize, resolve_stack
from constructs_fifo.stacks.aws import (
    DEFAULT_REGION,
    AwsTarget,
    check_endpoint,
    configured_endpoint,
    default_region,
    free_port,
)
from constructs_fifo.stacks.aws_errors import explain_aws_error
from constructs_fifo.stacks.deployed import find_queues, resolve_queue, select_queue
from constructs_fifo.stacks.describe import served_outputs
from constructs_fifo.stacks.errors import CommandError, StackChoiceError
from constructs_fifo.stacks.node_env import quiet_node

__all__ = [
    "EXIT_BROKEN_PIPE",
    "EXIT_ENVIRONMENT",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "EXIT_VIOLATIONS",
    "build_parser",
    "main",
]

EXIT_OK: Final = 0
EXIT_VIOLATIONS: Final = 1
EXIT_USAGE: Final = 2
EXIT_ENVIRONMENT: Final = 3
EXIT_INTERRUPTED: Final = 130
#: stdout's reader left (a closed pipe): 128 + SIGPIPE, what the shell reports for a writer the signal
#: stopped (``cat``'s in ``cat big | head``), so ``set -o pipefail`` treats it alike.
EXIT_BROKEN_PIPE: Final = 141


def _fraction(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number; pass a fraction such as 0.1") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{value} is outside 0..1; pass a fraction such as 0.1")
    return value


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below the minimum {minimum}")
        return value

    return parse


def _port(text: str) -> int:
    port = _count(0)(text)
    if port > MAX_PORT:
        raise argparse.ArgumentTypeError(
            f"{port} is above {MAX_PORT}, the highest TCP port; pass 0 to {MAX_PORT}"
        )
    return port


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0 seconds")
    return value


class _CommandParser(argparse.ArgumentParser):
    """A parser that reports an unrecognized word itself when it is the command that ran.

    argparse hands what a subcommand did not recognize up to the top-level parser, which prints its
    own usage line (``constructs-fifo [-h] [--version] COMMAND ...``): nothing about the command the
    operator typed. Here the innermost parser (the one with no subcommands of its own) stops with its
    own usage and the closest of its flags (``did you mean --stack?``), exit 2 as argparse's.
    """

    def parse_known_args(  # type: ignore[override]  # typeshed's overloads; same signature at run time
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and self._subparsers is None:
            self.error(_unrecognized(self, extras))
        return parsed, extras


def _unrecognized(parser: argparse.ArgumentParser, extras: Sequence[str]) -> str:
    """``unrecognized arguments: --stak X; did you mean --stack?`` (the guess when one is close)."""
    flags = [flag for action in parser._actions for flag in action.option_strings if flag.startswith("--")]
    guesses = [
        close
        for word in extras
        if word.startswith("-")
        for close in difflib.get_close_matches(word.split("=", 1)[0], flags, n=1, cutoff=0.6)
    ]
    said = f"unrecognized arguments: {' '.join(extras)}"
    return f"{said}; did you mean {' or '.join(dict.fromkeys(guesses))}?" if guesses else said


def _add_aws_options(parser: argparse.ArgumentParser, *, otherwise: str = "AWS itself") -> None:
    parser.add_argument(
        "--endpoint-url",
        default=configured_endpoint(),
        help=f"AWS endpoint, e.g. http://localhost:4566 (default: $AWS_ENDPOINT_URL, else {otherwise})",
    )
    parser.add_argument(
        "--region",
        default=default_region(),
        help=f"AWS region (default: $AWS_REGION, else $AWS_DEFAULT_REGION, else {DEFAULT_REGION})",
    )


_QUEUE_HELP = (
    "the stack's OrderedAgentQueue to use: construct path (e.g. AgentJobs/Workspaces or Workspaces) or "
    "queue name; needed when the stack holds more than one (a command that needs it then lists them)"
)


_STACK_DEFAULT_HELP = (
    "default: in a CDK app's directory, the app's one stack holding an OrderedAgentQueue, read from its "
    "cdk.out (synthesized when there is none)"
)


def _add_stack_options(
    parser: argparse.ArgumentParser, *, stack_help: str, queue: bool = True, default: str | None = None
) -> None:
    shown = f"default {default}" if default is not None else _STACK_DEFAULT_HELP
    parser.add_argument("--stack", default=default, help=f"{stack_help} ({shown})")
    if queue:
        parser.add_argument("--queue", metavar="PATH_OR_NAME", help=_QUEUE_HELP)


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``constructs-fifo``."""
    parser = _CommandParser(
        prog="constructs-fifo",
        description=(
            "Ordered, exactly-once-effect job queues on SQS FIFO: emulator, doctor, deploy, drain, demo, "
            "and operations (status, groups, dlq, claims, state, pace; see docs/runbook.md)."
        ),
        epilog="Exit codes: 0 ok; 1 violations (demo), problems (doctor) or a refused operation; 2 bad "
        "arguments; 3 environment error; 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    local = commands.add_parser("local", help="the embedded AWS emulator (needs the 'local' extra)")
    local_commands = local.add_subparsers(dest="local_command", required=True, metavar="COMMAND")
    serve = local_commands.add_parser(
        "serve",
        help="run the emulator in the foreground until Ctrl-C (exit 130); first prints the export line "
        "that points boto3, the AWS CLI, the CDK and constructs-fifo at it",
    )
    serve.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"TCP port (default {DEFAULT_PORT}; 0 picks one)"
    )

    deploy_command = commands.add_parser(
        "deploy", help="synth, preflight, then cdk deploy the app's stack (bootstraps if needed)"
    )
    _add_aws_options(deploy_command)
    _add_stack_options(deploy_command, stack_help="stack to deploy")
    deploy_command.add_argument(
        "--app-dir", type=Path, default=Path.cwd(), help="directory with cdk.json (default .)"
    )
    deploy_command.add_argument(
        ALLOW_UNRESERVED_FLAG,
        action="store_true",
        help="if the preflight finds that the account's Lambda concurrency quota cannot hold the stack's "
        "reserved concurrency, synthesize again with --context constructs-fifo:unreserved=true and deploy "
        "without reservation (each queue's MaximumConcurrency stays its ceiling; the app must read the "
        "context, as the sample app does). Without it, such an account stops the deploy before "
        "CloudFormation",
    )
    deploy_command.add_argument(
        "--no-preflight",
        dest="preflight",
        action="store_false",
        help="skip the preflight (identity, region, CDK CLI, bootstrap, reserved concurrency; see `doctor`)",
    )
    deploy_command.add_argument(
        "--json", action="store_true", help="accepted for symmetry: deploy always prints one JSON document"
    )
    deploy_command.epilog = (
        "Runs the preflight first (the checks of `constructs-fifo doctor`) and stops before `cdk deploy` "
        "on a problem, printing each check with its fix (on stderr). Prints the stack's outputs as JSON "
        "({} for a stack without outputs); with --queue, that queue's resources instead (constructPath, "
        "queueUrl, queueArn, deadLetterQueueUrl, deadLetterQueueArn, claimTableName, groupTableName, "
        "functionName)."
    )

    doctor.add_parser(commands, aws_options=_add_aws_options, stack_help=_STACK_DEFAULT_HELP)
    pipes.add_parser(commands, aws_options=_add_aws_options, stack_help=_STACK_DEFAULT_HELP)
    worker_cli.add_parser(commands, aws_options=_add_aws_options, queue_help=_QUEUE_HELP)

    describe_cli.add_parser(commands, aws_options=_add_aws_options, stack_options=_add_stack_options)

    drain = commands.add_parser("drain", help="run the deployed event source mapping locally")
    _add_aws_options(drain)
    _add_stack_options(drain, stack_help="deployed stack", queue=False)
    which = drain.add_mutually_exclusive_group()
    which.add_argument("--queue", metavar="PATH_OR_NAME", help=_QUEUE_HELP)
    which.add_argument(
        "--all",
        dest="all_queues",
        action="store_true",
        help="drain every queue of the stack, one after the other",
    )
    drain.epilog = (
        "Prints the drain statistics as JSON (the jobs by outcome: succeeded, duplicate, retried, dead, "
        "kept, and groupsParked, the groups a dead job parked; the function's AWS calls; the function "
        "log's path); with --all, one object per "
        "queue, by construct path. On stderr: where the function's log is, a progress line (on a terminal"
        " only), each distinct invocation error once, what it waits for, and a summary. Each drain writes"
        " a new function log, <function>.<n>.log in $XDG_STATE_HOME/constructs-fifo/<project>/logs "
        "(default ~/.local/state/...; <project>: this directory's name and a hash of its path; each "
        "function keeps its newest 10; $CONSTRUCTS_FIFO_LOG_DIR to choose another). Exits 3 when a queue "
        "was not drained (its event source mapping is disabled) or the function cannot run any job (its "
        "handler cannot be imported: the drain stops at once, the messages visible again). One Ctrl-C "
        "stops at once: batches in flight are cut off and their messages made visible again; the "
        "statistics so far are printed and it exits 130."
    )

    until = drain.add_mutually_exclusive_group()
    until.add_argument("--until-empty", action="store_true", help="stop when the queue is empty (default)")
    until.add_argument("--for", dest="for_seconds", type=_seconds, metavar="SECONDS", help="poll this long")

    demo = commands.add_parser(
        "demo", help="deploy, send agent jobs, drain, verify (emulator if no endpoint)"
    )
    _add_aws_options(demo, otherwise="a fresh embedded emulator; with --no-emulator, AWS itself")
    demo.add_argument(
        "--scenario",
        choices=("verify", "divergence", "events"),
        default="verify",
        help="verify: the full workload (default); divergence: in order, shuffled, shuffled with seq; "
        "events: shuffled account events through the sample's bus and pipe, converging by seq",
    )
    _add_stack_options(
        demo,
        stack_help="the sample app's stack (its queues Workspaces and Notifications)",
        queue=False,
        default=STACK_NAME,
    )
    demo.add_argument("--app-dir", type=Path, default=Path.cwd(), help="directory with cdk.json (default .)")
    demo.add_argument("--workspaces", type=_count(1), default=20, help="message groups (default 20)")
    demo.add_argument("--jobs", type=_count(1), default=500, help="distinct jobs (default 500)")
    demo.add_argument("--duplicate-rate", type=_fraction, default=0.1, help="jobs sent twice (default 0.1)")
    demo.add_argument("--failure-rate", type=_fraction, default=0.1, help="transient failures (default 0.1)")
    demo.add_argument(
        "--poison",
        type=_count(0),
        default=2,
        help="jobs failing permanently, each sent twice, ten healthy jobs behind each (default 2)",
    )
    demo.add_argument(
        "--last-attempt",
        type=_count(0),
        default=1,
        help="jobs failing every attempt but their last, ten healthy jobs behind each (default 1)",
    )
    demo.add_argument("--seed", type=_count(0), default=7, help="seeds ids and choices (default 7)")
    demo.add_argument("--report", type=Path, help="write the JSON report here")
    demo.add_argument("--no-deploy", action="store_true", help="reuse the deployed stack")
    demo.add_argument(
        "--no-drain",
        action="store_true",
        help="do not drain locally; wait for the deployed function (real AWS) to drain the queue",
    )
    demo.add_argument(
        "--no-emulator",
        action="store_true",
        help="with no --endpoint-url, talk to real AWS instead of starting the embedded emulator",
    )
    add_ops_commands(commands, add_aws=_add_aws_options, add_stack=_add_stack_options)
    jobs.add_parser(commands, aws_options=_add_aws_options, stack_options=_add_stack_options)
    return parser


# --- commands --------------------------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    """Serve until a signal; the export lines go to stdout first (what a user pastes is data)."""
    require_server_packages()
    from constructs_fifo.local.emulator.server import serve_forever  # noqa: PLC0415 - needs the 'local' extra

    port = args.port or free_port()  # known before it starts, so the lines can name it
    render.print_lines(render.serve_exports(f"http://localhost:{port}", default_region()))
    serve_forever(port=port)
    # serve_forever returns only when SIGINT or SIGTERM stopped it: the shell's "interrupted".
    _say("emulator stopped (its tables and messages are gone)")
    return EXIT_INTERRUPTED


def _deploy(args: argparse.Namespace) -> int:
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    console = render.console(stderr=True)  # stdout holds only the JSON, so it can be piped
    which = args.stack or "the app's stack holding an OrderedAgentQueue"
    console.print(f"deploying {which} from {args.app_dir} to {target.describe()}")
    outputs = deploy(
        args.app_dir,
        target=target,
        stack=args.stack,
        echo=lambda line: console.print(line, markup=False, style="dim"),
        check=args.preflight,
        allow_unreserved=args.allow_unreserved,
        report=lambda check: doctor.print_checks([check], sys.stderr),
    )
    # deploy read the stack from the assembly it synthesized into the app's cdk.out: read again, cheaply
    stack = resolve_stack(args.stack, app_dir=args.app_dir, synthesize=None)
    if args.queue is None:
        served = served_outputs(outputs, target.client("sqs")) if target.endpoint_url else outputs
        print_json(Verbatim(served))  # the stack's outputs, by the names the app gave them
    else:
        queue = resolve_queue(stack, target=target, queue=args.queue)
        console.print(f"queue: {queue.describe()}")
        print_json(queue.to_dict())
    return EXIT_OK


def _say(line: str) -> None:
    print(f"constructs-fifo: {line}", file=sys.stderr, flush=True)


def _drain_one(runner: EventSourceRunner, args: argparse.Namespace, stats: DrainStats) -> DrainStats:
    """Drain one queue into ``stats`` (read after a Ctrl-C), showing it on stderr (:mod:`drain_view`)."""
    with runner:
        view = DrainView(sys.stderr, runner.queue.url)
        view.say(f"draining {runner.queue.url}; the function's log: {runner.log_path}")
        view.start(stats)
        try:
            stats = runner.drain(
                until_empty=args.for_seconds is None,
                for_seconds=args.for_seconds,
                say=view.say,
                on_batch=lambda _: view.redraw(),
                stats=stats,
            )
        except KeyboardInterrupt:
            view.finish(stats, log_path=runner.log_path, interrupted=True)
            raise
        view.finish(stats, log_path=runner.log_path)
    if stats.skipped:
        _say(f"not drained: {stats.skipped}")
    return stats


def _drained(stats: dict[str, object]) -> int:
    """A queue left undrained (a disabled mapping) or a drain stopped because no job can run is not
    success: the environment (the deployment) stopped the drain."""
    return EXIT_ENVIRONMENT if stats.get("skipped") or stats.get("stopped") else EXIT_OK


def _print_drained(drained: object) -> None:
    print_json(drained)


def _drain(args: argparse.Namespace) -> int:
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    if not args.all_queues:
        runner = EventSourceRunner.from_stack(args.stack, target=target, queue=args.queue)
        stats = DrainStats()
        try:
            stats = _drain_one(runner, args, stats)
        except KeyboardInterrupt:  # the statistics so far, then exit 130
            _print_drained(stats.as_dict())
            raise
        _print_drained(stats.as_dict())
        return _drained(dict(stats.as_dict()))
    queues = find_queues(args.stack, target=target)
    if not queues:
        select_queue(args.stack, queues, None)  # raises QueueNotFoundError with its fix
    drained: dict[str, DrainStats] = {}
    try:
        for queue in queues:
            if queue.is_container:  # its workers poll it: `constructs-fifo worker` runs them locally
                print(
                    f"drain --all: skipped {queue.describe()}: container workers consume it "
                    f"(constructs-fifo worker --stack {queue.stack} --queue {queue.label} --code-dir DIR)",
                    file=sys.stderr,
                )
                continue
            runner = EventSourceRunner.from_function(
                queue.function_name, target=target, queue_arn=queue.queue_arn
            )
            drained[queue.label] = DrainStats()
            drained[queue.label] = _drain_one(runner, args, drained[queue.label])
    except KeyboardInterrupt:  # the queues drained so far and the one being drained, then exit 130
        _print_drained({label: stats.as_dict() for label, stats in drained.items()})
        raise
    _print_drained({label: stats.as_dict() for label, stats in drained.items()})
    return max((_drained(dict(stats.as_dict())) for stats in drained.values()), default=EXIT_OK)


def _demo(args: argparse.Namespace) -> int:
    spec = WorkloadSpec(
        workspaces=args.workspaces,
        jobs=args.jobs,
        duplicate_rate=args.duplicate_rate,
        failure_rate=args.failure_rate,
        poison=args.poison,
        last_attempt=args.last_attempt,
        seed=args.seed,
    )
    spec.validate()
    options = DemoOptions(
        spec=spec,
        endpoint_url=args.endpoint_url,
        region=args.region,
        stack=args.stack,
        app_dir=args.app_dir,
        report=args.report,
        use_emulator=not args.no_emulator,
        deploy=not args.no_deploy,
        drain=not args.no_drain,
    )
    console = render.console()
    if args.scenario == "divergence":
        divergence = run_divergence(options, say=console.log)
        render.print_divergence(console, divergence)
        return EXIT_OK if divergence.shown else EXIT_VIOLATIONS
    if args.scenario == "events":
        events = run_events(options, say=console.log)
        render.print_events(console, events)
        if args.report is not None:
            console.print(f"report: {args.report}")
        return EXIT_OK if events.passed else EXIT_VIOLATIONS
    with render.drain_progress(console) as progress:
        result = run_demo(options, say=console.log, progress=progress)
        progress.finish()
    render.print_demo(console, result)
    if args.report is not None:
        console.print(f"report: {args.report}")
    return EXIT_OK if result.passed else EXIT_VIOLATIONS


_COMMANDS: Final = {
    "local": _serve,
    "deploy": _deploy,
    "describe": describe_cli.run,
    "drain": _drain,
    "demo": _demo,
    "doctor": doctor.run,
    "pipes": pipes.run,
    "jobs": jobs.run,
    "worker": worker_cli.run,
    **OPS_COMMANDS,
}


def _print_error(error: CommandError) -> None:
    print(f"constructs-fifo: {error.one_line()}", file=sys.stderr)
    for line in error.details[-10:]:  # e.g. the end of the CDK CLI's output
        print(f"  | {line}", file=sys.stderr)


#: Commands that take ``--stack`` and resolve a missing one here; ``deploy`` and ``doctor`` resolve it
#: from the app they synthesize, the demo deploys the sample's own stack.
_RESOLVES_STACK: Final = frozenset({"describe", "drain", "pipes", "jobs", *OPS_COMMANDS})


def _synthesizer(args: argparse.Namespace) -> Synthesize:
    """``cdk synth`` of the app in the working directory into the directory it is given."""

    def synthesize(assembly: Path) -> None:
        app_dir = Path.cwd()
        env = quiet_node(AwsTarget(None, args.region).child_environment())
        synth(cdk_executable(app_dir), None, app_path=app_dir, assembly=assembly, env=env, echo=None)

    return synthesize


def _run(args: argparse.Namespace) -> int:
    check_endpoint(getattr(args, "endpoint_url", None))  # before a synth that may take a while
    if args.command in _RESOLVES_STACK or (
        args.command == "worker" and worker_cli.reads_app_stack(args, Path.cwd())
    ):
        args.stack = resolve_stack(args.stack, app_dir=Path.cwd(), synthesize=_synthesizer(args), say=_say)
    return _COMMANDS[args.command](args)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = _run(args)
        sys.stdout.flush()  # a reader that left shows here when everything fitted in the buffer
        return code
    except BrokenPipeError:
        # The reader of stdout left (`status | head -6`): a quiet exit, as a writer killed by SIGPIPE.
        # stdout goes to /dev/null so the interpreter's flush at exit cannot fail again (the recipe of
        # Python's signal module documentation, "Note on SIGPIPE").
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("constructs-fifo: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except OperationRefusedError as error:
        _print_error(error)
        return EXIT_VIOLATIONS
    except (WorkloadError, OperationError, StackChoiceError) as error:
        _print_error(error)
        return EXIT_USAGE
    except CommandError as error:
        _print_error(error)
        return EXIT_ENVIRONMENT
    except (BotoCoreError, ClientError, ResponseParserError) as error:  # the parser's is no BotoCoreError
        explained = explain_aws_error(
            error,
            doing=args.command,
            endpoint_url=getattr(args, "endpoint_url", None),
            region=getattr(args, "region", None),
        )
        if explained is None:
            raise
        _print_error(explained)
        return EXIT_ENVIRONMENT
