"""``OrderedAgentQueue``: an ordered, exactly-once-effect job queue on SQS FIFO, Lambda and DynamoDB.

The construct is the readable assembly of its parts: check the props, build the resources, wire them,
expose them. Each part is a module of its own, in a room of :mod:`constructs_fifo.construct`:
``checks/`` (dependent defaults, validation, warnings; defaults in ``settings/defaults.py``),
``resources/queues.py`` and ``resources/tables.py`` (the FIFO queue and its dead-letter queue; the
claim and group tables the mode needs), ``resources/lambda_consumer.py`` (the default consumer: the
function of ``resources/function.py``, its grants, its event source; its asset in ``code/``),
``resources/containers.py`` (``consumer=ContainerConsumer(...)``: an ECS Fargate service running
``constructs-fifo worker``), ``resources/permissions.py`` (every statement, the log key's policy and the
public grants) and ``observability/`` (the alarms, each saying what to run first, the dashboard, and the
``metric_*`` methods of :class:`~constructs_fifo.construct.observability.metrics.QueueMetrics`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.checks.props import check_all
from constructs_fifo.construct.checks.validation import raise_if_any
from constructs_fifo.construct.code.bundling import CodeBundling
from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.ingress.static_group import StaticGroupRuleTargets
from constructs_fifo.construct.observability.alarms import build_alarms
from constructs_fifo.construct.observability.dashboard import build_dashboard, check_dashboard
from constructs_fifo.construct.observability.metrics import QueueMetrics
from constructs_fifo.construct.observability.workers import build_worker_observability
from constructs_fifo.construct.payloads import bucket as payloads
from constructs_fifo.construct.resources import client_access, permissions
from constructs_fifo.construct.resources.containers import (
    ContainerConsumer,
    ContainerWorkers,
    Placement,
    QueueResources,
    build_container_consumer,
)
from constructs_fifo.construct.resources.function import FunctionSettings
from constructs_fifo.construct.resources.lambda_consumer import (
    LambdaConsumerAccess,
    ProvisionedPollers,
    build_lambda_consumer,
)
from constructs_fifo.construct.resources.outputs import QueueParts, build_outputs
from constructs_fifo.construct.resources.permissions import (
    CLAIM_TABLE_ACTIONS,
    ENQUEUE_ACTIONS,
    ENQUEUE_KEY_ACTIONS,
    GROUP_TABLE_ACTIONS,
    READ_STATE_ACTIONS,
)
from constructs_fifo.construct.resources.queues import build_queues
from constructs_fifo.construct.resources.tables import build_tables
from constructs_fifo.construct.settings import defaults
from constructs_fifo.construct.settings.pace import Pace
from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = [
    "CLAIM_TABLE_ACTIONS",
    "ENQUEUE_ACTIONS",
    "ENQUEUE_KEY_ACTIONS",
    "GROUP_TABLE_ACTIONS",
    "READ_STATE_ACTIONS",
    "ContainerConsumer",
    "OrderedAgentQueue",
]

#: The construct's keywords: one per prop row of the settings spec, in its order (a test pins them).
_PROPS = tuple(row.name for row in SETTINGS.values() if row.prop is not None)


class OrderedAgentQueue(Construct, QueueMetrics, LambdaConsumerAccess, client_access.ClientAccess):
    """A FIFO job queue whose jobs run in order per group, with an exactly-once effect.

    Builds a FIFO queue (high-throughput, TLS only, encrypted) redriving to a FIFO dead-letter queue, a
    DynamoDB claim table (claim mode) and group table (PARK or state mode), a Lambda function running the
    runtime, which calls ``handler`` once per job, its SQS event source, alarms and a dashboard.

    With ``consumer=ContainerConsumer(image=...)`` an ECS Fargate service of ``constructs-fifo worker``
    tasks runs them, scaled on the queue's visible and in-flight messages; a worker holds task scale-in
    protection while a slot runs a job ("Container workers", docs/construct.md).

    Each prop's default, limits and doc line are its row of the settings spec
    (:data:`constructs_fifo.runtime.settings.SETTINGS`); the tables of README.md and docs/construct.md
    are generated from it.

    Parameters
    ----------
    scope, id
        The parent construct and this construct's id.
    code : lambda_.Code | None
        The job code: a **directory** asset (``Code.from_asset(dir)``); inline code, S3 code and zip files are
        rejected; the directory may not hold a top-level ``constructs_fifo``; with the container consumer the
        image holds the code, and a directory given is only checked for ``handler``. Default: required (the
        Lambda consumer).
    handler : str
        ``module.function`` of the job function, ``handle(job, context)`` (state mode: the transition
        ``apply(job, state) -> next_state``): Python identifiers, dotted module allowed (``pkg.mod.handle``).
        Default: required.
    mode : JobMode
        ``CLAIM``: a job is a side effect, claimed in the claim table before it runs; ``STATE``: a job is a
        transition ``apply(job, state) -> state`` of its group's state (group table, no claim table). Limits:
        ``CLAIM`` or ``STATE``. Default: ``CLAIM``.
    batch_size : int
        Records per invocation, or per container worker's receive. Limits: 1–10. Default: ``10``.
    max_attempts : int
        Runs of one job (a crash inside it included) before the runtime declares it dead. Limits: 1–100.
        Default: ``5``.
    on_dead_job : DeadJobPolicy
        ``PARK``: the group stops at its dead job, which is kept with every later job of the group in the
        group table, in order, until resumed (``ParkedGroupsAlarm``); ``CONTINUE``: the dead job goes to the
        DLQ and the group goes on (its order is broken). Limits: ``PARK`` or ``CONTINUE``. Default: ``PARK``.
    max_receive_count : int | None
        SQS's own dead-letter rule, only a safety net for a function that cannot start at all. Limits: ≤ 1000;
        ≥ ``(2 × batch_size − 1) × max_attempts + 1`` (state mode: ``(2 × batch_size − 1) × (max_attempts + 2)
        + 1``; and ≥ 6): below it healthy jobs could follow a failing one into the DLQ. Default: twice the
        least value, at most 1000 (192; 268 in state mode).
    timeout : Duration
        The function timeout. Limits: 1 s – 15 min. Default: 2 minutes.
    visibility_timeout : Duration | None
        The queue's visibility timeout: the cap of every retry delay. Limits: ≤ 12 h; ≥ ``timeout``; below 6 ×
        ``timeout`` adds warning ``constructs-fifo:visibilityTimeoutBelowSixTimesTimeout``; required when
        ``timeout`` is a token (the Lambda consumer); > 2 × ``heartbeat_interval`` (the container consumer).
        Default: 6 × ``timeout``; the container consumer: 5 minutes.
    reserved_concurrency : int | None
        The function's reserved concurrency: a floor and a ceiling taken from the account's quota; ``None``
        reserves nothing, and ``max_concurrency`` is then the only ceiling (no floor). Limits: ≥ 1; ≥
        ``max_concurrency``; ``1`` adds warning ``constructs-fifo:reservedConcurrencyOne`` (the mapping cannot
        be capped below 2). Default: ``10``.
    max_concurrency : int | None
        The event source's ``ScalingConfig.MaximumConcurrency``; the default keeps the mapping from invoking
        more functions than may run (throttled batches return with raised receive counts). Limits: 2–1000.
        Default: ``reserved_concurrency`` (when ≥ 2; at most 1000); ``10`` when ``reserved_concurrency=None``.
    claim_ttl : Duration
        How long a claim item lives: claim items carry ``expiration`` = now + TTL (claim mode). Limits: ≥ 1 s.
        Default: 7 days.
    age_alarm_threshold : Duration
        The queue alarm fires when the oldest message is older than this. Limits: ≥ 1 s. Default: 5 minutes.
    alarm_topic : sns.ITopic | None
        Alarm **and** OK action of every alarm. Default: none.
    encryption_key : kms.IKey | None
        Both queues (SSE-KMS), the tables (customer managed), the function's log group (the key policy gains
        the statement CloudWatch Logs needs; an imported key warns
        ``constructs-fifo:encryptionKeyPolicyNotManaged``) and its environment variables; see
        docs/security.md. Default: none.
    content_based_deduplication : bool
        Let SQS derive deduplication ids from the body; off: producers send the jobId as
        ``MessageDeduplicationId``. Default: ``False``.
    table_removal_policy : RemovalPolicy
        What happens to the claim table and the group table when they leave the stack. Default: ``RETAIN``.
    environment : Mapping[str, str] | None
        Extra variables for the job code; the construct's own ``CONSTRUCTS_FIFO_*`` names are rejected.
        Default: none.
    memory_size : int
        Function memory. Limits: 128–10240 MB. Default: ``256``.
    backoff_base : Duration
        First retry delay of a failed job, doubling per attempt, capped at the visibility timeout. Limits: 1 s
        – 12 h. Default: 2 seconds.
    metrics_namespace : str
        CloudWatch namespace of the runtime's EMF metrics. Default: ``ConstructsFifo``.
    reorder_limit : int | None
        State mode only: jobs with a ``seq`` beyond the next one that a group's reorder buffer holds. Limits:
        1–1000. Default: ``100`` (state mode).
    gap_timeout : Duration | None
        State mode only: how long a sequence gap may stay open before ``gap_policy`` applies and
        ``SequenceGapAlarm`` fires. Limits: ≥ 1 s. Default: 5 minutes (state mode).
    gap_policy : GapPolicy | None
        State mode only: ``WAIT`` keeps waiting (the alarm calls an operator); ``SKIP_GAP`` gives the missing
        seqs up, records them and applies what follows. Limits: ``WAIT`` or ``SKIP_GAP``. Default: ``WAIT``
        (state mode).
    max_job_duration : Duration | None
        Bounds one run of a job: a run still going after it is given up as a failed attempt; none: the
        consumer's own bound (the Lambda consumer's is ``timeout``; the container consumer's is 1 hour).
        Limits: 1 s – 12 h; ≤ ``timeout`` with the Lambda consumer (it ends every run there). Default: the
        consumer's own bound.
    architecture : lambda_.Architecture
        The instruction set of the function or the container's tasks (the image must be built for it);
        ``ARM_64`` is about 20% cheaper (the runtime is pure Python); bundled dependencies are installed for
        it. Limits: ``X86_64`` or ``ARM_64``. Default: ``X86_64``.
    tracing : lambda_.Tracing | None
        X-Ray tracing of the function. Limits: a ``lambda_.Tracing``; ``ACTIVE`` adds X-Ray's statements on
        ``Resource: "*"`` (acknowledged for cdk-nag). Default: none.
    layers : Sequence[lambda_.ILayerVersion] | None
        Lambda layers of the function. Limits: ≤ 5; each compatible with ``python3.14`` when it says. Default:
        none.
    vpc : ec2.IVpc | None
        The function (or the container's service) runs in it; its subnets must reach SQS, DynamoDB, CloudWatch
        and KMS (NAT or endpoints); the function's role gets the network-interface actions of
        ``AWSLambdaVPCAccessExecutionRole``, inline. Default: none.
    vpc_subnets : ec2.SubnetSelection | None
        Which subnets of ``vpc`` the function (or the container's service) runs in. Limits: needs ``vpc``; no
        public subnets. Default: the VPC's private subnets.
    security_groups : Sequence[ec2.ISecurityGroup] | None
        The function's (or the container's tasks') security groups. Limits: 1–5; needs ``vpc``. Default: one
        the function creates (all outbound, no inbound).
    bundling : CodeBundling | None
        How the job code's dependencies are installed: ``exclude`` patterns, ``requirements``, index options,
        ``cache_dir``, or ``docker`` bundling (see "Job code with dependencies" in docs/construct.md).
        Default: install what the code directory declares.
    dashboard : bool
        Build a CloudWatch dashboard: the queue, its DLQ, the function, the runtime's metrics, each alarm with
        its threshold, and the first commands to run (see "The dashboard" in docs/construct.md). Default:
        ``True``.
    outcome_lines : OutcomeLines
        ``JOB``: a log line per job outcome, what an operator searches at 3 a.m.; ``BATCH``: successes and
        duplicates summarized in one line per batch (failures, dead jobs and parking keep their lines; the
        same metrics), less log ingestion. Limits: ``JOB`` or ``BATCH``. Default: ``JOB``.
    outputs : bool
        Add its own CfnOutputs. Default: ``True``.
    provisioned_pollers : ProvisionedPollers | None
        The event source's provisioned mode: ``ProvisionedPollers(minimum, maximum)`` pollers always ready
        (each reads ~1 MB/s and runs up to 10 invocations at once), scaling three times faster than on-demand
        polling; billed per poller-hour even when the queue is empty (docs/capacity.md). Limits: ``minimum``
        2–200, ``minimum`` ≤ ``maximum`` ≤ 2000; refused beside ``max_concurrency`` (Lambda takes one or the
        other), so ``reserved_concurrency`` is then the function's only ceiling. Default: none: on-demand
        polling, capped by ``max_concurrency``.
    consumer : ContainerConsumer | None
        What runs the jobs: none, the Lambda function; ``ContainerConsumer(image=...)``, an ECS Fargate
        service running ``constructs-fifo worker`` (see "Container workers" in docs/construct.md). Default:
        the Lambda function.
    slots : int | None
        Container consumer only: batches one worker task runs at once, each from one group. Limits: 1–64.
        Default: ``4`` (the container consumer).
    heartbeat_interval : Duration | None
        Container consumer only: how often a running job's worker extends its records' visibility and renews
        its claim. Limits: 1 s – 6 h; < ``visibility_timeout`` / 2: a late or retried renewal still lands
        while the records are hidden. Default: 30 seconds (the container consumer).
    large_payloads : bool
        Bodies over SQS's 1 MiB and results over 64 KiB go to an S3 bucket the construct creates (the queue's
        key, TLS only, objects expiring after ``claim_ttl``), the message or claim carrying a pointer in the
        SQS Extended Client Library's format (docs/limits.md). Default: ``False``.
    pace : Pace | None
        At most ``jobs`` runs per ``per`` (with a ``burst``) for each value of ``key``: ``group``, or a key
        that spans groups (``body:payload.tenant``, ``attribute:<name>``); over it a job waits in its place,
        no attempt counted (see "Pace a key" in docs/steering.md). Limits: ``jobs`` and ``burst`` 1–100000,
        ``per`` 1 s – 1 day; with it ``max_receive_count`` defaults to 1000. Default: none: not paced.

    Raises
    ------
    InvalidPropsError
        A :class:`ValueError` listing every invalid prop of the call.

    Examples
    --------
    >>> jobs = OrderedAgentQueue(stack, "Jobs",
    ...     code=lambda_.Code.from_asset("lambda"),
    ...     handler="agent_worker.handle",
    ... )  # doctest: +SKIP
    >>> jobs.grant_enqueue(producer_role)  # doctest: +SKIP
    """

    #: The FIFO job queue.
    queue: sqs.Queue
    #: The FIFO dead-letter queue.
    dead_letter_queue: sqs.Queue
    #: What a job is: a side effect claimed first (CLAIM) or a transition of its group's state (STATE).
    mode: JobMode
    #: The DynamoDB claim table (partition key ``id``, TTL ``expiration``); claim mode only.
    claim_table: dynamodb.Table | None
    #: The group table (partition key ``group``, sort key ``sk``): parked groups and their kept jobs
    #: (PARK policy) and, in state mode, each group's state. ``None`` in claim mode under CONTINUE.
    group_table: dynamodb.Table | None
    #: What happens to a group after one of its jobs died.
    on_dead_job: DeadJobPolicy
    #: The consumer's log group (the function's, or the workers').
    log_group: logs.LogGroup
    #: The container consumer's service, cluster and task role; ``None`` with the Lambda function.
    workers: ContainerWorkers | None
    #: Queue age, dead-letter queue depth, function errors, function throttles (the container consumer:
    #: none), then parked groups (PARK) and the sequence gap (state mode), then the workers' alarms.
    alarms: list[cloudwatch.Alarm]
    #: The CloudWatch dashboard (construct id ``Dashboard``); ``None`` with ``dashboard=False``.
    dashboard: cloudwatch.Dashboard | None
    #: The KMS key of the queues, tables and payload bucket, if any.
    encryption_key: kms.IKey | None
    #: The physical names of the two queues (fixed at synth time).
    queue_name: str
    dead_letter_queue_name: str
    #: CloudWatch namespace of the runtime's metrics.
    metrics_namespace: str

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        code: lambda_.Code | None = None,
        handler: str,
        mode: JobMode = defaults.MODE,
        batch_size: int = defaults.BATCH_SIZE,
        max_attempts: int = defaults.MAX_ATTEMPTS,
        on_dead_job: DeadJobPolicy = defaults.ON_DEAD_JOB,
        max_receive_count: int | None = None,
        timeout: Duration = defaults.TIMEOUT,
        visibility_timeout: Duration | None = None,
        reserved_concurrency: int | None = defaults.RESERVED_CONCURRENCY,
        max_concurrency: int | None = None,
        claim_ttl: Duration = defaults.CLAIM_TTL,
        age_alarm_threshold: Duration = defaults.AGE_ALARM_THRESHOLD,
        alarm_topic: sns.ITopic | None = None,
        encryption_key: kms.IKey | None = None,
        content_based_deduplication: bool = defaults.CONTENT_BASED_DEDUPLICATION,
        table_removal_policy: RemovalPolicy = defaults.TABLE_REMOVAL_POLICY,
        environment: Mapping[str, str] | None = None,
        memory_size: int = defaults.MEMORY_SIZE,
        backoff_base: Duration = defaults.BACKOFF_BASE,
        metrics_namespace: str = defaults.METRICS_NAMESPACE,
        reorder_limit: int | None = None,
        gap_timeout: Duration | None = None,
        gap_policy: GapPolicy | None = None,
        max_job_duration: Duration | None = None,
        architecture: lambda_.Architecture = defaults.ARCHITECTURE,
        tracing: lambda_.Tracing | None = None,
        layers: Sequence[lambda_.ILayerVersion] | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        bundling: CodeBundling | None = None,
        dashboard: bool = defaults.DASHBOARD,
        outcome_lines: OutcomeLines = defaults.OUTCOME_LINES,
        outputs: bool = defaults.OUTPUTS,
        provisioned_pollers: ProvisionedPollers | None = None,
        consumer: ContainerConsumer | None = None,
        slots: int | None = None,
        heartbeat_interval: Duration | None = None,
        large_payloads: bool = False,
        pace: Pace | None = None,
    ) -> None:
        given = locals()  # the keywords, before any other local: one per prop row
        props = {name: given[name] for name in _PROPS}
        super().__init__(scope, id)

        # --- check -----------------------------------------------------------------------------
        dashboard_problems = check_dashboard(dashboard)
        try:
            checked = check_all(self, props)
        except InvalidPropsError as error:  # one error for every invalid prop of the call
            raise InvalidPropsError([*error.problems, *dashboard_problems]) from None
        raise_if_any(dashboard_problems)
        self.mode = checked.mode
        self.encryption_key = encryption_key
        self.metrics_namespace = metrics_namespace
        self.on_dead_job = DeadJobPolicy(on_dead_job)
        parks = self.on_dead_job is DeadJobPolicy.PARK

        # --- build: queues, tables, the consumer --------------------------------------------------
        queues = build_queues(
            self,
            visibility_timeout=checked.visibility_timeout,
            max_receive_count=checked.max_receive_count,
            content_based_deduplication=content_based_deduplication,
            encryption_key=encryption_key,
        )
        self.queue, self.dead_letter_queue = queues.queue, queues.dead_letter_queue
        self.queue_name, self.dead_letter_queue_name = queues.queue_name, queues.dead_letter_queue_name
        tables = build_tables(
            self,
            mode=self.mode,
            on_dead_job=self.on_dead_job,
            encryption_key=encryption_key,
            removal_policy=table_removal_policy,
        )
        self.claim_table, self.group_table = tables.claim_table, tables.group_table
        resources = QueueResources(
            self.queue, self.dead_letter_queue, self.claim_table, self.group_table, parks
        )
        placement = Placement(architecture, vpc, vpc_subnets, security_groups)
        self._lambda, self.workers = None, None
        if checked.container is None:
            assert checked.code_dir is not None  # required of the Lambda consumer by the check step
            self._lambda = build_lambda_consumer(
                self,
                code_dir=checked.code_dir,
                settings=checked.values,
                mode=self.mode,
                user_environment=environment,
                resources=resources,
                function_settings=FunctionSettings(
                    timeout=timeout,
                    memory_size=memory_size,
                    reserved_concurrency=reserved_concurrency,
                    architecture=architecture,
                    tracing=tracing,
                    layers=layers,
                    vpc=vpc,
                    vpc_subnets=vpc_subnets,
                    security_groups=security_groups,
                    bundling=bundling,
                ),
                batch_size=batch_size,
                max_concurrency=max_concurrency,
                encryption_key=encryption_key,
            )
            self.log_group = self._lambda.log_group
        else:
            self.workers = build_container_consumer(
                self,
                consumer=checked.container,
                settings=checked.values,
                mode=self.mode,
                user_environment=environment,
                resources=resources,
                placement=placement,
                slots=checked.slots,
                encryption_key=encryption_key,
            )
            self.log_group = self.workers.log_group
        function = self._lambda.function if self._lambda is not None else None
        self.payload_bucket = payloads.build_large_payloads(
            self,
            large_payloads=large_payloads,
            encryption_key=encryption_key,
            claim_ttl=claim_ttl,
            removal_policy=table_removal_policy,
            consumer=(function, function)
            if self.workers is None
            else (self.workers.task_role, self.workers.container),
        )
        if outputs:
            service = self.workers.service if self.workers is not None else None
            parts = QueueParts(
                self.queue, self.dead_letter_queue, self.claim_table, self.group_table, function, service
            )
            parts = dataclasses.replace(parts, payload_bucket=self.payload_bucket)
            build_outputs(self, parts)
        if encryption_key is not None:
            permissions.allow_log_encryption_or_warn(self, encryption_key)
        self.node.add_validation(StaticGroupRuleTargets(self, self.queue))  # a static group: one lane

        # --- expose: alarms, dashboard -------------------------------------------------------------
        self.alarms = build_alarms(
            self,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            function=function,
            log_group=self.log_group,
            age_alarm_threshold=age_alarm_threshold,
            alarm_topic=alarm_topic,
            groups_parked=self.metric_groups_parked(period=defaults.ALARM_PERIOD) if parks else None,
            sequence_gap=(
                (self.metric_sequence_gap_open_seconds(period=defaults.ALARM_PERIOD), checked.gap_timeout)
                if checked.gap_timeout is not None
                else None
            ),
        )
        widgets: list[cloudwatch.IWidget] = []
        if self.workers is not None:
            worker_alarms, widgets = build_worker_observability(
                self, self.queue, self.workers.service, self.log_group, slots=checked.slots, topic=alarm_topic
            )
            self.alarms += worker_alarms
        self.dashboard = (
            build_dashboard(
                self,
                queue=self.queue,
                function=function,
                reserved_concurrency=reserved_concurrency,
                alarms=self.alarms,
                metric=self.metric,
                claims=self.mode is JobMode.CLAIM,
                parks=parks,
                consumer_widgets=widgets,
            )
            if dashboard
            else None
        )

    # --- grants -------------------------------------------------------------------------------------
    def grant_enqueue(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` (a producer) send jobs: ``sqs:SendMessage`` on the queue and nothing else (with
        an ``encryption_key``, also ``kms:GenerateDataKey`` and ``kms:Decrypt``, which SQS needs to
        encrypt for the sender; with ``large_payloads``, ``s3:PutObject`` on the payload bucket's objects).
        It cannot cancel or hold: that is :meth:`grant_steer`'s."""
        grant = permissions.grant_enqueue(grantee, queue=self.queue, encryption_key=self.encryption_key)
        return payloads.grant_sending(grantee, self.payload_bucket, self.encryption_key, grant)

    def grant_steer(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` steer sent jobs (``constructs_fifo.client.JobSteering``; docs/steering.md):
        get, put and update items of the claim table, and read, query, put and update items of the group
        table (hold, release), send to the queue (a release's wake-up); no delete, scan or receive."""
        return permissions.grant_steer(
            grantee,
            queue=self.queue,
            claim_table=self.claim_table,
            group_table=self.group_table,
            encryption_key=self.encryption_key,
        )
