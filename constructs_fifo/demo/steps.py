"""The steps both demo scenarios share: where to run, what to deploy, how to send and drain.

- :func:`connect`: the endpoint, starting the embedded emulator when none is given (its children
  and the in-process clients get fake credentials; the user's AWS configuration is never read);
- :func:`prepare`: deploy the sample app (unless reusing a deployed stack), find its two queues by
  the contract's construct ids and what the demo reads of them;
- :func:`send`: send jobs in order, one-line errors when SQS refuses them;
- :func:`drain`: the local event source mapping of one queue, with progress, and the AWS calls its
  function made; :func:`wait_until_empty`: the wait for the deployed function instead (real AWS).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from constructs_fifo.client import BatchSendError, JobMessage, JobProducer
from constructs_fifo.demo.errors import DemoError
from constructs_fifo.demo.sample_app import (
    ENV_NOTIFICATION_TABLE,
    NOTIFICATION_QUEUE,
    STACK_NAME,
    WORKSPACE_QUEUE,
    SampleQueue,
    SampleResources,
)
from constructs_fifo.demo.workload import QueueRole, WorkloadSpec
from constructs_fifo.deploy.cdk import deploy
from constructs_fifo.local.emulator.launch import require_server_packages
from constructs_fifo.local.emulator.process import EmulatorProcess
from constructs_fifo.local.event_source.runner import EventSourceRunner
from constructs_fifo.runtime.constants import DEFAULT_MAX_ATTEMPTS, ENV_MAX_ATTEMPTS, ENV_MODE, JobMode
from constructs_fifo.stacks.aws import DEFAULT_REGION, AwsTarget, configured_endpoint
from constructs_fifo.stacks.aws_errors import explain_error_code
from constructs_fifo.stacks.counters import queue_counts
from constructs_fifo.stacks.deployed import DeployedQueue, find_queues, select_queue

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
    "results_or_cancel",
    "sample_resources",
    "send",
    "wait_until_empty",
]

K = TypeVar("K")
V = TypeVar("V")

Reporter = Callable[[str], None]
"""Prints one progress line (``print`` or a rich console's ``log``)."""

ProgressCallback = Callable[[str, int, int], None]
"""Called with (the queue's label, messages done, messages to do) while a queue drains."""


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
        Name of the deployed stack: the sample app's, whose queues are found by the contract's construct
        ids (``Workspaces``, ``Notifications``).
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


def _sample_queue(queue: DeployedQueue, mode: JobMode) -> tuple[SampleQueue | None, list[str]]:
    """The demo's view of one deployed queue, or what it lacks to be the sample's queue in ``mode``."""
    missing: list[str] = []
    if queue.dead_letter_queue_url is None:
        missing.append("no dead-letter queue")
    if queue.group_table is None:
        missing.append("no group table (PARK policy or state mode)")
    deployed_mode = queue.function_environment.get(ENV_MODE)
    if deployed_mode != mode.value:
        missing.append(f"mode {deployed_mode} instead of {mode.value}")
    if missing or queue.dead_letter_queue_url is None or queue.group_table is None:
        return None, [f"{queue.describe()} has {', '.join(missing)}"]
    return SampleQueue(queue.label, queue.queue_url, queue.dead_letter_queue_url, queue.group_table), []


def sample_resources(workspaces: DeployedQueue, notifications: DeployedQueue) -> SampleResources:
    """What the demo reads of the sample app's two deployed queues.

    Raises
    ------
    DemoError
        A queue is not what the sample app deploys (mode, dead-letter queue, group table), or the
        notification queue's function is not told its table: the stack is not the sample app.
    """
    workspace_queue, problems = _sample_queue(workspaces, JobMode.STATE)
    notification_queue, more = _sample_queue(notifications, JobMode.CLAIM)
    problems += more
    table = notifications.function_environment.get(ENV_NOTIFICATION_TABLE)
    if table is None:
        problems.append(
            f"{notifications.describe()} has no {ENV_NOTIFICATION_TABLE} in its function's environment"
        )
    if workspace_queue is None or notification_queue is None or table is None:
        raise DemoError(
            f"stack {workspaces.stack} is not the sample app: {'; '.join(problems)}; the demo needs the "
            "sample app's two queues",
            "deploy the sample app (app.py, stack AgentJobs), or pass --stack naming a stack built from it",
        )
    return SampleResources(workspace_queue, notification_queue, table)


@dataclass(frozen=True)
class Prepared:
    """The deployed queues a run works on, and what it reads of them."""

    workspaces: DeployedQueue
    notifications: DeployedQueue
    resources: SampleResources

    def by_role(self) -> tuple[tuple[QueueRole, DeployedQueue], ...]:
        """Both queues, each with the role the workload names it by."""
        return (("workspaces", self.workspaces), ("notifications", self.notifications))

    @property
    def max_attempts(self) -> int:
        """The workspace queue's ``max_attempts``, as deployed (the workload's last-attempt job needs it)."""
        raw = self.workspaces.function_environment.get(ENV_MAX_ATTEMPTS)
        return int(raw) if raw and raw.isdigit() else DEFAULT_MAX_ATTEMPTS


def prepare(options: DemoOptions, target: AwsTarget, *, say: Reporter = print) -> Prepared:
    """Deploy the sample stack (unless ``options.deploy`` is off), then find its two queues.

    Raises
    ------
    DeployError, StackNotFoundError, QueueNotFoundError, AmbiguousQueueError, DemoError
    """
    if options.deploy:
        say(f"deploying stack {options.stack} from {options.app_dir} with the CDK CLI ...")
        deploy(options.app_dir, target=target, stack=options.stack)
    queues = find_queues(options.stack, target=target)
    workspaces = select_queue(options.stack, queues, WORKSPACE_QUEUE)
    notifications = select_queue(options.stack, queues, NOTIFICATION_QUEUE)
    return Prepared(workspaces, notifications, sample_resources(workspaces, notifications))


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
    sqs: SQSClient, queue: DeployedQueue, total: int, progress: ProgressCallback, stop: threading.Event
) -> None:
    while not stop.wait(0.25):
        try:
            left = queue_counts(sqs, queue.queue_url).total
        except Exception:  # progress is cosmetic; the drain itself reports real errors
            continue
        progress(queue.label, max(0, total - left), total)


