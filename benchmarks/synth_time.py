"""Figure 7: synth time of the sample app's stack against the same resources written by hand.

Each run builds one stack in a fresh ``aws_cdk.App`` (its own temporary ``outdir``) and calls
``app.synth()``, timing both, as ``cdk synth`` runs ``app.py``. The construct's side is one
``OrderedAgentQueue`` with every default and the table its job writes, with the sample app's outputs
and cdk-nag acknowledgements (the construct, its validation and its asset staging; no cdk-nag packs,
which are the app's choice and would cost the same on both sides); the other side is
:class:`benchmarks.handwritten_stack.HandWrittenStack`, the same resources, outputs, acknowledgements
and function asset content (its job code with the runtime vendored next to it, prepared before the
timed runs as a hand-writer's build step would). ``warmups`` untimed runs each (jsii starts its Node
process, loads the modules and warms its JIT once per Python process: the first few synths of a
process are up to 4x slower), then ``runs`` alternating timed runs, the order of each pair swapped
every run (in one process, whichever side ran first in a pair measured about 7% slower: five runs of
the figure each way on the 2-core machine); the figure is the median of each side.
:func:`measure_synth_in_child` runs all of it in a fresh interpreter, as ``cdk synth`` runs
``app.py``, so that what the benchmark did before (moto's state, a heap grown by the other figures,
whose garbage collection would slow both sides alike and hide the difference) does not leak in.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from aws_cdk import Stack

__all__ = [
    "SynthResult",
    "load_sample_app",
    "main",
    "measure_synth",
    "measure_synth_in_child",
    "one_queue_stack",
]

APP_FILE = Path(__file__).resolve().parents[1] / "app.py"


@dataclass(frozen=True)
class SynthResult:
    """Seconds of each timed run, per side."""

    sample: list[float]
    handwritten: list[float]

    @property
    def sample_median(self) -> float:
        return statistics.median(self.sample)

    @property
    def handwritten_median(self) -> float:
        return statistics.median(self.handwritten)


def load_sample_app() -> ModuleType:
    """Import the repository's ``app.py`` (not a package) as a module."""
    spec = importlib.util.spec_from_file_location("constructs_fifo_bench_sample_app", APP_FILE)
    if spec is None or spec.loader is None:  # pragma: no cover - the file is in the repository
        raise ImportError(f"cannot load {APP_FILE}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _timed(build: Callable[[Any], object]) -> float:
    from aws_cdk import App  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="bench-synth-") as outdir:
        started = time.perf_counter()
        app = App(outdir=outdir)
        build(app)
        app.synth()
        return time.perf_counter() - started


def one_queue_stack(app: Any, acknowledgements: tuple[Sequence[Any], Sequence[Any]] = ((), ())) -> Stack:
    """One ``OrderedAgentQueue`` (claim mode, every default) and the table its job writes, with the
    sample app's outputs and cdk-nag acknowledgements for one queue: the shape
    :class:`~benchmarks.handwritten_stack.HandWrittenStack` writes by hand (the sample app holds two
    queues, which would double one side)."""
    from aws_cdk import CfnOutput, RemovalPolicy, Stack, Validations  # noqa: PLC0415
    from aws_cdk import aws_dynamodb as dynamodb  # noqa: PLC0415
    from aws_cdk import aws_lambda as lambda_  # noqa: PLC0415

    from constructs_fifo import OrderedAgentQueue  # noqa: PLC0415

    stack = Stack(app, "OneQueue", description="constructs-fifo benchmark: the sample, with the construct")
    table = dynamodb.Table(
        stack,
        "WorkspaceTable",
        partition_key=dynamodb.Attribute(name="workspaceId", type=dynamodb.AttributeType.STRING),
        billing_mode=dynamodb.BillingMode.PAY_PER_REQUEST,
        point_in_time_recovery_specification=dynamodb.PointInTimeRecoverySpecification(
            point_in_time_recovery_enabled=True
        ),
        encryption=dynamodb.TableEncryption.AWS_MANAGED,
        removal_policy=RemovalPolicy.DESTROY,
    )
    jobs = OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(APP_FILE.parent / "lambda")),
        handler="notifier.handle",
        environment={"WORKSPACE_TABLE_NAME": table.table_name},
        table_removal_policy=RemovalPolicy.DESTROY,
        outputs=False,  # the stack's own outputs below, as the hand-written stack's
    )
    table.grant(jobs.function, "dynamodb:GetItem", "dynamodb:PutItem")

    assert jobs.claim_table is not None  # claim mode
    CfnOutput(stack, "QueueUrl", value=jobs.queue.queue_url)
    CfnOutput(stack, "DeadLetterQueueUrl", value=jobs.dead_letter_queue.queue_url)
    CfnOutput(stack, "ClaimTableName", value=jobs.claim_table.table_name)
    CfnOutput(stack, "WorkspaceTableName", value=table.table_name)
    CfnOutput(stack, "FunctionName", value=jobs.function.function_name)
    function_acks, dead_letter_acks = acknowledgements
    if function_acks:
        Validations.of(jobs.function).acknowledge(*function_acks)
    if dead_letter_acks:
        Validations.of(jobs.dead_letter_queue).acknowledge(*dead_letter_acks)
    return stack


def measure_synth(runs: int = 11, *, warmups: int = 5) -> SynthResult:
    """Synthesize both stacks ``runs`` times each after a warm-up; see the module docstring."""
    os.environ.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    sample_app = load_sample_app()
    from benchmarks.handwritten_stack import HandWrittenStack, vendored_code_dir  # noqa: PLC0415 - aws_cdk

    acknowledgements = (sample_app.FUNCTION_ACKNOWLEDGEMENTS, sample_app.DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    code_dir = vendored_code_dir()  # on disk before the hand-writer's `cdk synth`: not timed
    sides: dict[str, Callable[[Any], object]] = {
        "sample": lambda app: one_queue_stack(app, acknowledgements),
        "handwritten": lambda app: HandWrittenStack(
            app, "HandWritten", acknowledgements=acknowledgements, code_dir=code_dir
        ),
    }
    for _ in range(warmups):
        for build in sides.values():
            _timed(build)
    seconds: dict[str, list[float]] = {name: [] for name in sides}
    names = list(sides)
    for run in range(max(1, runs)):
        for name in names if run % 2 == 0 else reversed(names):  # each side first in every other pair
            seconds[name].append(_timed(sides[name]))
    return SynthResult(sample=seconds["sample"], handwritten=seconds["handwritten"])


def measure_synth_in_child(runs: int = 11, *, warmups: int = 5) -> SynthResult:
    """:func:`measure_synth` in a fresh interpreter (``python -m benchmarks.synth_time``).

    Raises
    ------
    RuntimeError
        The child failed (its stderr is in the message).
    """
    env = {**os.environ, "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.synth_time", "--runs", str(runs), "--warmups", str(warmups)],
        capture_output=True,
        text=True,
        check=False,
        cwd=APP_FILE.parent,
        env=env,
    )
    if done.returncode != 0:
        raise RuntimeError(f"synth timing failed in a fresh interpreter: {done.stderr.strip()[-2000:]}")
    data = json.loads(done.stdout.strip().splitlines()[-1])
    return SynthResult(sample=data["sample"], handwritten=data["handwritten"])


def main(argv: list[str] | None = None) -> int:
    """Print one :func:`measure_synth` result as JSON (the child of :func:`measure_synth_in_child`)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.synth_time")
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--warmups", type=int, default=5)
    args = parser.parse_args(argv)
    result = measure_synth(args.runs, warmups=args.warmups)
    print(json.dumps({"sample": result.sample, "handwritten": result.handwritten}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
