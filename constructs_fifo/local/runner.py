"""The local event source mapping: poll a FIFO queue as Lambda does and run the deployed handler.

``EventSourceRunner.from_stack`` reads what is deployed on an endpoint: the function's event source
mapping (BatchSize, ScalingConfig.MaximumConcurrency, FunctionResponseTypes), its configuration
(Handler, Timeout, MemorySize, Environment, reserved concurrency), its code, and the queue's
VisibilityTimeout and RedrivePolicy. ``drain`` then does what Lambda's pollers do:

- ReceiveMessage batches of up to BatchSize with every system attribute, turned into real Lambda SQS
  events (``eventSource`` ``aws:sqs``, ``eventSourceARN``, ``awsRegion``, ``md5OfBody``...);
- as many batches in flight as the concurrency allows (MaximumConcurrency, else reserved
  concurrency), each in its own long-lived worker process (one per slot: the cold start happens once);
- with ReportBatchItemFailures, DeleteMessageBatch for every record the response does not list; an
  invalid response, a handler exception or a timeout leaves the whole batch, which comes back after
  the visibility timeout; SQS's own ``maxReceiveCount`` moves messages to the dead-letter queue.

The handler runs in a worker subprocess whose ``sys.path`` starts with the function's extracted code
and whose environment is the function's environment (plus region, endpoint and credentials), so the
deployed copy of the code runs, not the installed package, and two functions never share variables.

Examples
--------
>>> with EventSourceRunner.from_stack("AgentJobs", endpoint_url="http://localhost:4566") as runner:
...     stats = runner.drain(until_empty=True)  # doctest: +SKIP
>>> stats.succeeded  # doctest: +SKIP
500
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
import uuid
import zipfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, Self

import boto3
from botocore.exceptions import ClientError

from constructs_fifo.local.credentials import FAKE_CREDENTIALS, session_for

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_sqs.client import SQSClient
    from mypy_boto3_sqs.type_defs import MessageTypeDef

__all__ = [
    "DEFAULT_CONCURRENCY",
    "BatchReport",
    "CodeNotFoundError",
    "DrainStats",
    "EventSourceRunner",
    "FunctionSettings",
    "MappingNotFoundError",
    "MappingSettings",
    "QueueSettings",
    "RunnerError",
    "build_event",
    "build_record",
    "fetch_function_code",
    "parse_batch_response",
    "queue_counts",
]

#: Concurrency when the mapping has no MaximumConcurrency and the function no reserved concurrency.
DEFAULT_CONCURRENCY: Final = 5
#: Extra time a worker gets past the function timeout before it is killed (pipe and JSON overhead).
TIMEOUT_GRACE_SECONDS: Final = 0.5
_WORKER_SCRIPT: Final = Path(__file__).with_name("worker.py")
_PASSED_THROUGH: Final = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "TZ")


class RunnerError(Exception):
    """Base class of the errors of the local event source runner."""


class MappingNotFoundError(RunnerError):
    """The function has no SQS event source mapping, or the stack no function."""


class CodeNotFoundError(RunnerError):
    """The deployed function's code could not be fetched."""


class WorkerError(RunnerError):
    """A worker process died or broke the protocol."""


@dataclass(frozen=True, slots=True)
class FunctionSettings:
    """What the runner needs of the deployed function."""

    name: str
    arn: str
    handler: str
    timeout_seconds: int
    memory_mb: int
    environment: Mapping[str, str]
    reserved_concurrency: int | None
    code_dir: Path


@dataclass(frozen=True, slots=True)
class MappingSettings:
    """What the runner needs of the event source mapping."""

    uuid: str
    event_source_arn: str
    batch_size: int
    maximum_concurrency: int | None
    report_batch_item_failures: bool
    enabled: bool


@dataclass(frozen=True, slots=True)
class QueueSettings:
    """What the runner needs of the source queue."""

    url: str
    arn: str
    visibility_timeout_seconds: int
    max_receive_count: int | None
    dead_letter_queue_arn: str | None


