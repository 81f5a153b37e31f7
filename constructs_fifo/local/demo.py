"""The ``constructs-fifo demo``: emulator, deploy, send, drain, verify, in one call.

:func:`run_demo` drives the sample app end to end and returns a :class:`DemoResult` (counts, timings,
violations); :func:`run_divergence` shows seed 004's lesson: the same events for two workspaces, one
sent in order and one shuffled by the producer, delivered faithfully by FIFO, end in different
workspace states.

With no endpoint, the demo starts the embedded emulator as a child process on a free port and gives its
children (the emulator, the CDK CLI) and the in-process drain fake credentials and a region; the user's
own AWS configuration is never read or written. With an endpoint (or none at all and real credentials,
``--endpoint-url`` omitted while ``AWS_ENDPOINT_URL`` is unset and ``--no-emulator`` given) the same
code talks to whatever is there.

Examples
--------
>>> from constructs_fifo.local.demo import DemoOptions, run_demo  # doctest: +SKIP
>>> result = run_demo(DemoOptions(spec=WorkloadSpec(workspaces=4, jobs=40, poison=1)))  # doctest: +SKIP
>>> result.passed  # doctest: +SKIP
True
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import boto3

from constructs_fifo.client import JobMessage, JobProducer
from constructs_fifo.local.credentials import make_session, needs_fake_credentials
from constructs_fifo.local.deploy import child_environment, deploy, stack_outputs
from constructs_fifo.local.runner import EventSourceRunner, queue_counts
from constructs_fifo.local.verify import (
    WORKSPACE_KEY,
    Violation,
    expectations_of,
    observe,
    verify,
)
from constructs_fifo.local.workload import Workload, WorkloadSpec, generate_workload

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "DEFAULT_REGION",
    "EMULATOR_READY",
    "REQUIRED_OUTPUTS",
    "Clients",
    "DemoError",
    "DemoOptions",
    "DemoResult",
    "EmulatorProcess",
    "Phase",
    "ProgressCallback",
    "Reporter",
    "check_fresh",
    "check_outputs",
    "drain_queue",
    "endpoint_for",
    "free_port",
    "make_clients",
    "queue_depth",
    "run_demo",
    "scoped_environ",
    "send_workload",
    "wait_until_empty",
]

#: Region used for the emulator when none is given.
DEFAULT_REGION: Final = "us-east-1"
#: What ``python -m constructs_fifo.local.emulator`` prints once it serves.
EMULATOR_READY: Final = "emulator ready at "


class DemoError(Exception):
    """A demo step could not run; ``fix`` says what to do. The CLI prints both on one line."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


# --- processes and environments ---------------------------------------------------------------------


def free_port(host: str = "localhost") -> int:
    """Return a TCP port that is free on ``host`` right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        port: int = sock.getsockname()[1]
        return port


@contextlib.contextmanager
def scoped_environ(values: Mapping[str, str]) -> Iterator[None]:
    """Set environment variables of this process for the block and restore them afterwards.

    The drain runs the function's handler in-process, and the handler builds its boto3 clients from the
    environment, as it would in Lambda; this is how it gets the emulator's endpoint and credentials
    without anything outliving the demo.
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


