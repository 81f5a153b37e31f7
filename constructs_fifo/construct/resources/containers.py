"""The container consumer of an :class:`~constructs_fifo.construct.OrderedAgentQueue`: an ECS Fargate
service whose tasks run ``constructs-fifo worker``, for jobs that outgrow a Lambda invocation.

What it builds (construct ids under the queue construct): the cluster (``Cluster``, in ``vpc`` or a
``Vpc`` of its own, unless one is given), the task definition (``TaskDefinition``: the task role
``TaskRole`` with the function's least privilege, the execution role CDK makes for the log driver and
the image pull), the container ``Worker`` (its environment written by the function's own writer from
the settings spec; ``stopTimeout`` 120 s, Fargate's most: the worker's grace period after SIGTERM),
its log group (``WorkerLogGroup``, encrypted with ``encryption_key``), the service (``Service``: no
public IP, private subnets) and its scaling.

Scaling follows the work a FIFO queue can run. Its parallelism is the number of groups with work, not
the backlog: one group's thousand messages run one after another in one slot (``QueueProcessingFargate
Service`` scales on visible messages and overstates it; mapbox/ecs-watchbot #278). The service scales
by steps on the queue's visible plus in-flight messages (metric math): ``min_tasks`` (0 by default)
when there are none, then one task per ``slots`` messages, never past ``max_tasks`` (nor past
``expected_groups / slots`` when that hint is given). In-flight messages count the running jobs, so the
step never asks for fewer tasks than the jobs running need; and a worker holds ECS task scale-in
protection while a slot runs a job, so scale-in (and a deployment) stops only idle tasks.

With ``capacity=FargateCapacity(...)`` the service places its tasks by the cluster's Fargate capacity
providers (a cluster of its own gets ``FARGATE`` and ``FARGATE_SPOT``): Fargate Spot alone, or mixed with
on-demand Fargate. A Spot interruption is a SIGTERM with two minutes' notice, which the worker drains
within ``stopTimeout`` (its running jobs' records come back after their visibility timeout, as any
crash's). With ``shared_storage=SharedStorage(...)`` every task mounts one EFS file system
(:mod:`~constructs_fifo.construct.resources.shared_storage`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from aws_cdk import Acknowledgment, Duration, Stack, Token, Validations
from aws_cdk import aws_applicationautoscaling as appscaling
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_efs as efs
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.resources import permissions
from constructs_fifo.construct.resources.function import runtime_environment
from constructs_fifo.construct.resources.shared_storage import SharedStorage, mount_shared_storage
from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime.aws_limits import FARGATE_MAX_STOP_TIMEOUT_SECONDS
from constructs_fifo.runtime.settings.choices import JobMode

__all__ = [
    "ENVIRONMENT_REASON",
    "FARGATE",
    "FARGATE_SPOT",
    "WORKER_COMMAND",
    "ContainerConsumer",
    "ContainerWorkers",
    "FargateCapacity",
    "Placement",
    "QueueResources",
    "build_container_consumer",
    "scaling_steps",
]

#: What the container runs: the image's ``CMD`` (docs/construct.md's Dockerfile); the task definition
#: leaves it to the image, so an image with an init process as its entrypoint keeps it.
WORKER_COMMAND = ("constructs-fifo", "worker")
#: ECS's two Fargate capacity providers, by their reserved names.
FARGATE: Final = "FARGATE"
FARGATE_SPOT: Final = "FARGATE_SPOT"


@dataclass(frozen=True)
class FargateCapacity:
    """Where the workers' tasks run: Fargate Spot alone, or mixed with on-demand Fargate
    (``ContainerConsumer(capacity=...)``), as an ECS capacity provider strategy.

    ``FargateCapacity()`` runs every task on Spot; ``FargateCapacity(on_demand_base=1, on_demand_weight=1,
    spot_weight=3)`` runs the first task on demand and, beyond it, one on-demand task for every three on
    Spot. Fargate Spot runs x86_64 tasks only (``architecture=X86_64``).

    Attributes
    ----------
    spot_weight, on_demand_weight : int
        The share of tasks beyond the base on ``FARGATE_SPOT`` and on ``FARGATE``: 0 to 1000, not both 0.
    on_demand_base : int
        Tasks placed on ``FARGATE`` first, before the weights apply: 0 to ``max_tasks``.
    """

    spot_weight: int = 1
    on_demand_weight: int = 0
    on_demand_base: int = 0

    def strategies(self) -> list[ecs.CapacityProviderStrategy]:
        """The service's capacity provider strategy (a provider with nothing to place is left out)."""
        strategies = []
        if self.on_demand_weight or self.on_demand_base:
            strategies.append(
                ecs.CapacityProviderStrategy(
                    capacity_provider=FARGATE, weight=self.on_demand_weight, base=self.on_demand_base
                )
            )
        if self.spot_weight:
            strategies.append(
                ecs.CapacityProviderStrategy(capacity_provider=FARGATE_SPOT, weight=self.spot_weight)
            )
        return strategies


