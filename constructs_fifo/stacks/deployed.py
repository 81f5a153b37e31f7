"""The queues a deployed stack holds, and picking the one a command works on.

A stack may hold several ``OrderedAgentQueue`` constructs. Each is found as what it deploys: a Lambda
function of the stack with an SQS event source mapping, the queue that mapping reads, its
dead-letter queue, and the function's environment (which names the claim table). A queue with the
container consumer has no function: it is found from the stack's ECS task definition, whose
container's environment (``CONSTRUCTS_FIFO_*``, from the settings spec) names the queue and the
tables. Its construct path comes from the ``aws:cdk:path`` metadata the CDK CLI writes into the
template: the deepest construct that holds both the queue and the function (or task definition)
(``AgentJobs/Workspaces`` for the sample app's state-mode queue).

``drain`` and ``deploy --queue`` call :func:`resolve_queue` (``drain --all`` and the demo,
:func:`find_queues`). With one queue in the stack no ``--queue`` is needed; with several, ``--queue``
names one by construct path (full, or relative to the stack) or by queue name, and an ambiguous stack
is an error that lists the candidates.

Examples
--------
>>> target = AwsTarget("http://localhost:4566")
>>> queue = resolve_queue("AgentJobs", target=target, queue="Workspaces")  # doctest: +SKIP
>>> queue.construct_path, queue.queue_name  # doctest: +SKIP
('AgentJobs/Workspaces', 'AgentJobs-Workspaces-96114B70.fifo')
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from constructs_fifo.runtime.constants import ENV_CLAIM_TABLE, ENV_GROUP_TABLE, ENV_QUEUE_URL
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.errors import (
    AmbiguousQueueError,
    ContainerQueueError,
    QueueNotFoundError,
    StackNotFoundError,
)
from constructs_fifo.stacks.status import is_missing_stack

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_cloudformation.client import CloudFormationClient
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_sqs.client import SQSClient

__all__ = [
    "CDK_PATH_METADATA",
    "DeployedQueue",
    "find_queues",
    "is_sqs_arn",
    "resolve_queue",
    "select_queue",
]

#: The template metadata key under which the CDK CLI records each resource's construct path.
CDK_PATH_METADATA: Final = "aws:cdk:path"
#: The resource type of a container consumer's task definition (its container holds the settings).
TASK_DEFINITION_TYPE: Final = "AWS::ECS::TaskDefinition"
#: The resource type of a nested stack (a ``cdk.NestedStack``), whose resources are its own stack's.
NESTED_STACK_TYPE: Final = "AWS::CloudFormation::Stack"
#: What follows a NestedStack's own construct path in its resource's (``Parent/Inner.NestedStack/...``).
_NESTED_STACK_PATH: Final = ".NestedStack/"


@dataclass(frozen=True)
class DeployedQueue:
    """One queue of a stack and its consumer: the function its SQS event source mapping invokes, or the
    container workers of its ECS task definition.

    Attributes
    ----------
    stack
        The stack's name.
    construct_path
        ``Stack/Construct``: the deepest construct holding the queue and the function; ``None`` when
        the template carries no construct paths.
    queue_name, queue_url, queue_arn
        The source queue.
    function_name
        The function the mapping invokes; ``None`` for a container queue.
    function_environment
        The consumer's environment variables: the function's, or the worker container's.
    dead_letter_queue_url, dead_letter_queue_arn
        The queue's redrive target, if any.
    task_definition
        A container queue's task definition (its ARN); ``None`` for a Lambda queue.
    """

    stack: str
    construct_path: str | None
    queue_name: str
    queue_url: str
    queue_arn: str
    function_name: str | None
    function_environment: Mapping[str, str] = field(default_factory=dict)
    dead_letter_queue_url: str | None = None
    dead_letter_queue_arn: str | None = None
    task_definition: str | None = None

    @property
    def is_container(self) -> bool:
        """Whether container workers consume the queue (no function, no event source mapping)."""
        return self.function_name is None

    def require_function(self, command: str) -> str:
        """The function's name, for a command that runs or reads the Lambda consumer.

        Raises
        ------
        ContainerQueueError
            The queue's consumer is container workers: the error names the worker command instead.
        """
        if self.function_name is None:
            raise ContainerQueueError(
                f"{command} works on a queue's function and {self.describe()} has none: container "
                f"workers consume it (task definition {self.task_definition})",
                f"run its workers locally: constructs-fifo worker --stack {self.stack} --queue {self.label} "
                "--code-dir <the job code's directory>",
            )
        return self.function_name

    @property
    def claim_table(self) -> str | None:
        """The claim table the function's runtime uses (its ``CONSTRUCTS_FIFO_CLAIM_TABLE``)."""
        return self.function_environment.get(ENV_CLAIM_TABLE)

    @property
    def group_table(self) -> str | None:
        """The group table the function's runtime uses (parked groups; states in state mode)."""
        return self.function_environment.get(ENV_GROUP_TABLE)

    @property
    def label(self) -> str:
        """The construct path, else the queue name: how messages and ``--queue`` name it."""
        return self.construct_path or self.queue_name

    def describe(self) -> str:
        """``AgentJobs/Workspaces (queue AgentJobs-Workspaces-96114B70.fifo)``."""
        return f"{self.label} (queue {self.queue_name})"

    def matches(self, wanted: str) -> bool:
        """Whether ``--queue wanted`` names this queue.

        It does when ``wanted`` is the queue's name (``.fifo`` optional) or URL, or a construct path,
        full or relative to the stack, at or above the construct that holds the queue.
        """
        if wanted in {self.queue_name, self.queue_name.removesuffix(".fifo"), self.queue_url}:
            return True
        if self.construct_path is None:
            return False
        wanted = wanted.strip("/")
        for prefix in (wanted, f"{self.stack}/{wanted}"):
            if self.construct_path == prefix or self.construct_path.startswith(prefix + "/"):
                return True
        return False

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (``deploy --queue`` prints it; the demo's report holds it)."""
        return {
            "stack": self.stack,
            "constructPath": self.construct_path,
            "queueName": self.queue_name,
            "queueUrl": self.queue_url,
            "queueArn": self.queue_arn,
            "deadLetterQueueUrl": self.dead_letter_queue_url,
            "deadLetterQueueArn": self.dead_letter_queue_arn,
            "claimTableName": self.claim_table,
            "groupTableName": self.group_table,
            "functionName": self.function_name,
            "taskDefinition": self.task_definition,
        }


def _stack_resources(stack: str, cloudformation: CloudFormationClient) -> list[Mapping[str, Any]]:
    try:
        return [
            summary
            for page in cloudformation.get_paginator("list_stack_resources").paginate(StackName=stack)
            for summary in page.get("StackResourceSummaries", [])
        ]
    except ClientError as exc:
        if not is_missing_stack(exc):
            raise
        raise StackNotFoundError(
            f"stack {stack!r} was not found ({exc}); the command reads the deployed stack",
            "run `constructs-fifo deploy` with the same --endpoint-url and --region, or pass --stack",
        ) from exc


def _construct_paths(stack: str, cloudformation: CloudFormationClient) -> dict[str, str]:
    """``{logical id: aws:cdk:path}`` from the stack's template (empty when it has none)."""
    body: Any = cloudformation.get_template(StackName=stack).get("TemplateBody", {})
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:  # a YAML template: written by hand, so no construct paths
            return {}
    resources = body.get("Resources", {}) if isinstance(body, dict) else {}
    paths: dict[str, str] = {}
    for logical_id, resource in resources.items():
        path = (resource.get("Metadata") or {}).get(CDK_PATH_METADATA)
        if isinstance(path, str):
            paths[logical_id] = path
    return paths


def _common_path(*paths: str) -> str:
    parts = [path.split("/") for path in paths]
    common: list[str] = []
    for segments in zip(*parts, strict=False):
        if len(set(segments)) != 1:
            break
        common.append(segments[0])
    return "/".join(common)


def _construct_path(function_path: str | None, queue_path: str | None) -> str | None:
    if function_path and queue_path:
        return _common_path(function_path, queue_path) or None
    if function_path:
        return function_path.removesuffix("/Resource")
    return None


def _queue_url(arn: str, sqs: SQSClient) -> str:
    _, _, _, _, account, name = arn.split(":", 5)
    return sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]


