"""``constructs-fifo doctor``: the deploy preflight, read-only, against any endpoint.

Registers the ``doctor`` subcommand (:func:`add_parser`) and runs it (:func:`run`); the checks are
:mod:`constructs_fifo.deploy.preflight`'s, the same ``deploy`` runs before ``cdk deploy``. Shaped like
the AWS CLI: ``--endpoint-url``, ``--region``, ``--output text|json`` (``--json`` for short; JSON with
PascalCase keys, four-space indent), one line per check, and the exit code says whether all passed.

Only read calls are made: STS GetCallerIdentity, CloudFormation DescribeStacks and
DescribeStackResources, SSM GetParameter, Lambda GetAccountSettings and GetFunctionConcurrency, and
``cdk --version`` (plus ``cdk synth`` into a temporary directory when the app has no ``cdk.out``).

Without ``--stack`` it checks the app's one stack holding an OrderedAgentQueue (read from the
assembly it reads, :mod:`constructs_fifo.stacks.app_stack`); a stack it cannot read is a problem on
every endpoint, never ``ok`` (an emulator has no concurrency quota, but the stack still must exist).

Exit codes: 0 every check passed; 1 a check found a problem (each printed with its fix); 2 bad
arguments; 3 the environment stopped the command before the checks ran.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final, TextIO

from constructs_fifo.cli.json_output import Verbatim, print_json
from constructs_fifo.deploy.cdk import cdk_executable, run_preflight, synth
from constructs_fifo.deploy.preflight.facts import Check, Facts, Unavailable
from constructs_fifo.deploy.preflight.verify import verify
from constructs_fifo.stacks.app_stack import CDK_APP_FILE, assembly_dir, choose_stack, read_app_stacks
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.errors import CdkCommandError, CdkNotFoundError
from constructs_fifo.stacks.node_env import quiet_node

__all__ = ["EXIT_PROBLEMS", "add_parser", "format_check", "print_checks", "run"]

#: Exit code when a check found a problem (the CLI's "violations found").
EXIT_PROBLEMS: Final = 1
#: Width of the check-name column.
_NAME_WIDTH: Final = 12


def add_parser(commands: Any, *, aws_options: Any, stack_help: str) -> argparse.ArgumentParser:
    """Add ``doctor`` to the CLI's subparsers; ``aws_options`` adds --endpoint-url and --region."""
    doctor: argparse.ArgumentParser = commands.add_parser(
        "doctor",
        help="check the account before a deploy (read-only): identity, region, CDK CLI, bootstrap, "
        "reserved concurrency",
        description="Run the deploy preflight without deploying. Each check prints one line: ok, or "
        "problem followed by its fix.",
    )
    aws_options(doctor)
    doctor.add_argument("--stack", help=f"stack to check ({stack_help}; none without an app)")
    doctor.add_argument(
        "--app-dir", type=Path, default=Path.cwd(), help="directory with cdk.json (default .)"
    )
    doctor.add_argument(
        "--assembly",
        type=Path,
        metavar="DIR",
        help="synthesized cloud assembly to read (default: APP_DIR/cdk.out when it exists, else the app "
        "is synthesized into a temporary directory)",
    )
    doctor.add_argument(
        "--output", choices=("text", "json"), default="text", help="output format (default text)"
    )
    doctor.add_argument(
        "--json", dest="output", action="store_const", const="json", help="same as --output json"
    )
    doctor.epilog = "Exit codes: 0 every check passed; 1 a problem was found; 2 bad arguments; 3 environment."
    return doctor


def format_check(check: Check) -> list[str]:
    """``ok       identity     account ...`` and, for a problem, a ``fix`` line under it."""
    lines = [f"{check.status!s:<8} {check.name:<{_NAME_WIDTH}} {check.message}"]
    if check.fix:
        lines.append(f"{'':<8} {'fix':<{_NAME_WIDTH}} {check.fix}")
    return lines


def print_checks(checks: Sequence[Check], stream: TextIO) -> None:
    """Print each check's lines to ``stream``."""
    for check in checks:
        for line in format_check(check):
            print(line, file=stream)


def _facts(args: argparse.Namespace, target: AwsTarget, scratch: Path) -> Facts:
    app_dir = args.app_dir.resolve()
    try:
        cdk: str | None = cdk_executable(app_dir)
    except CdkNotFoundError:
        cdk = None
    child_env = quiet_node(target.child_environment())
    assembly: Path | None = args.assembly
    synth_error: str | None = None
    stack: str | None = args.stack
    if assembly is None and (assembly_dir(app_dir) / "manifest.json").is_file():
        assembly = assembly_dir(app_dir)
    elif assembly is None and (app_dir / CDK_APP_FILE).is_file() and cdk is not None:
        assembly = scratch / "cdk.out"
        try:
            synth(cdk, stack, app_path=app_dir, assembly=assembly, env=child_env, echo=None)
        except CdkCommandError as error:
            synth_error = error.one_line()
    if stack is None and assembly is not None and synth_error is None:
        # the app's one stack holding an OrderedAgentQueue, as every command takes it
        stack = choose_stack(read_app_stacks(assembly), where=f"read from {assembly}")
    facts = run_preflight(target=target, stack=stack, cdk=cdk, cdk_env=child_env, assembly=assembly)
    if synth_error is not None:
        facts = dataclasses.replace(facts, stack=Unavailable(f"`cdk synth` failed: {synth_error}"))
    return facts


def run(args: argparse.Namespace) -> int:
    """Run the checks and print them; 0 when all pass, :data:`EXIT_PROBLEMS` otherwise."""
    target = AwsTarget.for_endpoint(args.endpoint_url, args.region)
    with tempfile.TemporaryDirectory(prefix="constructs-fifo-doctor-") as scratch:
        facts = _facts(args, target, Path(scratch))
    checks = verify(facts)
    if args.output == "json":
        found = facts.to_dict()
        stack = found.get("StackConcurrency")
        if isinstance(stack, dict) and "ReservedConcurrentExecutions" in stack:  # keyed by queue name
            stack["ReservedConcurrentExecutions"] = Verbatim(stack["ReservedConcurrentExecutions"])
        print_json({"Checks": [check.to_dict() for check in checks], "Facts": found})
    else:
        print_checks(checks, sys.stdout)
    return 0 if all(check.ok for check in checks) else EXIT_PROBLEMS
