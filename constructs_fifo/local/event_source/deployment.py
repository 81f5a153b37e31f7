"""What the local event source mapping reads of a deployed function, its mapping and its queue.

:func:`read_deployment` reads the function's event source mapping (BatchSize,
ScalingConfig.MaximumConcurrency, FunctionResponseTypes, State), its configuration (Handler,
Timeout, MemorySize, Environment, reserved concurrency), the queue's VisibilityTimeout and
RedrivePolicy, and fetches the function's code (:func:`fetch_function_code`), so that the deployed
copy of the code runs, not the installed package.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tempfile
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.local.errors import CodeNotFoundError, MappingNotFoundError
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.deployed import is_sqs_arn

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_lambda.type_defs import EventSourceMappingConfigurationTypeDef
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "DeployedFunction",
    "Deployment",
    "MappingSettings",
    "QueueSettings",
    "fetch_function_code",
    "read_deployment",
    "read_mapping",
    "read_queue",
]

#: AWS's own hosts: an emulator cannot serve a location there (moto's fake Code.Location is one).
_AWS_HOST_SUFFIX: Final = ".amazonaws.com"
#: Mapping states in which Lambda polls the queue (AWS: API_EventSourceMappingConfiguration).
_POLLING_STATES: Final = frozenset({"Enabled", "Enabling", "Creating", "Updating"})


@dataclass(frozen=True, slots=True)
class DeployedFunction:
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
    """What the runner needs of the event source mapping.

    Attributes
    ----------
    enabled
        Whether Lambda polls with this mapping (its ``State``); a disabled mapping is not drained.
    state
        The mapping's ``State`` as read (``Enabled``, ``Disabled``...).
    """

    uuid: str
    event_source_arn: str
    batch_size: int
    maximum_concurrency: int | None
    report_batch_item_failures: bool
    enabled: bool
    state: str = "Enabled"


@dataclass(frozen=True, slots=True)
class QueueSettings:
    """What the runner needs of the source queue."""

    url: str
    arn: str
    visibility_timeout_seconds: int
    max_receive_count: int | None
    dead_letter_queue_arn: str | None


@dataclass(frozen=True)
class Deployment:
    """A deployed function with its mapping and queue; ``cleanup`` lists directories to remove."""

    function: DeployedFunction
    mapping: MappingSettings
    queue: QueueSettings
    cleanup: tuple[Path, ...] = field(default=())


def _safe_extract(archive: bytes, dest: Path) -> None:
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        root = dest.resolve()
        for member in zipped.infolist():
            target = (dest / member.filename).resolve()
            if not target.is_relative_to(root):
                raise CodeNotFoundError(
                    f"the code archive holds {member.filename!r}, outside the extraction directory; "
                    "archives must hold relative paths only",
                    "rebuild the asset",
                )
        zipped.extractall(dest)


def _fetchable(location: str, endpoint_url: str | None) -> bool:
    """Whether ``Code.Location`` is worth downloading directly (see :func:`fetch_function_code`)."""
    parts = urllib.parse.urlsplit(location)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return False
    if endpoint_url is None:
        return parts.scheme == "https"
    return not parts.hostname.endswith(_AWS_HOST_SUFFIX)


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

    ``GetFunction``'s ``Code.Location`` is downloaded when it is an http(s) URL that can answer: on
    AWS (a presigned S3 URL) and on an emulator that serves code itself (LocalStack returns a working
    presigned URL on its own endpoint). On an emulator, a location on an AWS host (``*.amazonaws.com``:
    moto returns such a fake URL) is not tried, and a location that fails falls back to the S3 lookup:
    its path is the asset's S3 key (``<hash>.zip`` in the CDK bootstrap bucket), looked up in the
    endpoint's buckets, the ``cdk-`` ones first.

    ``location`` is ``Code.Location`` when the caller already has the ``GetFunction`` response;
    without it, ``GetFunction`` is called.

    Raises
    ------
    CodeNotFoundError
        Nothing could be fetched; the fix says how to pass the code directly.
    """
    if location is None:
        location = lambda_client.get_function(FunctionName=function_name).get("Code", {}).get("Location", "")
    archive: bytes | None = None
    tried: list[str] = []
    if _fetchable(location, endpoint_url):
        tried.append(location.split("?")[0])
        with contextlib.suppress(OSError), urllib.request.urlopen(location, timeout=60) as response:
            archive = response.read()
    # On AWS a presigned URL that fails is not looked for in the account's buckets.
    fall_back = endpoint_url is not None or not tried
    if archive is None and fall_back and location and s3_client is not None:
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
            f"{', '.join(tried) or 'nothing'}); the runner must run the deployed code",
            "deploy it with an S3 asset (cdk deploy does), or pass code_dir= with the function's code",
        )
    dest.mkdir(parents=True, exist_ok=True)
    _safe_extract(archive, dest)
    return dest