def _dead_letter_queue(queue_url: str, sqs: SQSClient) -> tuple[str | None, str | None]:
    """The (URL, ARN) of the queue's redrive target, ``(None, None)`` without one."""
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["RedrivePolicy"])
    policy = attributes.get("Attributes", {}).get("RedrivePolicy")
    target = json.loads(policy).get("deadLetterTargetArn") if policy else None
    return (_queue_url(target, sqs), str(target)) if target else (None, None)


def _container_queues(
    stack: str,
    resources: Sequence[Mapping[str, Any]],
    paths: Mapping[str, str],
    queue_logical_by_name: Mapping[str, str],
    *,
    ecs: Any,
    sqs: SQSClient,
) -> list[DeployedQueue]:
    """The queues the stack's task definitions consume: a container whose environment names a queue."""
    found: list[DeployedQueue] = []
    for resource in resources:
        arn = resource.get("PhysicalResourceId")
        if resource.get("ResourceType") != TASK_DEFINITION_TYPE or not arn:
            continue
        definition = ecs.describe_task_definition(taskDefinition=arn)["taskDefinition"]
        for container in definition.get("containerDefinitions", []):
            environment = {
                pair["name"]: pair["value"]
                for pair in container.get("environment", [])
                if "name" in pair and "value" in pair
            }
            configured_url = environment.get(ENV_QUEUE_URL)
            if not configured_url:
                continue  # a sidecar, or a task definition of something else
            name = configured_url.rstrip("/").rsplit("/", 1)[-1]
            url = sqs.get_queue_url(QueueName=name)["QueueUrl"]
            queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
                "QueueArn"
            ]
            queue_logical = queue_logical_by_name.get(name)
            dead_letter_url, dead_letter_arn = _dead_letter_queue(url, sqs)
            found.append(
                DeployedQueue(
                    stack=stack,
                    construct_path=_construct_path(
                        paths.get(resource.get("LogicalResourceId", "")),
                        paths.get(queue_logical) if queue_logical else None,
                    ),
                    queue_name=name,
                    queue_url=url,
                    queue_arn=queue_arn,
                    function_name=None,
                    function_environment=environment,
                    dead_letter_queue_url=dead_letter_url,
                    dead_letter_queue_arn=dead_letter_arn,
                    task_definition=str(arn),
                )
            )
    return found