@dataclass(frozen=True)
class ContainerConsumer:
    """Run the jobs in an ECS Fargate service instead of the Lambda function (``consumer=`` prop).

    Each task runs ``constructs-fifo worker``, which reads the queue's settings from its environment,
    runs up to ``slots`` batches at once (the ``slots`` prop), heartbeats a running job's records and
    claim, and holds task scale-in protection while a slot runs a job.

    Attributes
    ----------
    image : ecs.ContainerImage
        The workers' image: the job code, its dependencies and ``constructs-fifo`` installed, ``CMD
        ["constructs-fifo", "worker"]`` (the Dockerfile of "Container workers" in docs/construct.md).
        ``ContainerImage.from_registry(...)`` needs no Docker at synth; ``from_asset(...)`` builds at deploy.
    max_tasks : int
        The most tasks the service scales out to (it scales in to 0 when the queue is empty). 1 or more.
    cpu, memory_mib : int
        A task's size, a Fargate combination (256 CPU units with 512–2048 MiB ... 16384 with 32–120 GiB).
    ephemeral_storage_gib : int or None
        A task's disk, 21–200 GiB (a workspace, a checkout); ``None``: Fargate's 20 GiB.
    cluster : ecs.ICluster or None
        The cluster to run in (its VPC); ``None``: a cluster of its own with Container Insights, in the
        ``vpc`` prop or a VPC of its own (two AZs, one NAT gateway, flow logs).
    expected_groups : int or None
        A hint: how many groups have work at once at most. Scaling stops at ``expected_groups / slots``
        tasks, and ``slots x max_tasks`` above it warns (a FIFO queue runs one job per group at a time).
    min_tasks : int
        Tasks kept running when the queue is empty, 0 to ``max_tasks``: a job then starts within a
        receive's long poll instead of after the scaling alarm and a task's start (a minute or more).
        Each is billed around the clock (docs/capacity.md).
    capacity : FargateCapacity or None
        Fargate Spot alone or mixed with on-demand Fargate; ``None``: on-demand Fargate (launch type).
    shared_storage : SharedStorage or None
        An encrypted EFS file system mounted on every task, so a group's workspace outlives the task that
        ran its last job; ``None``: each task has only its own disk.
    """

    image: ecs.ContainerImage
    max_tasks: int = defaults.MAX_TASKS
    cpu: int = defaults.CONTAINER_CPU
    memory_mib: int = defaults.CONTAINER_MEMORY_MIB
    ephemeral_storage_gib: int | None = None
    cluster: ecs.ICluster | None = None
    expected_groups: int | None = None
    min_tasks: int = 0
    capacity: FargateCapacity | None = None
    shared_storage: SharedStorage | None = None


@dataclass(frozen=True)
class QueueResources:
    """What the workers read and write: the queues, the tables, and the dead-job policy."""

    queue: sqs.Queue
    dead_letter_queue: sqs.Queue
    claim_table: dynamodb.ITable | None
    group_table: dynamodb.ITable | None
    parks: bool


@dataclass(frozen=True)
class Placement:
    """Where the tasks run: the ``architecture``, ``vpc``, ``vpc_subnets`` and ``security_groups`` props."""

    architecture: lambda_.Architecture = defaults.ARCHITECTURE
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_groups: Sequence[ec2.ISecurityGroup] | None = None


@dataclass(frozen=True)
class ContainerWorkers:
    """What :func:`build_container_consumer` built."""

    service: ecs.FargateService
    cluster: ecs.ICluster
    task_definition: ecs.FargateTaskDefinition
    container: ecs.ContainerDefinition
    log_group: logs.LogGroup
    task_role: iam.Role
    scaling: ecs.ScalableTaskCount
    #: The file system mounted on every task (``shared_storage``); ``None`` without it.
    shared_file_system: efs.IFileSystem | None = None