class EmulatorProcess:
    """The embedded emulator as a child process: ``python -m constructs_fifo.local.emulator``.

    Parameters
    ----------
    port
        Port to serve on; 0 picks a free one.
    region
        Region given to the child.
    startup_timeout
        Seconds to wait for the ready line before giving up.
    command
        The command to run instead of ``python -m constructs_fifo.local.emulator --port PORT`` (tests).
    """

    def __init__(
        self,
        port: int = 0,
        *,
        region: str = DEFAULT_REGION,
        startup_timeout: float = 60.0,
        command: Sequence[str] | None = None,
    ) -> None:
        self.port = port or free_port()
        self.command = (
            list(command)
            if command is not None
            else [sys.executable, "-m", "constructs_fifo.local.emulator", "--port", str(self.port)]
        )
        self.region = region
        self.startup_timeout = startup_timeout
        self.endpoint_url = f"http://localhost:{self.port}"
        self._process: subprocess.Popen[str] | None = None
        self._output: list[str] = []

    def start(self) -> str:
        """Start the child and return its endpoint URL once it reports ready.

        Raises
        ------
        DemoError
            When the child exits or stays silent past ``startup_timeout``.
        """
        self._process = subprocess.Popen(
            self.command,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=child_environment(region=self.region, fake_credentials=True),
        )
        lines: queue.Queue[str | None] = queue.Queue()
        stdout = self._process.stdout
        assert stdout is not None  # Popen was given stdout=PIPE

        def pump() -> None:
            for line in stdout:
                lines.put(line.rstrip("\n"))
            lines.put(None)

        threading.Thread(target=pump, name="emulator-output", daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.stop()
                raise DemoError(
                    f"the local emulator did not report ready on port {self.port} within "
                    f"{self.startup_timeout:.0f} s (last output: {self._last_output()})",
                    "run `constructs-fifo local serve --port 4566` to see why, then pass "
                    "--endpoint-url http://localhost:4566",
                )
            try:
                line = lines.get(timeout=remaining)
            except queue.Empty:
                continue
            if line is None:
                code = self._process.wait()
                raise DemoError(
                    f"the local emulator exited with code {code} before it was ready "
                    f"(last output: {self._last_output()})",
                    "check that the 'local' extra is installed (pip install 'constructs-fifo[local]') "
                    "and run `constructs-fifo local serve` to see the full error",
                )
            self._output.append(line)
            if EMULATOR_READY in line:
                return self.endpoint_url

    def _last_output(self) -> str:
        return self._output[-1] if self._output else "nothing"

    def stop(self) -> None:
        """Stop the child (terminate, then kill after 5 s); safe to call twice."""
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)

    def __enter__(self) -> EmulatorProcess:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()


# --- the phases ------------------------------------------------------------------------------------------


@dataclass
class Phase:
    """Wall-clock seconds of each demo phase, in the order they ran."""

    seconds: dict[str, float] = field(default_factory=dict)

    @contextlib.contextmanager
    def timed(self, name: str) -> Iterator[None]:
        """Time the block as phase ``name``."""
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = round(time.perf_counter() - started, 3)


def send_workload(workload: Workload, queue_url: str, *, sqs_client: SQSClient) -> int:
    """Send the workload's plan in order; return the number of sends SQS accepted."""
    producer = JobProducer(queue_url, sqs_client=sqs_client)
    accepted = 0
    for batch in workload.batches():
        messages = [
            JobMessage(
                send.job.job_id,
                send.job.job_type,
                dict(send.job.payload),
                group=send.job.group,
                deduplication_id=send.deduplication_id,
            )
            for send in batch
        ]
        accepted += len(producer.send_batch(messages))
    return accepted


def queue_depth(sqs_client: SQSClient, queue_url: str) -> int:
    """Visible plus in-flight plus delayed messages of a queue."""
    return sum(queue_counts(sqs_client, queue_url))


@dataclass(frozen=True)
class DemoOptions:
    """Everything ``constructs-fifo demo`` takes.

    Parameters
    ----------
    spec
        The workload.
    endpoint_url
        An AWS endpoint (an emulator you run); ``None`` starts the embedded emulator unless
        ``use_emulator`` is false (then the default AWS endpoints are used: real AWS).
    region
        AWS region.
    stack
        Name of the deployed stack.
    app_dir
        Directory with the sample app's ``cdk.json``.
    report
        Where to write the JSON report, if anywhere.
    use_emulator
        Start the embedded emulator when no endpoint is given.
    deploy
        Deploy first (``False`` reuses a deployed stack).
    drain
        Drain with the local event source runner; ``False`` waits for the deployed function (real
        AWS) to drain the queue instead, up to ``wait_seconds``.
    wait_seconds
        How long to wait for the deployed function when ``drain`` is false.
    """

    spec: WorkloadSpec = field(default_factory=WorkloadSpec)
    endpoint_url: str | None = None
    region: str = DEFAULT_REGION
    stack: str = "AgentJobs"
    app_dir: Path = field(default_factory=Path.cwd)
    report: Path | None = None
    use_emulator: bool = True
    deploy: bool = True
    drain: bool = True
    wait_seconds: float = 900.0