def is_sqs_arn(arn: str) -> bool:
    """Whether ``arn`` names an SQS queue (``arn:<partition>:sqs:<region>:<account>:<name>``)."""
    parts = arn.split(":")
    return len(parts) == 6 and parts[0] == "arn" and parts[2] == "sqs"


def find_queues(
    stack: str,
    *,
    target: AwsTarget,
    cloudformation_client: CloudFormationClient | None = None,
    lambda_client: LambdaClient | None = None,
    sqs_client: SQSClient | None = None,
    ecs_client: Any = None,
) -> list[DeployedQueue]:
    """Every queue of ``stack`` that an SQS event source mapping of one of its functions reads, or the
    container of one of its ECS task definitions consumes.

    Raises
    ------
    StackNotFoundError
        The stack does not exist on the target.
    QueueNotFoundError
        The stack holds no queue but has nested stacks: the message names them (their queues are not
        read).
    """
    cloudformation: CloudFormationClient = cloudformation_client or target.client("cloudformation")
    lambda_: LambdaClient = lambda_client or target.client("lambda")
    sqs: SQSClient = sqs_client or target.client("sqs")
    resources = _stack_resources(stack, cloudformation)
    paths = _construct_paths(stack, cloudformation)
    logical_by_physical = {
        r.get("PhysicalResourceId", ""): r["LogicalResourceId"] for r in resources if "LogicalResourceId" in r
    }
    # A queue's physical id is its URL, whose host is the endpoint's: matched by the name at its end.
    queue_logical_by_name = {
        r.get("PhysicalResourceId", "").rsplit("/", 1)[-1]: r["LogicalResourceId"]
        for r in resources
        if r.get("ResourceType") == "AWS::SQS::Queue" and "LogicalResourceId" in r
    }
    functions = [
        r["PhysicalResourceId"]
        for r in resources
        if r.get("ResourceType") == "AWS::Lambda::Function" and r.get("PhysicalResourceId")
    ]
    found: list[DeployedQueue] = []
    for function in functions:
        mappings = lambda_.list_event_source_mappings(FunctionName=function).get("EventSourceMappings", [])
        sources = [m["EventSourceArn"] for m in mappings if is_sqs_arn(m.get("EventSourceArn", ""))]
        if not sources:
            continue
        configuration = lambda_.get_function_configuration(FunctionName=function)
        environment = dict(configuration.get("Environment", {}).get("Variables", {}))
        for arn in sources:
            url = _queue_url(arn, sqs)
            name = arn.rsplit(":", 1)[1]
            queue_logical = queue_logical_by_name.get(name)
            dead_letter_url, dead_letter_arn = _dead_letter_queue(url, sqs)
            found.append(
                DeployedQueue(
                    stack=stack,
                    construct_path=_construct_path(
                        paths.get(logical_by_physical.get(function, "")),
                        paths.get(queue_logical) if queue_logical else None,
                    ),
                    queue_name=name,
                    queue_url=url,
                    queue_arn=arn,
                    function_name=function,
                    function_environment=environment,
                    dead_letter_queue_url=dead_letter_url,
                    dead_letter_queue_arn=dead_letter_arn,
                )
            )
    if any(r.get("ResourceType") == TASK_DEFINITION_TYPE for r in resources):
        ecs: Any = ecs_client or target.client("ecs")
        found.extend(_container_queues(stack, resources, paths, queue_logical_by_name, ecs=ecs, sqs=sqs))
    nested = [
        paths.get(r["LogicalResourceId"], r["LogicalResourceId"]).split(_NESTED_STACK_PATH, 1)[0]
        for r in resources
        if r.get("ResourceType") == NESTED_STACK_TYPE and "LogicalResourceId" in r
    ]
    if not found and nested:
        replaced = "; the emulator also replaces a nested stack's resources on every deploy"
        raise QueueNotFoundError(
            f"stack {stack!r} holds no queue of its own, and has nested stacks ({', '.join(nested)}), whose "
            "queues constructs-fifo's commands do not read (they find a stack's queues in its own "
            f"resources{replaced if target.endpoint_url else ''})",
            "define the OrderedAgentQueue in a top-level stack (a cdk.Stack of the app, not a "
            "cdk.NestedStack)",
        )
    return sorted(found, key=lambda queue: queue.label)