@dataclass(frozen=True, slots=True)
class BatchReport:
    """One invocation, as passed to ``drain(on_batch=...)``.

    Attributes
    ----------
    slot:
        The concurrency slot (worker) that ran it.
    message_ids:
        The records' message ids, in batch order.
    groups:
        The records' message group ids, in batch order.
    deleted:
        Message ids deleted from the queue (succeeded).
    failed:
        Message ids left on the queue: reported failed, or every record on a handler error/timeout.
    error:
        ``None``, or what went wrong with the invocation (``"Timeout"``, the exception's type and
        message, or ``"InvalidResponse: ..."``).
    duration_seconds:
        Time in the handler.
    cold_start:
        Whether this invocation started its worker.
    """

    slot: int
    message_ids: tuple[str, ...]
    groups: tuple[str, ...]
    deleted: tuple[str, ...]
    failed: tuple[str, ...]
    error: str | None
    duration_seconds: float
    cold_start: bool


@dataclass(slots=True)
class DrainStats:
    """Totals of one ``drain``.

    Attributes
    ----------
    batches:
        Invocations.
    records:
        Records delivered (a record received twice counts twice).
    succeeded:
        Records deleted after the handler returned.
    failed_reported:
        Records listed in ``batchItemFailures`` (left on the queue).
    handler_errors:
        Invocations that raised, returned an invalid response, or timed out (their whole batch left).
    timeouts:
        Invocations killed at the function timeout (also counted in ``handler_errors``).
    cold_starts:
        Worker processes started.
    delete_failures:
        Records whose delete SQS refused (e.g. the receipt handle expired after a long invocation).
    elapsed_seconds:
        Wall time of the drain.
    """

    batches: int = 0
    records: int = 0
    succeeded: int = 0
    failed_reported: int = 0
    handler_errors: int = 0
    timeouts: int = 0
    cold_starts: int = 0
    delete_failures: int = 0
    elapsed_seconds: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def as_dict(self) -> dict[str, float | int]:
        """The totals as a plain dict (for JSON reports)."""
        return {
            "batches": self.batches,
            "records": self.records,
            "succeeded": self.succeeded,
            "failed_reported": self.failed_reported,
            "handler_errors": self.handler_errors,
            "timeouts": self.timeouts,
            "cold_starts": self.cold_starts,
            "delete_failures": self.delete_failures,
            "elapsed_seconds": round(self.elapsed_seconds, 3),
        }


# --- events -------------------------------------------------------------------------------------------


def _lambda_message_attributes(attributes: Mapping[str, Any]) -> dict[str, Any]:
    converted: dict[str, Any] = {}
    for name, value in attributes.items():
        binary = value.get("BinaryValue")
        converted[name] = {
            "stringValue": value.get("StringValue"),
            "binaryValue": base64.b64encode(binary).decode() if isinstance(binary, bytes) else binary,
            "stringListValues": list(value.get("StringListValues", [])),
            "binaryListValues": [
                base64.b64encode(b).decode() if isinstance(b, bytes) else b
                for b in value.get("BinaryListValues", [])
            ],
            "dataType": value.get("DataType"),
        }
    return converted