def scaling_steps(
    *, slots: int, max_tasks: int, expected_groups: int | None, min_tasks: int = 0
) -> list[appscaling.ScalingInterval]:
    """The steps from messages (visible + in flight) to tasks: none below 1 message, then ``t`` tasks
    from ``(t - 1) x slots + 1`` messages, up to the most tasks the work can use (at most
    :data:`~constructs_fifo.construct.settings.defaults.SCALING_STEPS_MAX` steps, spread evenly).

    The bounds sit half a message below those counts: the metric is a whole number, so it never lands
    on a bound, where Application Auto Scaling's inclusive and exclusive ends (which differ above and
    below an alarm's threshold) and CDK's split into a lower and an upper alarm (both of which would
    fire at the threshold) could ask two task counts for one backlog, or none for a single message.

    ``min_tasks`` is the floor of every step (the scalable target's minimum holds it too).

    >>> [(step.lower, step.change) for step in scaling_steps(slots=4, max_tasks=3, expected_groups=None)]
    [(None, 0), (0.5, 1), (4.5, 2), (8.5, 3)]
    >>> [step.change for step in scaling_steps(slots=4, max_tasks=3, expected_groups=None, min_tasks=2)]
    [2, 2, 2, 3]
    """
    most = (
        max_tasks if expected_groups is None else max(1, min(max_tasks, math.ceil(expected_groups / slots)))
    )
    count = min(most, defaults.SCALING_STEPS_MAX)
    tasks = sorted({1, *(math.ceil(i * most / count) for i in range(1, count + 1))})
    return [
        appscaling.ScalingInterval(upper=0.5, change=min_tasks),
        *(appscaling.ScalingInterval(lower=(t - 1) * slots + 0.5, change=max(t, min_tasks)) for t in tasks),
    ]


def _work(queue: sqs.IQueue) -> cloudwatch.MathExpression:
    """The messages the workers have to run or are running: visible plus in flight."""
    period = defaults.ALARM_PERIOD
    return cloudwatch.MathExpression(
        expression="visible + inflight",
        using_metrics={
            "visible": queue.metric_approximate_number_of_messages_visible(
                period=period, statistic="Maximum"
            ),
            "inflight": queue.metric_approximate_number_of_messages_not_visible(
                period=period, statistic="Maximum"
            ),
        },
        period=period,
        label="messages visible and in flight",
    )


def _cluster(
    scope: Construct, consumer: ContainerConsumer, placement: Placement, key: kms.IKey | None
) -> ecs.ICluster:
    if consumer.cluster is not None:
        return consumer.cluster
    vpc = placement.vpc
    if vpc is None:
        flow_logs = logs.LogGroup(scope, "FlowLogGroup", retention=defaults.LOG_RETENTION, encryption_key=key)
        vpc = ec2.Vpc(
            scope,
            "Vpc",
            max_azs=2,
            nat_gateways=1,
            flow_logs={
                "FlowLogs": ec2.FlowLogOptions(
                    destination=ec2.FlowLogDestination.to_cloud_watch_logs(flow_logs)
                )
            },
        )
    return ecs.Cluster(
        scope,
        "Cluster",
        vpc=vpc,
        container_insights_v2=ecs.ContainerInsights.ENABLED,
        enable_fargate_capacity_providers=True if consumer.capacity is not None else None,
    )


#: Why the container's environment is plain (cdk-nag AwsSolutions-ECS2).
ENVIRONMENT_REASON: Final = (
    "The worker reads the queue's settings from its environment, as the function does (queue URLs, "
    "table names, numbers, the handler's name): none is a secret; the job's own secrets belong in "
    "Secrets Manager, read by the job."
)


def _name_in_findings(cluster: ecs.ICluster) -> str | None:
    """``cluster``'s name as cdk-nag shows it: ``<LogicalId>`` for a cluster of this stack, the name
    itself for an imported one given by name; ``None`` for any other token."""
    child = cluster.node.default_child
    if isinstance(child, ecs.CfnCluster):
        stack = Stack.of(child)
        return f"<{stack.resolve(stack.get_logical_id(child))}>"
    name = cluster.cluster_name
    return None if Token.is_unresolved(name) else name


