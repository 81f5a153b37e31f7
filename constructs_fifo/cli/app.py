"""``constructs-fifo``: serve the local emulator, deploy, drain, and run the demo.

Exit codes
----------
0
    Success (for ``demo``: every guarantee verified; for ``--scenario divergence``: divergence shown).
1
    ``demo`` ran and found violations (each is printed), or the divergence did not show.
2
    Invalid command line (argparse) or workload (e.g. ``--jobs`` below ``--workspaces``).
3
    The environment stopped a step: no CDK CLI, the emulator did not start, the deploy failed, the
    stack is missing. One line with the cause and the fix; no traceback.
130
    Interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from constructs_fifo import __version__
from constructs_fifo.client.errors import ProducerError
from constructs_fifo.local.credentials import make_session, needs_fake_credentials
from constructs_fifo.local.demo import (
    DEFAULT_REGION,
    DemoError,
    DemoOptions,
    DemoResult,
    drain_queue,
    run_demo,
)
from constructs_fifo.local.deploy import DeployError, child_environment, deploy
from constructs_fifo.local.divergence import DivergenceResult, run_divergence
from constructs_fifo.local.runner import RunnerError
from constructs_fifo.local.workload import WorkloadError, WorkloadSpec

__all__ = [
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


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{value} must be more than 0 seconds")
    return value


def _add_aws_options(parser: argparse.ArgumentParser, *, otherwise: str = "AWS itself") -> None:
    parser.add_argument(
        "--endpoint-url",
        default=os.environ.get("AWS_ENDPOINT_URL") or None,
        help=f"AWS endpoint, e.g. http://localhost:4566 (default: $AWS_ENDPOINT_URL, else {otherwise})",
    )
    parser.add_argument(
        "--region",
        default=os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION") or DEFAULT_REGION,
        help="AWS region (default: $AWS_REGION, else us-east-1)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``constructs-fifo``."""
    parser = argparse.ArgumentParser(
        prog="constructs-fifo",
        description="Ordered, exactly-once-effect job queues on SQS FIFO: emulator, deploy, drain, demo.",
        epilog="Exit codes: 0 ok; 1 violations found; 2 bad arguments; 3 environment error; 130 interrupted.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    local = commands.add_parser("local", help="the embedded AWS emulator")
    local_commands = local.add_subparsers(dest="local_command", required=True, metavar="COMMAND")
    serve = local_commands.add_parser("serve", help="run the emulator in the foreground until interrupted")
    serve.add_argument("--port", type=_count(0), default=4566, help="TCP port (default 4566; 0 picks one)")

    deploy = commands.add_parser("deploy", help="cdk deploy the sample app (bootstraps if needed)")
    _add_aws_options(deploy)
    deploy.add_argument("--stack", default="AgentJobs", help="stack to deploy (default AgentJobs)")
    deploy.add_argument(
        "--app-dir", type=Path, default=Path.cwd(), help="directory with cdk.json (default .)"
    )

    drain = commands.add_parser("drain", help="run the deployed event source mapping locally")
    _add_aws_options(drain)
    drain.add_argument("--stack", default="AgentJobs", help="deployed stack (default AgentJobs)")
    until = drain.add_mutually_exclusive_group()
    until.add_argument("--until-empty", action="store_true", help="stop when the queue is empty (default)")
    until.add_argument("--for", dest="for_seconds", type=_seconds, metavar="SECONDS", help="poll this long")

    demo = commands.add_parser(
        "demo", help="deploy, send agent jobs, drain, verify (emulator if no endpoint)"
    )
    _add_aws_options(demo, otherwise="a fresh embedded emulator; with --no-emulator, AWS itself")
    demo.add_argument(
        "--scenario",
        choices=("verify", "divergence"),
        default="verify",
        help="verify: the full workload (default); divergence: in-order vs shuffled producer",
    )
    demo.add_argument("--stack", default="AgentJobs", help="stack name (default AgentJobs)")
    demo.add_argument("--app-dir", type=Path, default=Path.cwd(), help="directory with cdk.json (default .)")
    demo.add_argument("--workspaces", type=_count(1), default=20, help="message groups (default 20)")
    demo.add_argument("--jobs", type=_count(1), default=500, help="distinct jobs (default 500)")
    demo.add_argument("--duplicate-rate", type=_fraction, default=0.1, help="jobs sent twice (default 0.1)")
    demo.add_argument("--failure-rate", type=_fraction, default=0.1, help="transient failures (default 0.1)")
    demo.add_argument("--poison", type=_count(0), default=2, help="jobs failing permanently (default 2)")
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
    return parser


# --- commands --------------------------------------------------------------------------------------------


def _console(*, stderr: bool = False) -> Console:
    return Console(stderr=stderr, highlight=False)


def _serve(args: argparse.Namespace) -> int:
    from constructs_fifo.local.emulator import serve_forever  # noqa: PLC0415 - loads moto only when serving

    serve_forever(port=args.port)
    return EXIT_OK


def _deploy(args: argparse.Namespace) -> int:
    fake = needs_fake_credentials(args.endpoint_url, started_emulator=False)
    env = child_environment(endpoint_url=args.endpoint_url, region=args.region, fake_credentials=fake)
    console = _console(stderr=True)  # stdout holds only the outputs' JSON, so it can be piped
    console.print(
        f"deploying {args.stack} from {args.app_dir} to {args.endpoint_url or 'AWS'} ({args.region})"
    )
    outputs = deploy(
        args.app_dir,
        stack=args.stack,
        endpoint_url=args.endpoint_url,
        region=args.region,
        env=env,
        echo=lambda line: console.print(line, markup=False, style="dim"),
    )
    print(json.dumps(outputs, indent=2, sort_keys=True))
    return EXIT_OK


def _drain(args: argparse.Namespace) -> int:
    fake = needs_fake_credentials(args.endpoint_url, started_emulator=False)
    stats = drain_queue(
        args.stack,
        endpoint_url=args.endpoint_url,
        region=args.region,
        session=make_session(args.region, fake_credentials=fake),
        until_empty=args.for_seconds is None,
        for_seconds=args.for_seconds,
    )
    print(json.dumps(stats, indent=2, sort_keys=True))
    return EXIT_OK


def _print_demo(console: Console, result: DemoResult) -> None:
    counts = result.counts
    table = Table(title="constructs-fifo demo", show_header=True)
    table.add_column("measure")
    table.add_column("value", justify="right")
    rows = [
        ("jobs sent", f"{counts['jobs']} ({counts['messages_sent']} messages)"),
        (
            "duplicates sent",
            f"{counts['duplicates_sent']} ({counts['duplicates_same_dedup_id']} same dedup id, "
            f"{counts['duplicates_new_dedup_id']} new)",
        ),
        ("collapsed by SQS", str(counts["collapsed_by_sqs"])),
        ("skipped by claims", str(counts["skipped_by_claims"])),
        (
            "transient failures retried",
            f"{counts['transient_failures_recovered']} of {counts['transient_failures']} applied after retry",
        ),
        ("redeliveries (retries, rest of group)", str(counts["redeliveries"])),
        ("poison dead-lettered", f"{counts['poison_dead_lettered']} of {counts['poison_sent']}"),
        ("violations", str(counts["violations"])),
    ]
    rows.extend((f"time: {phase}", f"{seconds:.1f} s") for phase, seconds in result.timings.seconds.items())
    rows.append(("elapsed", f"{sum(result.timings.seconds.values()):.1f} s"))
    for name, value in rows:
        table.add_row(name, value)
    console.print(table)
    for violation in result.violations:
        console.print(f"[red]violation[/red] {violation.kind}: {violation.message}", markup=True)
    if result.passed:
        console.print("[green]verified[/green]: order per workspace, no job applied twice, poison in the DLQ")


def _demo(args: argparse.Namespace) -> int:
    spec = WorkloadSpec(
        workspaces=args.workspaces,
        jobs=args.jobs,
        duplicate_rate=args.duplicate_rate,
        failure_rate=args.failure_rate,
        poison=args.poison,
        seed=args.seed,
    )
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
    console = _console()
    if args.scenario == "divergence":
        divergence = run_divergence(options, say=console.log)
        _print_divergence(console, divergence)
        return EXIT_OK if divergence.diverged else EXIT_VIOLATIONS
    spec.validate()
    with Progress(
        TextColumn("draining"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), console=console
    ) as bar:
        task = bar.add_task("drain", total=None, visible=False, start=False)
        started: list[bool] = []

        def progress(done: int, total: int) -> None:
            if not started:  # the clock starts with the drain, not with the deploy
                bar.start_task(task)
                started.append(True)
            bar.update(task, completed=done, total=total, visible=True)

        result = run_demo(options, say=console.log, progress=progress)
        bar.update(task, completed=result.counts.get("delivered_by_sqs", 0))
    _print_demo(console, result)
    if args.report is not None:
        console.print(f"report: {args.report}")
    return EXIT_OK if result.passed else EXIT_VIOLATIONS


def _print_divergence(console: Console, result: DivergenceResult) -> None:
    table = Table(title="Same events, different producer order (FIFO delivered both faithfully)")
    table.add_column("")
    table.add_column(f"in order ({result.in_order.workspace})")
    table.add_column(f"shuffled ({result.shuffled.workspace})")
    for label, left, right in result.rows():
        table.add_row(label, left, right)
    console.print(table)
    console.print(result.verdict())


_COMMANDS: Final = {"deploy": _deploy, "drain": _drain, "demo": _demo}


def _known_errors() -> tuple[type[BaseException], ...]:
    """Error types that are the environment's fault: reported as one line with a fix."""
    errors: list[type[BaseException]] = [DemoError, DeployError, ProducerError, RunnerError]
    try:
        from constructs_fifo.local.fidelity import FidelityError  # noqa: PLC0415 - moto is optional

        errors.append(FidelityError)
    except ImportError:  # moto (the 'local' extra) not installed
        pass
    return tuple(errors)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (see the module docstring)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "local":
            return _serve(args)
        return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("constructs-fifo: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except ImportError as error:
        print(
            f"constructs-fifo: {error}. Fix: pip install 'constructs-fifo[local]' "
            "(the emulator and the CLI's extras).",
            file=sys.stderr,
        )
        return EXIT_ENVIRONMENT
    except Exception as error:
        if isinstance(error, WorkloadError):
            print(f"constructs-fifo: {error}", file=sys.stderr)
            return EXIT_USAGE
        if isinstance(error, _known_errors()):
            fix = getattr(error, "fix", None)
            lines = str(error).strip().splitlines() or [type(error).__name__]
            print(f"constructs-fifo: {lines[0]}" + (f" Fix: {fix}" if fix else ""), file=sys.stderr)
            for line in lines[1:][-10:]:  # e.g. the end of the CDK CLI's output
                print(f"  | {line}", file=sys.stderr)
            return EXIT_ENVIRONMENT
        raise
