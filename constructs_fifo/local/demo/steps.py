"""The steps both demo scenarios share: where to run, what to deploy, how to send and drain.

- :func:`connect`: the endpoint, starting the embedded emulator when none is given (its children
  and the in-process clients get fake credentials; the user's AWS configuration is never read);
- :func:`prepare`: deploy the sample app (unless reusing a deployed stack), find its queue
  (``--queue`` for a stack of several) and what the demo reads of it;
- :func:`send`: send jobs in order, one-line errors when SQS refuses them;
- :func:`drain`: the local event source mapping, with progress; :func:`wait_until_empty`: the wait
  for the deployed function instead (real AWS).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from constructs_fifo.client import BatchSendError, JobMessage, JobProducer
from constructs_fifo.local.aws import DEFAULT_REGION, AwsTarget, configured_endpoint
from constructs_fifo.local.aws_errors import explain_error_code
from constructs_fifo.local.demo.sample_app import ENV_WORKSPACE_TABLE, STACK_NAME, SampleResources
from constructs_fifo.local.demo.workload import WorkloadSpec
from constructs_fifo.local.deploy import deploy
from constructs_fifo.local.emulator.launch import require_server_packages
from constructs_fifo.local.emulator.process import EmulatorProcess
from constructs_fifo.local.errors import DemoError
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.local.queues import queue_counts
from constructs_fifo.local.stack import DeployedQueue, resolve_queue

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "Clients",
    "DemoOptions",
    "Phase",
    "Prepared",
    "ProgressCallback",
    "Reporter",
    "connect",
    "drain",
    "make_clients",
    "prepare",
    "sample_resources",
    "send",
    "wait_until_empty",
]

Reporter = Callable[[str], None]
"""Prints one progress line (``print`` or a rich console's ``log``)."""

ProgressCallback = Callable[[int, int], None]
"""Called with (messages done, messages to do) while the queue drains."""


@dataclass(frozen=True)
class DemoOptions:
    """Everything ``constructs-fifo demo`` takes.

    Parameters
    ----------
    spec
        The workload.
    endpoint_url
        An AWS endpoint (an emulator you run); ``None`` (and no ``AWS_ENDPOINT_URL``) starts the
        embedded emulator unless ``use_emulator`` is false (then the default AWS endpoints are used:
        real AWS).
    region
        AWS region.
    stack
        Name of the deployed stack.
    queue
        Which queue of the stack (construct path or queue name); needed when it holds several.
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
    stack: str = STACK_NAME
    queue: str | None = None
    app_dir: Path = field(default_factory=Path.cwd)
    report: Path | None = None
    use_emulator: bool = True
    deploy: bool = True
    drain: bool = True
    wait_seconds: float = 900.0


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


@dataclass(frozen=True)
class Clients:
    """The boto3 clients of one run, all pointed at the same endpoint."""

    sqs: SQSClient
    dynamodb: DynamoDBClient


def make_clients(target: AwsTarget) -> Clients:
    """The run's clients, from one explicit session of ``target``."""
    session = target.session()
    return Clients(sqs=target.client("sqs", session), dynamodb=target.client("dynamodb", session))


@contextlib.contextmanager
def connect(options: DemoOptions, timings: Phase) -> Iterator[AwsTarget]:
    """Yield where the demo runs, starting the embedded emulator when there is no endpoint.

    Raises
    ------
    MissingExtraError
        The emulator is needed and the ``local`` extra is not installed.
    """
    endpoint = configured_endpoint(options.endpoint_url)
    if endpoint is not None or not options.use_emulator:
        yield AwsTarget.for_endpoint(endpoint, options.region)
        return
    require_server_packages()
    emulator = EmulatorProcess(region=options.region)
    with timings.timed("emulator_start"):
        emulator.start()
    try:
        yield emulator.target()
    finally:
        emulator.stop()


def sample_resources(queue: DeployedQueue) -> SampleResources:
    """What the demo reads of a deployed sample queue.

    Raises
    ------
    DemoError
        The queue lacks a dead-letter queue, a claim table or a worker with a workspace table:
        it is not a queue of the sample app.
    """
    workspace_table = queue.function_environment.get(ENV_WORKSPACE_TABLE)
    dead_letter_queue, claim_table = queue.dead_letter_queue_url, queue.claim_table
    if dead_letter_queue and claim_table and workspace_table:
        return SampleResources(queue.queue_url, dead_letter_queue, claim_table, workspace_table)
    missing = [
        name
        for name, value in (
            ("dead-letter queue", dead_letter_queue),
            ("claim table", claim_table),
            (f"{ENV_WORKSPACE_TABLE} in its function's environment", workspace_table),
        )
        if not value
    ]
    raise DemoError(
        f"queue {queue.describe()} of stack {queue.stack} has no {', no '.join(missing)}; the demo "
        "needs a queue of the sample app",
        "deploy the sample app (app.py, stack AgentJobs), or pass --stack and --queue naming one of its "
        "queues",
    )


@dataclass(frozen=True)
class Prepared:
    """The deployed queue a run works on, and what it reads of it."""

    queue: DeployedQueue
    resources: SampleResources


def prepare(options: DemoOptions, target: AwsTarget, *, say: Reporter = print) -> Prepared:
    """Deploy the sample stack (unless ``options.deploy`` is off), then find its queue.

    Raises
    ------
    DeployError, StackNotFoundError, QueueNotFoundError, AmbiguousQueueError, DemoError
    """
    if options.deploy:
        say(f"deploying stack {options.stack} from {options.app_dir} with the CDK CLI ...")
        deploy(options.app_dir, target=target, stack=options.stack)
    queue = resolve_queue(options.stack, target=target, queue=options.queue)
    return Prepared(queue, sample_resources(queue))


def send(messages: Sequence[JobMessage], queue_url: str, *, sqs_client: SQSClient, target: AwsTarget) -> int:
    """Send ``messages`` in order; return how many SQS accepted (a deduplicated send counts).

    Raises
    ------
    AwsError
        SQS throttled or denied the sends.
    DemoError
        SQS refused them for another reason.
    """
    try:
        return len(JobProducer(queue_url, sqs_client=sqs_client).send_batch(messages))
    except BatchSendError as error:
        first = error.failed[0]
        explained = explain_error_code(
            first.code,
            first.message,
            operation="SendMessageBatch",
            doing="demo",
            endpoint_url=target.endpoint_url,
        )
        if explained is not None:
            raise explained from error
        raise DemoError(
            f"sending the demo's jobs to {queue_url} failed: {len(error.failed)} job(s) refused, the first "
            f"with {first.code}: {first.message}",
            "fix the cause SQS names and run the demo again with another --seed",
        ) from error


def _watch_queue(
    sqs: SQSClient, queue_url: str, total: int, progress: ProgressCallback, stop: threading.Event
) -> None:
    while not stop.wait(0.25):
        try:
            left = queue_counts(sqs, queue_url).total
        except Exception:  # progress is cosmetic; the drain itself reports real errors
            continue
        progress(max(0, total - left), total)


def drain(
    prepared: Prepared,
    *,
    target: AwsTarget,
    say: Reporter = print,
    progress: ProgressCallback | None = None,
    watch: tuple[SQSClient, int] | None = None,
) -> dict[str, Any]:
    """Run the local event source mapping of the prepared queue until the queue is empty.

    Parameters
    ----------
    watch
        ``(sqs_client, total)``: poll the queue's depth to report progress.

    Returns
    -------
    dict
        The runner's statistics (:meth:`~constructs_fifo.local.event_source.runner.DrainStats.as_dict`).
    """
    stop = threading.Event()
    watcher: threading.Thread | None = None
    if progress is not None and watch is not None:
        sqs, total = watch
        watcher = threading.Thread(
            target=_watch_queue,
            args=(sqs, prepared.resources.queue_url, total, progress, stop),
            name="drain-progress",
            daemon=True,
        )
        watcher.start()
    try:
        with EventSourceRunner.from_function(
            prepared.queue.function_name, target=target, queue_arn=prepared.queue.queue_arn
        ) as runner:
            stats = runner.drain(until_empty=True)
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(timeout=2)
    if stats.skipped:
        say(f"not drained: {stats.skipped}")
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
        left = queue_counts(sqs, queue_url).total
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