def select_queue(stack: str, queues: Sequence[DeployedQueue], wanted: str | None) -> DeployedQueue:
    """The queue ``--queue wanted`` names, or the stack's only queue when ``wanted`` is ``None``.

    Raises
    ------
    QueueNotFoundError
        The stack has no queue, or none that ``wanted`` names.
    AmbiguousQueueError
        Several queues and no ``wanted``, or a ``wanted`` that names several; lists the candidates.
    """
    listed = "; ".join(queue.describe() for queue in queues)
    if not queues:
        raise QueueNotFoundError(
            f"stack {stack!r} holds no queue with an SQS event source mapping or container workers "
            "(no OrderedAgentQueue)",
            "pass --stack naming a stack that holds an OrderedAgentQueue",
        )
    if wanted is None:
        if len(queues) == 1:
            return queues[0]
        raise AmbiguousQueueError(
            f"stack {stack!r} holds {len(queues)} queues: {listed}; the command works on one",
            f"pass --queue with a construct path or queue name, e.g. --queue {queues[0].label}",
        )
    matching = [queue for queue in queues if queue.matches(wanted)]
    if not matching:
        raise QueueNotFoundError(
            f"no queue of stack {stack!r} is named {wanted!r} or lies under that construct path "
            f"(it holds: {listed})",
            "pass --queue with one of those construct paths or queue names",
        )
    if len(matching) > 1:
        raise AmbiguousQueueError(
            f"--queue {wanted!r} matches {len(matching)} queues of stack {stack!r}: "
            f"{'; '.join(queue.describe() for queue in matching)}",
            "pass the full construct path or the queue name of one of them",
        )
    return matching[0]


def resolve_queue(
    stack: str,
    *,
    target: AwsTarget,
    queue: str | None = None,
    cloudformation_client: CloudFormationClient | None = None,
    lambda_client: LambdaClient | None = None,
    sqs_client: SQSClient | None = None,
    ecs_client: Any = None,
) -> DeployedQueue:
    """:func:`find_queues` then :func:`select_queue`."""
    found = find_queues(
        stack,
        target=target,
        cloudformation_client=cloudformation_client,
        lambda_client=lambda_client,
        sqs_client=sqs_client,
        ecs_client=ecs_client,
    )
    return select_queue(stack, found, queue)