@dataclass
class DemoResult:
    """What a demo run measured and found."""

    options: DemoOptions
    endpoint_url: str | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    timings: Phase = field(default_factory=Phase)
    violations: list[Violation] = field(default_factory=list)
    drain_stats: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        """True when verification found no violation."""
        return not self.violations

    def to_dict(self) -> dict[str, Any]:
        """The JSON report."""
        spec = self.options.spec
        return {
            "passed": self.passed,
            "endpoint_url": self.endpoint_url or "aws",
            "region": self.options.region,
            "stack": self.options.stack,
            "workload": {
                "workspaces": spec.workspaces,
                "jobs": spec.jobs,
                "duplicate_rate": spec.duplicate_rate,
                "failure_rate": spec.failure_rate,
                "poison": spec.poison,
                "seed": spec.seed,
            },
            "outputs": self.outputs,
            "counts": self.counts,
            "timings_seconds": {
                **self.timings.seconds,
                "total": round(sum(self.timings.seconds.values()), 3),
            },
            "drain": self.drain_stats,
            "violations": [violation.to_dict() for violation in self.violations],
        }

    def write_report(self, path: Path) -> None:
        """Write :meth:`to_dict` as indented JSON, creating the directory."""
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_dict(), indent=2, default=str) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class Clients:
    """The boto3 clients of one run, all pointed at the same endpoint."""

    sqs: SQSClient
    dynamodb: DynamoDBClient


def make_clients(endpoint_url: str | None, region: str, *, fake_credentials: bool) -> Clients:
    """Build the run's clients from an explicit session (never the process-wide default session)."""
    session = make_session(region, fake_credentials=fake_credentials)
    return Clients(
        sqs=session.client("sqs", endpoint_url=endpoint_url),
        dynamodb=session.client("dynamodb", endpoint_url=endpoint_url),
    )


#: The stack outputs the demo reads.
REQUIRED_OUTPUTS: Final = ("QueueUrl", "DeadLetterQueueUrl", "ClaimTableName", "WorkspaceTableName")


def check_outputs(stack: str, outputs: Mapping[str, str]) -> None:
    """Raise :class:`DemoError` when the deployed stack lacks an output the demo reads."""
    missing = [name for name in REQUIRED_OUTPUTS if not outputs.get(name)]
    if missing:
        raise DemoError(
            f"stack {stack} has no output {', '.join(missing)} "
            f"(it has: {', '.join(sorted(outputs)) or 'none'}); the demo needs the sample app's outputs",
            "deploy the sample app (app.py, stack AgentJobs) or pass --stack with a stack that has them",
        )


def check_fresh(workload: Workload, *, outputs: Mapping[str, str], dynamodb: DynamoDBClient) -> None:
    """Refuse to run a workload whose workspaces already exist (an earlier run with the same seed)."""
    for workspace in workload.workspace_ids[:3]:
        item = dynamodb.get_item(
            TableName=outputs["WorkspaceTableName"],
            Key={WORKSPACE_KEY: {"S": workspace}},
            ConsistentRead=True,
        ).get("Item")
        if item is not None:
            raise DemoError(
                f"workspace {workspace} already exists in {outputs['WorkspaceTableName']}: seed "
                f"{workload.spec.seed} was already run against this deployment, so its jobs would be "
                "skipped as duplicates",
                f"pass another --seed (e.g. --seed {workload.spec.seed + 1}) or use a fresh emulator",
            )


ProgressCallback = Callable[[int, int], None]
"""Called with (messages done, messages to do) while the queue drains."""


def _watch_queue(
    sqs: SQSClient, queue_url: str, total: int, progress: ProgressCallback, stop: threading.Event
) -> None:
    while not stop.wait(0.25):
        try:
            left = queue_depth(sqs, queue_url)
        except Exception:  # progress is cosmetic; the drain itself reports real errors
            continue
        progress(max(0, total - left), total)


