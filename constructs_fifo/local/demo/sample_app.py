"""The sample app's contract, stated once: what ``app.py``, its worker and the demo agree on.

``app.py`` builds the stack from these names, the workload sends jobs that follow them, and the
verifier reads the workspaces by them. The worker (``lambda/agent_worker.py``) ships in the function's
asset, which holds only the runtime, so it cannot import this module: it keeps its own copies, and a
test checks them against this one.

Imports only the standard library and boto3's type deserializer, so ``app.py`` can import it at synth.

Examples
--------
>>> group_of("ws-s7-03")
'ws#ws-s7-03'
>>> transient_failure(2)
{'simulate': {'fail_attempts': 2}}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Final

from boto3.dynamodb.types import TypeDeserializer

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = [
    "APPLIED_ATTRIBUTE",
    "ENV_WORKSPACE_TABLE",
    "GROUP_PREFIX",
    "JOB_TYPES",
    "OUTPUTS",
    "OUTPUT_CLAIM_TABLE_NAME",
    "OUTPUT_DEAD_LETTER_QUEUE_URL",
    "OUTPUT_FUNCTION_NAME",
    "OUTPUT_QUEUE_URL",
    "OUTPUT_WORKSPACE_TABLE_NAME",
    "REPLAYED_ATTRIBUTE",
    "SIMULATE",
    "STACK_NAME",
    "VERSION_ATTRIBUTE",
    "WORKSPACE_KEY",
    "SampleResources",
    "group_of",
    "poison",
    "read_workspace",
    "transient_failure",
]

#: The sample app's stack.
STACK_NAME: Final = "AgentJobs"

#: Stack outputs of the sample app (``constructs-fifo deploy`` prints them).
OUTPUT_QUEUE_URL: Final = "QueueUrl"
OUTPUT_DEAD_LETTER_QUEUE_URL: Final = "DeadLetterQueueUrl"
OUTPUT_CLAIM_TABLE_NAME: Final = "ClaimTableName"
OUTPUT_WORKSPACE_TABLE_NAME: Final = "WorkspaceTableName"
OUTPUT_FUNCTION_NAME: Final = "FunctionName"
OUTPUTS: Final = (
    OUTPUT_QUEUE_URL,
    OUTPUT_DEAD_LETTER_QUEUE_URL,
    OUTPUT_CLAIM_TABLE_NAME,
    OUTPUT_WORKSPACE_TABLE_NAME,
    OUTPUT_FUNCTION_NAME,
)

#: The function environment variable naming the workspace table.
ENV_WORKSPACE_TABLE: Final = "WORKSPACE_TABLE_NAME"
#: Partition key of the workspace table.
WORKSPACE_KEY: Final = "workspaceId"
#: The workspace item's optimistic-lock counter.
VERSION_ATTRIBUTE: Final = "version"
#: The workspace item's list of job ids in the order they were applied.
APPLIED_ATTRIBUTE: Final = "applied"
#: The workspace item's list of job ids delivered to the worker again after they were applied.
REPLAYED_ATTRIBUTE: Final = "replayed"

#: The job types the worker handles, in the order one workspace's cycle runs them.
JOB_TYPES: Final = ("apply_patch", "run_tests", "open_pr")
#: Every job of a workspace is sent with MessageGroupId ``ws#<workspaceId>``.
GROUP_PREFIX: Final = "ws#"
#: The payload key with which a job asks the worker to fail (demos and tests only).
SIMULATE: Final = "simulate"

_DESERIALIZER: Final = TypeDeserializer()


@dataclass(frozen=True)
class SampleResources:
    """What one deployed queue of the sample app offers the demo: where to send and what to read."""

    queue_url: str
    dead_letter_queue_url: str
    claim_table: str
    workspace_table: str


def group_of(workspace_id: str) -> str:
    """The MessageGroupId of a workspace (``ws#<workspaceId>``)."""
    return f"{GROUP_PREFIX}{workspace_id}"


def poison() -> dict[str, Any]:
    """Payload entries that make the worker fail the job permanently."""
    return {SIMULATE: "poison"}


def transient_failure(attempts: int) -> dict[str, Any]:
    """Payload entries that make the worker fail attempts 1 to ``attempts`` and then succeed."""
    return {SIMULATE: {"fail_attempts": attempts}}


def _plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; whole numbers become int, sets sorted lists."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, set):
        return sorted(_plain(v) for v in value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def read_workspace(dynamodb_client: DynamoDBClient, table: str, workspace_id: str) -> dict[str, Any] | None:
    """The workspace item as plain Python values (a consistent read), or ``None`` when absent."""
    item: Mapping[str, Any] | None = dynamodb_client.get_item(
        TableName=table, Key={WORKSPACE_KEY: {"S": workspace_id}}, ConsistentRead=True
    ).get("Item")
    if item is None:
        return None
    return {key: _plain(_DESERIALIZER.deserialize(value)) for key, value in item.items()}