def build_container_consumer(
    scope: Construct,
    *,
    consumer: ContainerConsumer,
    settings: Mapping[str, object],
    mode: JobMode,
    user_environment: Mapping[str, str] | None,
    resources: QueueResources,
    placement: Placement,
    slots: int,
    encryption_key: kms.IKey | None,
) -> ContainerWorkers:
    """Create the workers' cluster (unless given), task definition, log group, service and scaling.

    Parameters
    ----------
    scope
        The queue construct.
    consumer
        The container consumer's own settings (checked by
        :func:`~constructs_fifo.construct.checks.containers.check_container_props`).
    settings, mode, user_environment
        As for the function: the checked props whose rows have a variable are the container's
        environment, with the workers' own rows (``slots``, ``heartbeat_interval``).
    resources
        The queues and tables the task role may use, the environment names.
    placement
        The tasks' architecture and network.
    slots
        Batches per task (the scaling steps' size).
    encryption_key
        Encrypts the log groups too, when given.
    """
    cluster = _cluster(scope, consumer, placement, encryption_key)
    log_group = logs.LogGroup(
        scope, "WorkerLogGroup", retention=defaults.LOG_RETENTION, encryption_key=encryption_key
    )
    task_role = iam.Role(
        scope,
        "TaskRole",
        assumed_by=iam.ServicePrincipal("ecs-tasks.amazonaws.com"),
        description="Runs constructs-fifo workers: this queue, its tables, its own scale-in protection.",
    )
    permissions.grant_worker_access(
        task_role,
        queue=resources.queue,
        dead_letter_queue=resources.dead_letter_queue,
        claim_table=resources.claim_table,
        group_table=resources.group_table,
        parks=resources.parks,
        encryption_key=encryption_key,
        cluster_name=cluster.cluster_name,
        cluster_in_findings=_name_in_findings(cluster),
    )
    arm = placement.architecture.name == lambda_.Architecture.ARM_64.name
    task_definition = ecs.FargateTaskDefinition(
        scope,
        "TaskDefinition",
        cpu=consumer.cpu,
        memory_limit_mib=consumer.memory_mib,
        ephemeral_storage_gib=consumer.ephemeral_storage_gib,
        task_role=task_role,
        runtime_platform=ecs.RuntimePlatform(
            cpu_architecture=ecs.CpuArchitecture.ARM64 if arm else ecs.CpuArchitecture.X86_64,
            operating_system_family=ecs.OperatingSystemFamily.LINUX,
        ),
    )
    container = task_definition.add_container(
        "Worker",
        image=consumer.image,
        environment=runtime_environment(
            settings,
            mode=mode,
            user_environment=user_environment,
            queue=resources.queue,
            dead_letter_queue=resources.dead_letter_queue,
            claim_table=resources.claim_table,
            group_table=resources.group_table,
            container=True,
        ),
        logging=ecs.LogDrivers.aws_logs(stream_prefix="worker", log_group=log_group),
        stop_timeout=Duration.seconds(FARGATE_MAX_STOP_TIMEOUT_SECONDS),
        essential=True,
    )
    Validations.of(task_definition).acknowledge(
        Acknowledgment(id="AwsSolutions::AwsSolutions-ECS2", reason=ENVIRONMENT_REASON)
    )
    service = ecs.FargateService(
        scope,
        "Service",
        cluster=cluster,
        task_definition=task_definition,
        assign_public_ip=False,
        vpc_subnets=placement.vpc_subnets
        or ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
        security_groups=list(placement.security_groups) if placement.security_groups else None,
        min_healthy_percent=100,
        max_healthy_percent=200,
        circuit_breaker=ecs.DeploymentCircuitBreaker(rollback=True),
        capacity_provider_strategies=consumer.capacity.strategies() if consumer.capacity else None,
    )
    if consumer.capacity is not None and isinstance(cluster, ecs.Cluster):
        # A given cluster of this app gets the providers; an imported one must have them (docs/construct.md).
        cluster.enable_fargate_capacity_providers()
    shared = (
        mount_shared_storage(
            scope,
            consumer.shared_storage,
            vpc=cluster.vpc,
            task_definition=task_definition,
            container=container,
            task_role=task_role,
            service=service,
            encryption_key=encryption_key,
        )
        if consumer.shared_storage is not None
        else None
    )
    scaling = service.auto_scale_task_count(min_capacity=consumer.min_tasks, max_capacity=consumer.max_tasks)
    scaling.scale_on_metric(
        "ScaleOnWork",
        metric=_work(resources.queue),
        scaling_steps=scaling_steps(
            slots=slots,
            max_tasks=consumer.max_tasks,
            expected_groups=consumer.expected_groups,
            min_tasks=consumer.min_tasks,
        ),
        adjustment_type=appscaling.AdjustmentType.EXACT_CAPACITY,
    )
    return ContainerWorkers(
        service=service,
        cluster=cluster,
        task_definition=task_definition,
        container=container,
        log_group=log_group,
        task_role=task_role,
        scaling=scaling,
        shared_file_system=shared,
    )