def drain_queue(
    stack: str,
    *,
    endpoint_url: str | None,
    region: str,
    session: boto3.session.Session | None = None,
    until_empty: bool = True,
    for_seconds: float | None = None,
    progress: ProgressCallback | None = None,
    watch: tuple[SQSClient, str, int] | None = None,
) -> dict[str, Any]:
    """Run the local event source mapping of ``stack`` (see :mod:`constructs_fifo.local.runner`).

    Parameters
    ----------
    session
        Where the runner reads the deployment and whose credentials its workers get.
    watch
        ``(sqs_client, queue_url, total)``: poll the queue's depth to report progress.

    Returns
    -------
    dict
        The runner's statistics (:meth:`DrainStats.as_dict`).
    """
    stop = threading.Event()
    watcher: threading.Thread | None = None
    if progress is not None and watch is not None:
        sqs, queue_url, total = watch
        watcher = threading.Thread(
            target=_watch_queue,
            args=(sqs, queue_url, total, progress, stop),
            name="drain-progress",
            daemon=True,
        )
        watcher.start()
    try:
        with EventSourceRunner.from_stack(
            stack, session=session, endpoint_url=endpoint_url, region=region
        ) as runner:
            stats = runner.drain(until_empty=until_empty, for_seconds=for_seconds)
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(timeout=2)
    return dict(stats.as_dict())