def drain(
    queue: DeployedQueue,
    *,
    target: AwsTarget,
    say: Reporter = print,
    progress: ProgressCallback | None = None,
    watch: tuple[SQSClient, int] | None = None,
    cancel: threading.Event | None = None,
) -> dict[str, Any]:
    """Run the local event source mapping of ``queue`` until it is empty.

    Parameters
    ----------
    watch
        ``(sqs_client, total)``: poll the queue's depth to report progress.
    cancel
        Set from another thread to stop the drain at once (the demo's Ctrl-C, caught on its main
        thread); a Ctrl-C on the thread running it does the same.

    Returns
    -------
    dict
        The runner's statistics (:meth:`~constructs_fifo.local.event_source.reports.DrainStats.as_dict`),
        the AWS calls of the function included.
    """
    stop = threading.Event()
    watcher: threading.Thread | None = None
    if progress is not None and watch is not None:
        sqs, total = watch
        watcher = threading.Thread(
            target=_watch_queue,
            args=(sqs, queue, total, progress, stop),
            name="drain-progress",
            daemon=True,
        )
        watcher.start()
    try:
        with EventSourceRunner.from_function(
            queue.function_name, target=target, queue_arn=queue.queue_arn
        ) as runner:
            say(f"the function log of {queue.label}: {runner.log_path}")
            stats = runner.drain(until_empty=True, cancel=cancel, say=say)
    finally:
        stop.set()
        if watcher is not None:
            watcher.join(timeout=2)
    if stats.skipped:
        say(f"not drained: {stats.skipped}")
    return dict(stats.as_dict())


def results_or_cancel(futures: Mapping[K, Future[V]], cancel: threading.Event) -> dict[K, V]:
    """Each future's result; on Ctrl-C (or any error), set ``cancel``, wait for all, re-raise.

    The demo drains its two queues on other threads, which Ctrl-C does not reach: without ``cancel``
    they would go on polling, and their executor would wait for them to empty their queues. With it
    each stops within a second, as ``drain`` does on one Ctrl-C (its workers are killed, not waited
    for; its runner removes the code it extracted).
    """
    try:
        return {key: future.result() for key, future in futures.items()}
    except BaseException:
        cancel.set()
        wait(futures.values())
        raise


def wait_until_empty(
    sqs: SQSClient,
    queue_url: str,
    *,
    total: int,
    timeout: float,
    progress: ProgressCallback | None = None,
    quiet_seconds: float = 5.0,
    poll_seconds: float = 2.0,
    cancel: threading.Event | None = None,
) -> None:
    """Wait while another consumer (the deployed Lambda) drains the queue (or until ``cancel`` is set).

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
            progress(queue_url.rsplit("/", 1)[-1], max(0, total - left), total)
        now = time.monotonic()
        if left:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= quiet_seconds:
            return
        if cancel is not None and cancel.wait(poll_seconds):
            return
        if cancel is None:
            time.sleep(poll_seconds)
    raise DemoError(
        f"the queue {queue_url} still holds messages after {timeout:.0f} s of waiting for the deployed "
        "function to drain it",
        "check the function's logs and its event source mapping (enabled?), or drain locally "
        "without --no-drain",
    )
