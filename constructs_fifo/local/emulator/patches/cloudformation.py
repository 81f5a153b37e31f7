"""Fidelity patches of moto's CloudFormation: the resources and stacks ``cdk deploy`` creates.

A FIFO queue without ``QueueName`` gets a ``.fifo`` name, a table's ``TimeToLiveSpecification`` is
applied, a stack created or updated by executing a change set has its ``Outputs`` and its
template (GetTemplate), and ``Ref`` of a queue (its physical id) is the URL the endpoint serves.
``RedriveAllowPolicy`` needs no patch here: :mod:`.sqs_models` returns it.
"""

from __future__ import annotations

import contextvars
from typing import Any, Final
from urllib.parse import urlparse

from moto.core.responses import BaseResponse
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.table import Table
from moto.sqs.models import Queue

from constructs_fifo.local.emulator.patches.registry import original, replace

__all__ = ["patch"]

#: ``scheme://host[:port]`` of the CloudFormation request being answered, when it is not AWS's own
#: host (a request to the emulator's server); ``None`` otherwise (moto in-process answers AWS's hosts).
_REQUEST_ENDPOINT: Final[contextvars.ContextVar[str | None]] = contextvars.ContextVar(
    "constructs_fifo_cloudformation_endpoint", default=None
)
#: Hosts that are AWS's: a URL built on them is already in AWS's form.
_AWS_HOST_SUFFIXES: Final = (".amazonaws.com", ".amazonaws.com.cn")


def _queue_from_cloudformation(
    cls: Any,
    /,
    resource_name: str,
    cloudformation_json: Any,
    account_id: str,
    region_name: str,
    **kwargs: Any,
) -> Any:
    # AWS: aws-resource-sqs-queue, "If you don't specify a name, AWS CloudFormation generates a
    # unique physical ID"; a FIFO queue's generated name ends in .fifo. moto 5.2.5 generated a
    # name without the suffix and then rejected the FIFO queue.
    properties = cloudformation_json.get("Properties", {})
    fifo = str(properties.get("FifoQueue", "false")).lower() == "true"
    name = str(resource_name)
    if fifo and "QueueName" not in properties and not name.endswith(".fifo"):
        name = name[:75] + ".fifo"
    create = original(cls, "create_from_cloudformation_json").__func__
    return create(cls, name, cloudformation_json, account_id, region_name, **kwargs)


def _table_from_cloudformation(
    cls: Any,
    /,
    resource_name: str,
    cloudformation_json: Any,
    account_id: str,
    region_name: str,
    **kwargs: Any,
) -> Any:
    # AWS: aws-resource-dynamodb-table, TimeToLiveSpecification. moto 5.2.5 ignored it, so
    # DescribeTimeToLive reported TTL disabled. (moto never expires items either way; the runtime
    # compares expiration times itself, as it must on AWS too.)
    create = original(cls, "create_from_cloudformation_json").__func__
    table = create(cls, resource_name, cloudformation_json, account_id, region_name, **kwargs)
    spec = cloudformation_json.get("Properties", {}).get("TimeToLiveSpecification")
    if spec and "AttributeName" in spec:
        enabled = str(spec.get("Enabled", "false")).lower() == "true"
        dynamodb_backends[account_id][region_name].update_time_to_live(
            table.name, {"Enabled": enabled, "AttributeName": spec["AttributeName"]}
        )
    return table


def _apply_change_set(self: Any) -> None:
    # AWS: API_DescribeStacks, "Outputs: A list of output structures", and
    # using-cfn-updating-stacks-changesets: executing a change set creates or updates the stack
    # from the change set's template, outputs included. moto 5.2.5's ChangeSet.apply updated the
    # resources only: the stack kept the output map built from the empty template of
    # CreateChangeSet (or the previous template on an update), so DescribeStacks had no Outputs
    # after `cdk deploy`, and GetTemplate returned the empty (or previous) template. Rebuilt here as
    # moto's own CreateStack and UpdateStack do (AWS: API_GetTemplate returns the stack's template).
    from moto.cloudformation.models import ChangeSet  # noqa: PLC0415 - loaded by apply() already

    original(ChangeSet, "apply")(self)
    stack = self.stack
    stack.template = self.template
    stack.template_dict = self.template_dict
    stack.parameters = self.parameters  # what the next change set's UsePreviousValue and no-change check read
    stack.description = self.template_dict.get("Description")
    stack.output_map = stack._create_output_map()


def _endpoint_of(full_url: str) -> str | None:
    parsed = urlparse(full_url)
    host = parsed.hostname or ""
    if not host or host.endswith(_AWS_HOST_SUFFIXES):
        return None
    return f"{parsed.scheme}://{parsed.netloc}"


def _dispatch_at_its_endpoint(self: Any, request: Any, full_url: str, headers: Any) -> Any:
    """Answer a CloudFormation request knowing the endpoint it came to (:data:`_REQUEST_ENDPOINT`):
    moto creates, updates and describes a stack's resources while answering the request."""
    token = _REQUEST_ENDPOINT.set(_endpoint_of(full_url))
    try:
        return BaseResponse._dispatch(self, request, full_url, headers)
    finally:
        _REQUEST_ENDPOINT.reset(token)


def _queue_physical_resource_id(self: Any) -> str:
    # AWS: aws-resource-sqs-queue, Return values: "Ref returns the queue URL", the URL SQS itself
    # serves (API_GetQueueUrl). moto 5.2.5 built it on AWS's host whatever the endpoint
    # (https://sqs.us-east-1.amazonaws.com/...), where SQS answered GetQueueUrl in the endpoint's form
    # (http://localhost:4566/...): every stack output, physical id and function environment holding a
    # queue URL pointed at AWS. Now the endpoint's form, as moto's SQS builds it (Queue.url).
    endpoint = _REQUEST_ENDPOINT.get()
    if endpoint is None:
        return str(original(Queue, "physical_resource_id").fget(self))
    return f"{endpoint}/{self.account_id}/{self.name}"


def patch() -> None:
    """Apply the CloudFormation patches (item 8 of the package docstring)."""
    # Imported here, not at the top: moto.cloudformation loads most of moto's services (~2.5 s on
    # 2 cores), which a process importing this module without applying the patches should not pay.
    from moto.cloudformation.models import ChangeSet  # noqa: PLC0415

    replace(Queue, "create_from_cloudformation_json", classmethod(_queue_from_cloudformation))
    replace(Table, "create_from_cloudformation_json", classmethod(_table_from_cloudformation))
    replace(ChangeSet, "apply", _apply_change_set)
    replace(Queue, "physical_resource_id", property(_queue_physical_resource_id))
    from moto.cloudformation.responses import CloudFormationResponse  # noqa: PLC0415

    replace(CloudFormationResponse, "_dispatch", _dispatch_at_its_endpoint)