def wait_until_empty(
    sqs: SQSClient,
    queue_url: str,
    *,
    total: int,
    timeout: float,
    progress: ProgressCallback | None = None,
    quiet_seconds: float = 5.0,
    poll_seconds: float = 2.0,
) -> None:
    """Wait while another consumer (the deployed Lambda) drains the queue.

    Raises
    ------
    DemoError
        When the queue is not empty (for ``quiet_seconds``) within ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    quiet_since: float | None = None
    while time.monotonic() < deadline:
        left = queue_depth(sqs, queue_url)
        if progress is not None:
            progress(max(0, total - left), total)
        now = time.monotonic()
        if left:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= quiet_seconds:
            return
        time.sleep(poll_seconds)
    raise DemoError(
        f"the queue {queue_url} still holds messages after {timeout:.0f} s of waiting for the deployed "
        "function to drain it",
        "check the function's logs and its event source mapping (enabled?), or drain locally "
        "without --no-drain",
    )


@contextlib.contextmanager
def endpoint_for(options: DemoOptions, timings: Phase) -> Iterator[tuple[str | None, bool]]:
    """Yield ``(endpoint_url, fake_credentials)``, starting the embedded emulator when needed."""
    endpoint = options.endpoint_url or os.environ.get("AWS_ENDPOINT_URL") or None
    if endpoint is not None or not options.use_emulator:
        yield endpoint, needs_fake_credentials(endpoint, started_emulator=False)
        return
    emulator = EmulatorProcess(region=options.region)
    with timings.timed("emulator_start"):
        endpoint = emulator.start()
    try:
        yield endpoint, True
    finally:
        emulator.stop()


Reporter = Callable[[str], None]
"""Prints one progress line (``print`` or a rich console's ``log``)."""


def deploy_or_read_outputs(
    options: DemoOptions,
    endpoint: str | None,
    *,
    fake_credentials: bool,
    say: Reporter = print,
) -> dict[str, str]:
    """Deploy the sample stack (or, with ``options.deploy`` off, read the deployed one's outputs).

    The CDK CLI runs in :func:`child_environment` of ``endpoint`` and ``fake_credentials``.

    Returns
    -------
    dict
        The stack outputs, checked to hold every output the demo needs.
    """
    if options.deploy:
        say(f"deploying stack {options.stack} from {options.app_dir} with the CDK CLI ...")
        env = child_environment(
            endpoint_url=endpoint, region=options.region, fake_credentials=fake_credentials
        )
        outputs = deploy(
            options.app_dir, stack=options.stack, endpoint_url=endpoint, region=options.region, env=env
        )
    else:
        session = make_session(options.region, fake_credentials=fake_credentials)
        outputs = stack_outputs(
            options.stack, cloudformation_client=session.client("cloudformation", endpoint_url=endpoint)
        )
    check_outputs(options.stack, outputs)
    return dict(outputs)


def run_demo(
    options: DemoOptions,
    *,
    say: Reporter = print,
    progress: ProgressCallback | None = None,
) -> DemoResult:
    """Run the whole demo and return what it measured.

    Parameters
    ----------
    options
        What to run against and what to send.
    say
        Receives one line per phase.
    progress
        Receives ``(done, total)`` while the queue drains.

    Raises
    ------
    DemoError, constructs_fifo.local.deploy.DeployError
        When a step cannot run (emulator, deploy, a reused seed); violations are not errors but part
        of the result.
    """
    workload = generate_workload(options.spec)
    result = DemoResult(options=options)
    timings = result.timings
    with endpoint_for(options, timings) as (endpoint, fake):
        result.endpoint_url = endpoint
        say(f"endpoint: {endpoint or 'AWS (default endpoints)'} in {options.region}")
        clients = make_clients(endpoint, options.region, fake_credentials=fake)
        with timings.timed("deploy"):
            outputs = deploy_or_read_outputs(options, endpoint, fake_credentials=fake, say=say)
        result.outputs = dict(outputs)
        check_fresh(workload, outputs=outputs, dynamodb=clients.dynamodb)

        with timings.timed("send"):
            say(f"sending {len(workload.sends)} messages for {len(workload.jobs)} jobs ...")
            accepted = send_workload(workload, outputs["QueueUrl"], sqs_client=clients.sqs)
        delivered = queue_depth(clients.sqs, outputs["QueueUrl"])

        with timings.timed("drain"):
            if not options.drain:
                say(f"waiting for the deployed function to drain {delivered} messages ...")
                wait_until_empty(
                    clients.sqs,
                    outputs["QueueUrl"],
                    total=delivered,
                    timeout=options.wait_seconds,
                    progress=progress,
                )
            else:
                say(f"draining {delivered} messages through the function's handler ...")
                result.drain_stats = drain_queue(
                    options.stack,
                    endpoint_url=endpoint,
                    region=options.region,
                    session=make_session(options.region, fake_credentials=fake),
                    progress=progress,
                    watch=(clients.sqs, outputs["QueueUrl"], delivered),
                )

        with timings.timed("verify"):
            say("verifying workspaces, claims and queues ...")
            observed = observe(
                workload.workspace_ids,
                outputs=outputs,
                sqs_client=clients.sqs,
                dynamodb_client=clients.dynamodb,
            )
            result.violations = verify(expectations_of(workload), observed)

    applied = sum(len(order) for order in observed.applied.values())
    ours = {job.job_id for job in workload.jobs}
    applied_ids = {job_id for order in observed.applied.values() for job_id in order}
    dead_letter_ids = set(observed.dead_letter_job_ids)
    dead_lettered = sum(1 for job_id in observed.dead_letter_job_ids if job_id in ours)  # messages
    duplicates = workload.count("sqs_duplicate") + workload.count("late_duplicate")
    result.counts = {
        "jobs": len(workload.jobs),
        "messages_sent": accepted,
        "duplicates_sent": duplicates,
        "duplicates_same_dedup_id": workload.count("sqs_duplicate"),
        "duplicates_new_dedup_id": workload.count("late_duplicate"),
        "delivered_by_sqs": delivered,
        "collapsed_by_sqs": accepted - delivered,
        "skipped_by_claims": max(0, delivered - applied - dead_lettered),
        "applied": applied,
        "transient_failures": len(workload.transient_jobs),
        "transient_failures_recovered": sum(
            1 for job in workload.transient_jobs if job.job_id in applied_ids
        ),
        "redeliveries": max(0, int(result.drain_stats.get("records", delivered)) - delivered),
        "transient_retries_planned": sum(job.fail_attempts for job in workload.transient_jobs),
        "poison_sent": len(workload.poison_jobs),
        "poison_dead_lettered": sum(1 for job in workload.poison_jobs if job.job_id in dead_letter_ids),
        "violations": len(result.violations),
    }
    if options.report is not None:
        result.write_report(options.report)
    return result