def _mapping_settings(mapping: EventSourceMappingConfigurationTypeDef) -> MappingSettings:
    scaling = mapping.get("ScalingConfig") or {}
    state = mapping.get("State", "Enabled")
    return MappingSettings(
        uuid=mapping.get("UUID", ""),
        event_source_arn=mapping["EventSourceArn"],
        batch_size=int(mapping.get("BatchSize") or 10),
        maximum_concurrency=int(scaling["MaximumConcurrency"]) if scaling.get("MaximumConcurrency") else None,
        report_batch_item_failures="ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []),
        enabled=state in _POLLING_STATES,
        state=state,
    )


def read_mapping(
    function_name: str, lambda_client: LambdaClient, *, queue_arn: str | None = None
) -> MappingSettings:
    """The function's SQS event source mapping: the one reading ``queue_arn``, or its only one.

    Raises
    ------
    MappingNotFoundError
        No such mapping, or several and no ``queue_arn``.
    """
    mappings = lambda_client.list_event_source_mappings(FunctionName=function_name).get(
        "EventSourceMappings", []
    )
    sqs_mappings = [m for m in mappings if is_sqs_arn(m.get("EventSourceArn", ""))]
    if queue_arn is not None:
        sqs_mappings = [m for m in sqs_mappings if m["EventSourceArn"] == queue_arn]
    if not sqs_mappings:
        reading = f" reading {queue_arn}" if queue_arn else ""
        raise MappingNotFoundError(
            f"function {function_name!r} has no SQS event source mapping{reading}; the runner needs one "
            "to know what to poll",
            "deploy the stack (the OrderedAgentQueue construct creates the mapping)",
        )
    if len(sqs_mappings) > 1:
        raise MappingNotFoundError(
            f"function {function_name!r} has {len(sqs_mappings)} SQS event source mappings; the runner "
            "drives one at a time",
            "name the queue (--queue, or queue_arn=)",
        )
    return _mapping_settings(sqs_mappings[0])


def read_queue(arn: str, sqs_client: SQSClient) -> QueueSettings:
    """The source queue's URL, visibility timeout and redrive policy."""
    if not is_sqs_arn(arn):
        raise MappingNotFoundError(
            f"event source {arn!r} is not an SQS queue ARN; the runner polls SQS queues only",
            "point it at a function whose event source mapping reads an SQS FIFO queue",
        )
    _, _, _, _, account, name = arn.split(":")
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


def read_deployment(
    function_name: str,
    *,
    target: AwsTarget,
    queue_arn: str | None = None,
    lambda_client: LambdaClient | None = None,
    sqs_client: SQSClient | None = None,
    s3_client: Any = None,
    code_dir: Path | None = None,
) -> Deployment:
    """Read a deployed function, its SQS mapping and queue, and fetch its code.

    Parameters
    ----------
    function_name:
        The function's name or ARN.
    target:
        Where to read from; clients passed explicitly win.
    queue_arn:
        The queue whose mapping to read, when the function has several.
    code_dir:
        The function's code, when it should not be fetched (e.g. a function created from a zip
        file on an emulator that cannot serve it back). Otherwise the code is extracted into a new
        temporary directory, listed in ``cleanup``.
    """
    lambda_: LambdaClient = lambda_client or target.client("lambda")
    sqs: SQSClient = sqs_client or target.client("sqs")
    response = lambda_.get_function(FunctionName=function_name)
    configuration = response["Configuration"]
    name = configuration["FunctionName"]
    mapping = read_mapping(name, lambda_, queue_arn=queue_arn)
    queue = read_queue(mapping.event_source_arn, sqs)
    cleanup: list[Path] = []
    if code_dir is None:
        scratch = Path(tempfile.mkdtemp(prefix=f"constructs-fifo-{name}-"))
        cleanup.append(scratch)
        try:
            code_dir = fetch_function_code(
                name,
                scratch / "code",
                lambda_client=lambda_,
                s3_client=s3_client or target.client("s3"),
                endpoint_url=target.endpoint_url,
                location=response.get("Code", {}).get("Location", ""),
            )
        except Exception:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
    reserved = response.get("Concurrency", {}).get("ReservedConcurrentExecutions")
    function = DeployedFunction(
        name=name,
        arn=configuration["FunctionArn"],
        handler=configuration.get("Handler", ""),
        timeout_seconds=int(configuration.get("Timeout", 3)),
        memory_mb=int(configuration.get("MemorySize", 128)),
        environment=dict(configuration.get("Environment", {}).get("Variables", {})),
        reserved_concurrency=int(reserved) if reserved is not None else None,
        code_dir=code_dir.resolve(),
    )
    return Deployment(function, mapping, queue, tuple(cleanup))