def build_record(
    message: MessageTypeDef | Mapping[str, Any], *, queue_arn: str, region: str
) -> dict[str, Any]:
    """Turn one ReceiveMessage message into a Lambda SQS event record.

    Parameters
    ----------
    message:
        A message as ReceiveMessage returns it (with ``Attributes`` and ``MessageAttributes``).
    queue_arn:
        The queue's ARN (``eventSourceARN``).
    region:
        ``awsRegion``.
    """
    body = message["Body"]
    record: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": body,
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": _lambda_message_attributes(message.get("MessageAttributes", {})),
        "md5OfBody": message.get("MD5OfBody") or hashlib.md5(body.encode()).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": region,
    }
    if message.get("MD5OfMessageAttributes"):
        record["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    return record


def build_event(
    messages: Sequence[MessageTypeDef | Mapping[str, Any]], *, queue_arn: str, region: str
) -> dict[str, Any]:
    """Return the Lambda SQS event ``{"Records": [...]}`` for a received batch."""
    return {"Records": [build_record(m, queue_arn=queue_arn, region=region) for m in messages]}


def parse_batch_response(result: Any, message_ids: Sequence[str]) -> tuple[set[str], str | None]:
    """Read a handler's response as Lambda reads it with ReportBatchItemFailures.

    Returns
    -------
    tuple[set[str], str | None]
        The message ids reported failed, and ``None``; or every id and the reason when the response
        is invalid (Lambda then treats the whole batch as failed).

    Notes
    -----
    ``None``, an empty dict or an empty ``batchItemFailures`` mean complete success. An item with a
    missing, empty or unknown ``itemIdentifier`` makes the whole batch fail.
    """
    if result is None or result in ({}, ""):
        return set(), None
    if not isinstance(result, dict):
        return set(message_ids), f"InvalidResponse: the response is a {type(result).__name__}, not an object"
    failures = result.get("batchItemFailures")
    if failures is None:
        return set(), None
    if not isinstance(failures, list):
        return set(message_ids), "InvalidResponse: batchItemFailures is not a list"
    failed: set[str] = set()
    known = set(message_ids)
    for item in failures:
        identifier = item.get("itemIdentifier") if isinstance(item, dict) else None
        if not isinstance(identifier, str) or identifier not in known:
            return set(
                message_ids
            ), f"InvalidResponse: itemIdentifier {identifier!r} is not a record of the batch"
        failed.add(identifier)
    return failed, None


# --- reading the deployment -----------------------------------------------------------------------


def _safe_extract(archive: bytes, dest: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        root = dest.resolve()
        for member in zipped.infolist():
            target = (dest / member.filename).resolve()
            if not target.is_relative_to(root):
                raise CodeNotFoundError(
                    f"the code archive holds {member.filename!r}, outside the extraction directory; "
                    "archives must hold relative paths only. Fix: rebuild the asset."
                )
        zipped.extractall(dest)


def fetch_function_code(
    function_name: str,
    dest: Path,
    *,
    lambda_client: LambdaClient,
    s3_client: Any = None,
    endpoint_url: str | None = None,
    location: str | None = None,
) -> Path:
    """Download and extract the deployed function's code into ``dest``.

    On AWS, ``GetFunction``'s ``Code.Location`` is a presigned URL and is downloaded. On an emulator
    (``endpoint_url`` given) the location is not reachable; its path is the asset's S3 key
    (``<hash>.zip`` in the CDK bootstrap bucket), so the object is looked up in the endpoint's
    buckets, the ``cdk-`` ones first.

    ``location`` is ``Code.Location`` when the caller already has the ``GetFunction`` response;
    without it, ``GetFunction`` is called.

    Raises
    ------
    CodeNotFoundError
        Nothing could be fetched; the message says how to pass the code directly.
    """
    if location is None:
        location = lambda_client.get_function(FunctionName=function_name).get("Code", {}).get("Location", "")
    archive: bytes | None = None
    tried: list[str] = []
    if endpoint_url is None and location.startswith("https://"):
        tried.append(location.split("?")[0])
        with contextlib.suppress(OSError), urllib.request.urlopen(location, timeout=60) as response:
            archive = response.read()
    elif location and s3_client is not None:
        key = urllib.parse.unquote(urllib.parse.urlparse(location).path.lstrip("/"))
        buckets = sorted(
            (b["Name"] for b in s3_client.list_buckets().get("Buckets", [])),
            key=lambda name: (not name.startswith("cdk-"), name),
        )
        for bucket in buckets:
            tried.append(f"s3://{bucket}/{key}")
            try:
                archive = s3_client.get_object(Bucket=bucket, Key=key)["Body"].read()
                break
            except ClientError:
                continue
    if archive is None:
        raise CodeNotFoundError(
            f"the code of function {function_name!r} could not be fetched (location {location!r}; tried "
            f"{', '.join(tried) or 'nothing'}); the runner must run the deployed code. Fix: deploy it "
            "with an S3 asset (cdk deploy does), or pass code_dir= with the function's code."
        )
    dest.mkdir(parents=True, exist_ok=True)
    _safe_extract(archive, dest)
    return dest


def _arn_parts(arn: str) -> tuple[str, str, str]:
    """``(region, account, name)`` of an SQS queue ARN."""
    parts = arn.split(":")
    if len(parts) != 6 or parts[2] != "sqs":
        raise MappingNotFoundError(
            f"event source {arn!r} is not an SQS queue ARN; the runner polls SQS queues only. "
            "Fix: point it at a function whose event source mapping reads an SQS FIFO queue."
        )
    return parts[3], parts[4], parts[5]


def _read_mapping(function_name: str, lambda_client: LambdaClient) -> MappingSettings:
    mappings = lambda_client.list_event_source_mappings(FunctionName=function_name).get(
        "EventSourceMappings", []
    )
    sqs_mappings = [m for m in mappings if m.get("EventSourceArn", "").startswith("arn:aws:sqs:")]
    if not sqs_mappings:
        raise MappingNotFoundError(
            f"function {function_name!r} has no SQS event source mapping; the runner needs one to know what "
            "to poll. Fix: deploy the stack (the OrderedAgentQueue construct creates the mapping)."
        )
    if len(sqs_mappings) > 1:
        raise MappingNotFoundError(
            f"function {function_name!r} has {len(sqs_mappings)} SQS event source mappings; the runner "
            "drives exactly one. Fix: give each queue its own function."
        )
    [mapping] = sqs_mappings
    scaling = mapping.get("ScalingConfig") or {}
    return MappingSettings(
        uuid=mapping.get("UUID", ""),
        event_source_arn=mapping["EventSourceArn"],
        batch_size=int(mapping.get("BatchSize") or 10),
        maximum_concurrency=int(scaling["MaximumConcurrency"]) if scaling.get("MaximumConcurrency") else None,
        report_batch_item_failures="ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []),
        enabled=mapping.get("State", "Enabled") in {"Enabled", "Enabling", "Creating", "Updating"},
    )


def _read_queue(arn: str, sqs_client: SQSClient) -> QueueSettings:
    _, account, name = _arn_parts(arn)
    url = sqs_client.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
    attributes = sqs_client.get_queue_attributes(QueueUrl=url, AttributeNames=["All"]).get("Attributes", {})
    redrive = json.loads(attributes["RedrivePolicy"]) if attributes.get("RedrivePolicy") else {}
    return QueueSettings(
        url=url,
        arn=attributes.get("QueueArn", arn),
        visibility_timeout_seconds=int(attributes.get("VisibilityTimeout", "30")),
        max_receive_count=int(redrive["maxReceiveCount"]) if "maxReceiveCount" in redrive else None,
        dead_letter_queue_arn=redrive.get("deadLetterTargetArn"),
    )


# --- workers --------------------------------------------------------------------------------------------


class _Worker:
    """One worker subprocess (one concurrency slot's execution environment)."""

    def __init__(self, command: list[str], env: Mapping[str, str], log: Any) -> None:
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env=dict(env),
        )
        self._buffer = b""

    def read_line(self, timeout: float | None) -> dict[str, Any] | None:
        """The next protocol line, or ``None`` when ``timeout`` passed first."""
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        deadline = None if timeout is None else time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return None
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                raise WorkerError(
                    f"worker process {self.process.pid} exited (status {self.process.poll()}) without "
                    "answering; a worker must answer every request. Fix: see the function log."
                )
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        decoded: dict[str, Any] = json.loads(line)
        return decoded

    def send(self, request: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(request).encode() + b"\n")
        self.process.stdin.flush()

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=5)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def close(self) -> None:
        if self.process.stdin is not None:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.kill()
        if self.process.stdout is not None:
            self.process.stdout.close()


# --- the runner -------------------------------------------------------------------------------------------


class EventSourceRunner:
    """Poll an SQS FIFO queue as Lambda's event source mapping does and run the deployed handler.

    Build it with :meth:`from_stack` or :meth:`from_function`; use it as a context manager (or call
    :meth:`close`) so its workers and extracted code are cleaned up.

    Parameters
    ----------
    function, mapping, queue:
        The deployed settings.
    sqs_client:
        Client for ReceiveMessage, DeleteMessageBatch and the queue counters.
    region:
        ``awsRegion`` of the records and ``AWS_REGION`` of the workers.
    endpoint_url:
        Passed to the workers as ``AWS_ENDPOINT_URL`` (``None`` on AWS).
    credentials:
        ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``/``AWS_SESSION_TOKEN`` for the workers;
        by default fake ones with an endpoint, none otherwise.
    concurrency:
        Overrides the concurrency read from the deployment.
    log_path:
        Where the workers' stderr (the function log) goes; by default a new temporary file, kept
        after :meth:`close` so it can be read.
    """

    def __init__(
        self,
        function: FunctionSettings,
        mapping: MappingSettings,
        queue: QueueSettings,
        *,
        sqs_client: SQSClient,
        region: str,
        endpoint_url: str | None = None,
        credentials: Mapping[str, str] | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
        cleanup: Sequence[Path] = (),
    ) -> None:
        self.function = function
        self.mapping = mapping
        self.queue = queue
        self.region = region
        self.endpoint_url = endpoint_url
        self._sqs = sqs_client
        self._cleanup = list(cleanup)
        self.concurrency = concurrency if concurrency is not None else self.deployed_concurrency()
        if self.concurrency < 1:
            raise RunnerError(
                f"concurrency {self.concurrency!r} must be at least 1. Fix: pass concurrency=1 or more."
            )
        if credentials is None:
            credentials = dict(FAKE_CREDENTIALS) if endpoint_url is not None else {}
        self._credentials = dict(credentials)
        if log_path is None:
            handle, name = tempfile.mkstemp(prefix=f"{function.name}-", suffix=".log")
            os.close(handle)  # reopened below for appending; the file outlives the runner for reading
            log_path = Path(name)
        self.log_path = log_path
        self._log = self.log_path.open("ab")
        self._workers: dict[int, _Worker] = {}
        self._stop = threading.Event()

    # -- construction ---------------------------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        function_name: str,
        *,
        session: boto3.Session | None = None,
        endpoint_url: str | None = None,
        region: str | None = None,
        lambda_client: LambdaClient | None = None,
        sqs_client: SQSClient | None = None,
        s3_client: Any = None,
        code_dir: str | os.PathLike[str] | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
    ) -> EventSourceRunner:
        """Read a deployed function, its SQS mapping and queue, fetch its code, and build a runner.

        Parameters
        ----------
        function_name:
            The function's name or ARN.
        session, endpoint_url, region:
            Where to read from; clients passed explicitly win.
        code_dir:
            The function's code, when it should not be fetched (e.g. a function created from a zip
            file on an emulator that cannot serve it back).
        """
        session = session or session_for(endpoint_url, region)
        region = region or session.region_name or "us-east-1"
        lambda_ = lambda_client or session.client("lambda", endpoint_url=endpoint_url, region_name=region)
        sqs = sqs_client or session.client("sqs", endpoint_url=endpoint_url, region_name=region)
        config = lambda_.get_function(FunctionName=function_name)
        configuration = config["Configuration"]
        mapping = _read_mapping(configuration["FunctionName"], lambda_)
        queue = _read_queue(mapping.event_source_arn, sqs)
        cleanup: list[Path] = []
        if code_dir is None:
            scratch = Path(tempfile.mkdtemp(prefix=f"constructs-fifo-{configuration['FunctionName']}-"))
            cleanup.append(scratch)
            s3 = s3_client or session.client("s3", endpoint_url=endpoint_url, region_name=region)
            try:
                code_path = fetch_function_code(
                    configuration["FunctionName"],
                    scratch / "code",
                    lambda_client=lambda_,
                    s3_client=s3,
                    endpoint_url=endpoint_url,
                    location=config.get("Code", {}).get("Location", ""),
                )
            except Exception:
                shutil.rmtree(scratch, ignore_errors=True)
                raise
        else:
            code_path = Path(code_dir).resolve()
        function = FunctionSettings(
            name=configuration["FunctionName"],
            arn=configuration["FunctionArn"],
            handler=configuration.get("Handler", ""),
            timeout_seconds=int(configuration.get("Timeout", 3)),
            memory_mb=int(configuration.get("MemorySize", 128)),
            environment=dict(configuration.get("Environment", {}).get("Variables", {})),
            reserved_concurrency=_reserved(config),
            code_dir=code_path,
        )
        credentials = _session_credentials(session)
        return cls(
            function,
            mapping,
            queue,
            sqs_client=sqs,
            region=region,
            endpoint_url=endpoint_url,
            credentials=credentials,
            concurrency=concurrency,
            log_path=log_path,
            cleanup=cleanup,
        )

    @classmethod
    def from_stack(
        cls,
        stack: str = "AgentJobs",
        *,
        session: boto3.Session | None = None,
        endpoint_url: str | None = None,
        region: str | None = None,
        cloudformation_client: Any = None,
        lambda_client: LambdaClient | None = None,
        sqs_client: SQSClient | None = None,
        s3_client: Any = None,
        code_dir: str | os.PathLike[str] | None = None,
        concurrency: int | None = None,
        log_path: Path | None = None,
    ) -> EventSourceRunner:
        """Find the stack's function (output ``FunctionName``, else its one ``AWS::Lambda::Function``
        with an event source mapping) and build a runner with :meth:`from_function`.

        Raises
        ------
        MappingNotFoundError
            The stack has no such function.
        """
        session = session or session_for(endpoint_url, region)
        region = region or session.region_name or "us-east-1"
        cfn = cloudformation_client or session.client(
            "cloudformation", endpoint_url=endpoint_url, region_name=region
        )
        try:
            [described] = cfn.describe_stacks(StackName=stack)["Stacks"]
        except ClientError as exc:
            raise MappingNotFoundError(
                f"stack {stack!r} was not found ({exc}); the runner reads the deployed stack. "
                "Fix: run `constructs-fifo deploy` with the same --endpoint-url and --region."
            ) from exc
        outputs = {o["OutputKey"]: o["OutputValue"] for o in described.get("Outputs", []) if "OutputKey" in o}
        function_name = outputs.get("FunctionName")
        if function_name is None:
            resources = cfn.describe_stack_resources(StackName=stack)["StackResources"]
            functions = [
                r["PhysicalResourceId"] for r in resources if r.get("ResourceType") == "AWS::Lambda::Function"
            ]
            mapped = [
                r["PhysicalResourceId"]
                for r in resources
                if r.get("ResourceType") == "AWS::Lambda::EventSourceMapping"
            ]
            if len(functions) != 1 or not mapped:
                raise MappingNotFoundError(
                    f"stack {stack!r} has no FunctionName output and {len(functions)} functions; the runner "
                    "needs exactly one function with an SQS mapping. Fix: add a FunctionName output, or "
                    "use EventSourceRunner.from_function."
                )
            function_name = functions[0]
        return cls.from_function(
            function_name,
            session=session,
            endpoint_url=endpoint_url,
            region=region,
            lambda_client=lambda_client,
            sqs_client=sqs_client,
            s3_client=s3_client,
            code_dir=code_dir,
            concurrency=concurrency,
            log_path=log_path,
        )

    def deployed_concurrency(self) -> int:
        """min(MaximumConcurrency, reserved concurrency) of those set, else ``DEFAULT_CONCURRENCY``."""
        limits = [x for x in (self.mapping.maximum_concurrency, self.function.reserved_concurrency) if x]
        return min(limits) if limits else DEFAULT_CONCURRENCY

    # -- lifecycle -----------------------------------------------------------------------------------

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def close(self) -> None:
        """Stop every worker and remove the extracted code."""
        self._stop.set()
        for worker in list(self._workers.values()):
            worker.close()
        self._workers.clear()
        self._log.close()
        for path in self._cleanup:
            shutil.rmtree(path, ignore_errors=True)

    def stop(self) -> None:
        """Ask a running ``drain`` to stop after the batches in flight (thread-safe)."""
        self._stop.set()

    def worker_environment(self) -> dict[str, str]:
        """The environment of a worker: the function's, plus what Lambda sets, region and endpoint."""
        env = {k: os.environ[k] for k in _PASSED_THROUGH if k in os.environ}
        env.update(self._credentials)
        env.update(
            {
                "AWS_REGION": self.region,
                "AWS_DEFAULT_REGION": self.region,
                "AWS_LAMBDA_FUNCTION_NAME": self.function.name,
                "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
                "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(self.function.memory_mb),
                "AWS_LAMBDA_FUNCTION_TIMEOUT": str(self.function.timeout_seconds),
                "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{self.function.name}",
                "AWS_LAMBDA_LOG_STREAM_NAME": "local",
                "AWS_EXECUTION_ENV": "constructs-fifo-local",
                "LAMBDA_TASK_ROOT": str(self.function.code_dir),
                "_HANDLER": self.function.handler,
                "PYTHONUNBUFFERED": "1",
                "PYTHONDONTWRITEBYTECODE": "1",
                "CONSTRUCTS_FIFO_LOCAL_FUNCTION_ARN": self.function.arn,
            }
        )
        if self.endpoint_url is not None:
            env["AWS_ENDPOINT_URL"] = self.endpoint_url
        env.update(self.function.environment)
        return env

    def _start_worker(self) -> _Worker:
        command = [sys.executable, str(_WORKER_SCRIPT), str(self.function.code_dir), self.function.handler]
        return _Worker(command, self.worker_environment(), self._log)

    # -- draining ---------------------------------------------------------------------------------------

    def queue_depth(self) -> tuple[int, int]:
        """``(visible + delayed, in flight)`` messages of the source queue (see :func:`queue_counts`)."""
        return queue_counts(self._sqs, self.queue.url)

    def drain(
        self,
        *,
        until_empty: bool = True,
        for_seconds: float | None = None,
        on_batch: Callable[[BatchReport], None] | None = None,
        quiet_seconds: float = 1.0,
        poll_wait_seconds: int = 1,
    ) -> DrainStats:
        """Poll and invoke until the queue is empty (and stays so), ``for_seconds`` pass, or :meth:`stop`.

        Parameters
        ----------
        until_empty:
            Stop once the queue has had no visible, delayed or in-flight message and no batch has
            been running for ``quiet_seconds``. In-flight messages (e.g. waiting out a retry backoff)
            keep the drain going: they come back.
        for_seconds:
            Stop after this long at the latest (batches in flight finish first).
        on_batch:
            Called after every invocation with its :class:`BatchReport` (one call at a time).
        quiet_seconds:
            How long the queue must stay empty.
        poll_wait_seconds:
            ReceiveMessage long-poll wait of each slot.

        Returns
        -------
        DrainStats
        """
        self._stop.clear()
        stats = DrainStats()
        callback_lock = threading.Lock()
        busy = [False] * self.concurrency
        started = time.monotonic()

        def slot_loop(slot: int) -> None:
            while not self._stop.is_set():
                try:
                    messages = self._sqs.receive_message(
                        QueueUrl=self.queue.url,
                        MaxNumberOfMessages=self.mapping.batch_size,
                        WaitTimeSeconds=poll_wait_seconds,
                        MessageSystemAttributeNames=["All"],
                        MessageAttributeNames=["All"],
                    ).get("Messages", [])
                except ClientError:
                    if self._stop.wait(0.5):
                        return
                    continue
                if not messages:
                    continue
                busy[slot] = True
                try:
                    report = self._invoke(slot, messages, stats)
                finally:
                    busy[slot] = False
                if on_batch is not None:
                    with callback_lock:
                        on_batch(report)

        threads = [
            threading.Thread(target=slot_loop, args=(slot,), name=f"esm-slot-{slot}", daemon=True)
            for slot in range(self.concurrency)
        ]
        for thread in threads:
            thread.start()
        quiet_since: float | None = None
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if for_seconds is not None and now - started >= for_seconds:
                    break
                if until_empty:
                    if any(busy) or sum(self.queue_depth()) > 0:
                        quiet_since = None
                    elif quiet_since is None:
                        quiet_since = now
                    elif now - quiet_since >= quiet_seconds:
                        break
                self._stop.wait(0.1)
        finally:
            self._stop.set()
            for thread in threads:
                thread.join()
            stats.elapsed_seconds = time.monotonic() - started
        return stats

    def _invoke(self, slot: int, messages: Sequence[MessageTypeDef], stats: DrainStats) -> BatchReport:
        event = build_event(messages, queue_arn=self.queue.arn, region=self.region)
        ids = tuple(m["MessageId"] for m in messages)
        groups = tuple(m.get("Attributes", {}).get("MessageGroupId", "") for m in messages)
        timeout = float(self.function.timeout_seconds)
        cold = slot not in self._workers
        error: str | None = None
        result: Any = None
        begin = time.monotonic()
        try:
            if cold:
                self._workers[slot] = self._start_worker()
                ready = self._workers[slot].read_line(timeout=max(timeout, 10.0) + TIMEOUT_GRACE_SECONDS)
                if ready is None:
                    raise TimeoutError
                with stats._lock:
                    stats.cold_starts += 1
            worker = self._workers[slot]
            begin = time.monotonic()
            worker.send({"event": event, "request_id": str(uuid.uuid4()), "timeout_ms": int(timeout * 1000)})
            answer = worker.read_line(timeout=timeout + TIMEOUT_GRACE_SECONDS)
            if answer is None:
                raise TimeoutError
            if answer.get("ok"):
                result = answer.get("result")
            else:
                details = answer.get("error") or {}
                error = f"{details.get('errorType', 'Error')}: {details.get('errorMessage', '')}"
        except TimeoutError:
            error = f"Timeout: the handler ran past the function timeout of {self.function.timeout_seconds} s"
            self._retire(slot)
            with stats._lock:
                stats.timeouts += 1
        except (WorkerError, OSError, ValueError) as exc:
            error = f"WorkerError: {exc}"
            self._retire(slot)
        duration = time.monotonic() - begin

        failed: set[str]
        if error is not None:
            failed = set(ids)
        elif self.mapping.report_batch_item_failures:
            failed, error = parse_batch_response(result, ids)
        else:
            failed = set()
        deleted: list[str] = []
        delete_failures = 0
        if error is None:
            to_delete = [m for m in messages if m["MessageId"] not in failed]
            deleted, delete_failures = self._delete(to_delete)
        with stats._lock:
            stats.batches += 1
            stats.records += len(ids)
            stats.succeeded += len(deleted)
            stats.delete_failures += delete_failures
            if error is None:
                stats.failed_reported += len(failed)
            else:
                stats.handler_errors += 1
        return BatchReport(
            slot=slot,
            message_ids=ids,
            groups=groups,
            deleted=tuple(deleted),
            failed=tuple(i for i in ids if i in failed),
            error=error,
            duration_seconds=duration,
            cold_start=cold,
        )

    def _retire(self, slot: int) -> None:
        worker = self._workers.pop(slot, None)
        if worker is not None:
            worker.kill()

    def _delete(self, messages: Sequence[MessageTypeDef]) -> tuple[list[str], int]:
        deleted: list[str] = []
        failures = 0
        for start in range(0, len(messages), 10):
            chunk = messages[start : start + 10]
            entries = [{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(chunk)]
            try:
                response = self._sqs.delete_message_batch(QueueUrl=self.queue.url, Entries=entries)  # type: ignore[arg-type]
            except ClientError:
                failures += len(chunk)
                continue
            deleted.extend(chunk[int(ok["Id"])]["MessageId"] for ok in response.get("Successful", []))
            failures += len(response.get("Failed", []))
        return deleted, failures


def queue_counts(sqs_client: SQSClient, queue_url: str) -> tuple[int, int]:
    """``(visible + delayed, in flight)`` messages of a queue, from SQS's approximate counters."""
    attributes = sqs_client.get_queue_attributes(
        QueueUrl=queue_url,
        AttributeNames=[
            "ApproximateNumberOfMessages",
            "ApproximateNumberOfMessagesNotVisible",
            "ApproximateNumberOfMessagesDelayed",
        ],
    ).get("Attributes", {})
    visible = int(attributes.get("ApproximateNumberOfMessages", "0"))
    delayed = int(attributes.get("ApproximateNumberOfMessagesDelayed", "0"))
    return visible + delayed, int(attributes.get("ApproximateNumberOfMessagesNotVisible", "0"))


def _reserved(get_function_response: Mapping[str, Any]) -> int | None:
    value = get_function_response.get("Concurrency", {}).get("ReservedConcurrentExecutions")
    return int(value) if value is not None else None


def _session_credentials(session: boto3.Session) -> dict[str, str] | None:
    credentials = session.get_credentials()
    if credentials is None:
        return None
    frozen = credentials.get_frozen_credentials()
    values = {"AWS_ACCESS_KEY_ID": frozen.access_key or "", "AWS_SECRET_ACCESS_KEY": frozen.secret_key or ""}
    if frozen.token:
        values["AWS_SESSION_TOKEN"] = frozen.token
    return values
