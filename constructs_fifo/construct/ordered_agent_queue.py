"""``OrderedAgentQueue``: an ordered, exactly-once-effect job queue on SQS FIFO, Lambda and DynamoDB.

The construct is the readable assembly of its parts: check the props, build the resources, wire them,
expose them. Each part is a module of its own, in a room of :mod:`constructs_fifo.construct`:

- ``checks/props.py``: dependent defaults, validation, warnings (the rules in ``checks/validation.py``
  and ``checks/function_props.py``, the defaults in ``settings/defaults.py``);
- ``resources/queues.py``: the FIFO queue and its dead-letter queue;
- ``resources/tables.py``: the claim and group tables the mode needs;
- ``resources/function.py``: the function, its log group, role and environment (its asset in
  ``code/packaging.py``, its dependencies in ``code/bundling.py``);
- ``resources/permissions.py``: the function's statements, the log key's policy (or a warning for an
  imported key) and the public grants;
- ``observability/alarms.py``: the alarms, each saying what to run first;
- ``observability/dashboard.py``: the CloudWatch dashboard and which runtime metrics it draws;
- ``observability/metrics.py``: the runtime's metrics of the queue, the construct's ``metric_*``
  methods (a base of the construct).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
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
from constructs_fifo.construct.resources import permissions
from constructs_fifo.construct.resources.function import FunctionSettings, RuntimeSettings, build_function
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
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.state.core.records import GapPolicy

__all__ = [
    "CLAIM_TABLE_ACTIONS",
    "ENQUEUE_ACTIONS",
    "ENQUEUE_KEY_ACTIONS",
    "GROUP_TABLE_ACTIONS",
    "READ_STATE_ACTIONS",
    "OrderedAgentQueue",
]


class OrderedAgentQueue(Construct, QueueMetrics):
    """A FIFO job queue whose jobs run in order per group, with an exactly-once effect.

    Builds a FIFO queue (high-throughput mode, TLS only, encrypted) redriving to a FIFO dead-letter
    queue, a DynamoDB claim table (claim mode) and group table (PARK policy or state mode), a Lambda
    function running the constructs-fifo runtime, which calls ``handler`` once per job, the SQS event
    source with ReportBatchItemFailures, its alarms (each description names the first command to run)
    and a CloudWatch dashboard.

    Each prop's default, limits and doc line are its row of the settings spec
    (:data:`constructs_fifo.runtime.settings.SETTINGS`); the tables of README.md and docs/construct.md
    are generated from it.

    Parameters
    ----------
    scope, id
        The parent construct and this construct's id.
    code
        The job code: a directory asset, ``lambda_.Code.from_asset("lambda")``. The runtime is added
        next to it as the top-level package ``constructs_fifo`` (so the directory must not hold one).
    handler
        ``module.function`` of the job function: ``handle(job, context)`` in claim mode, a transition
        ``apply(job, state) -> next_state`` in state mode.
    mode
        ``JobMode.CLAIM`` (default): a job is a side effect outside our store, claimed in the claim
        table before it runs. ``JobMode.STATE``: a job is a transition of its group's state, which
        lives in the group table and is committed exactly once per job, in order (no claim table).
    batch_size
        Records per invocation, 1 to 10. Default 10.
    max_attempts
        Runs of one job (a crash inside it included) before the runtime declares it dead, 1 to 100.
        Default 5. The runtime counts them itself, in the claim table (claim mode) or in the group's
        state bookkeeping (state mode), not from ``ApproximateReceiveCount``.
    on_dead_job
        What happens to a group after one of its jobs died. ``DeadJobPolicy.PARK`` (default): the
        group stops at its dead job, which is kept with every later job of the group in the group
        table, in order, until an operator resumes it. ``DeadJobPolicy.CONTINUE``: the dead job goes
        to the dead-letter queue and the group goes on (its order is broken).
    max_receive_count
        SQS's own dead-letter rule, only a safety net for a function that cannot start at all: at
        least ``(2 x batch_size - 1) x max_attempts + 1`` (state mode: ``(2 x batch_size - 1) x
        (max_attempts + 2) + 1``; below that, healthy jobs could follow a failing one into the
        dead-letter queue), at most 1000. Default twice that, at most 1000 (192; 268 in state mode).
    timeout
        The function timeout, 1 second to 15 minutes. Default 2 minutes.
    visibility_timeout
        The queue's visibility timeout, at least ``timeout`` (below 6 x ``timeout`` warns).
        Default 6 x ``timeout``.
    reserved_concurrency
        The function's reserved concurrency, at least 1 and at least ``max_concurrency``. Default 10.
        A reservation is a floor and a ceiling taken from the account's concurrency quota. ``None``
        reserves nothing: the mapping's ``max_concurrency`` is then the only ceiling (AWS's advice for
        SQS), with no floor (other functions of the account can use up the unreserved pool). Use it on
        accounts whose quota cannot hold a reservation (new accounts start at 10 or 50).
    max_concurrency
        The event source's maximum concurrency, 2 to 1000. Default ``reserved_concurrency`` (when it
        is 2 or more; at most 1000), so the mapping never invokes more functions than may run:
        throttled batches return to the queue with raised receive counts. With
        ``reserved_concurrency=None``, default 10.
    claim_ttl
        How long a claim item lives before DynamoDB's TTL may delete it. Default 7 days.
    age_alarm_threshold
        The queue alarm fires when the oldest message is older than this. Default 5 minutes.
    alarm_topic
        SNS topic notified when an alarm fires and when it returns to OK. Default none.
    encryption_key
        KMS key for both queues, the tables, the function's log group and its environment variables.
        The construct adds to the key's policy the statement CloudWatch Logs needs (for an imported
        key it cannot, and warns ``constructs-fifo:encryptionKeyPolicyNotManaged``). Default
        SQS-managed SSE, the AWS managed DynamoDB key, and the services' default encryption of logs and
        environment.
    content_based_deduplication
        Let SQS derive deduplication ids from the body. Default off: producers send the jobId as
        ``MessageDeduplicationId``.
    table_removal_policy
        What happens to the claim table and the group table when they leave the stack. Default RETAIN.
    environment
        Extra environment variables for the job code; the construct's own names may not be used.
    memory_size
        Function memory in MB, 128 to 10240. Default 256.
    backoff_base
        First retry delay of a failed job (doubles per attempt, capped at the visibility timeout),
        at least 1 second. Default 2 seconds.
    metrics_namespace
        CloudWatch namespace of the runtime's metrics. Default ``ConstructsFifo``.
    architecture
        ``lambda_.Architecture.X86_64`` (default) or ``ARM_64`` (about 20% less per GB-second; the
        runtime is pure Python); bundled dependencies are installed for it.
    tracing
        ``lambda_.Tracing``; default none (no ``TracingConfig``). ``ACTIVE`` makes CDK add X-Ray's
        statements on ``Resource: "*"`` to the role (acknowledged for cdk-nag's AwsSolutions-IAM5).
    layers
        Lambda layers, at most 5, each compatible with the function's runtime. Default none.
    vpc
        Run the function in this VPC. Its subnets must reach SQS, DynamoDB, CloudWatch and KMS (a NAT
        gateway or VPC endpoints). The role gets the network-interface actions of AWS's
        ``AWSLambdaVPCAccessExecutionRole``, inline. Default none (Lambda's own network).
    vpc_subnets
        Which subnets of ``vpc`` (never public ones). Default the VPC's private subnets. Needs ``vpc``.
    security_groups
        1 to 5 security groups. Default one the function creates (all outbound, no inbound). Needs ``vpc``.
    bundling
        :class:`~constructs_fifo.construct.code.bundling.CodeBundling`: ``exclude`` patterns, the
        dependencies to install (default the code directory's ``requirements.txt`` or
        ``pyproject.toml``), index options, cache, or Docker bundling. Default: install what the code
        directory declares, from the installer's configured index, into the user cache.
    reorder_limit
        State mode only: jobs with a ``seq`` beyond the next one that a group's reorder buffer holds,
        1 to 1000. Default 100.
    gap_timeout
        State mode only: how long a sequence gap may stay open before ``gap_policy`` applies and the
        gap alarm fires. Default 5 minutes.
    gap_policy
        State mode only: ``GapPolicy.WAIT`` (default: keep waiting; the alarm says so) or
        ``GapPolicy.SKIP_GAP`` (give the missing seqs up, record them, apply what follows).
    dashboard
        Build a CloudWatch dashboard of the queue, the function, the runtime's metrics and every
        alarm with its threshold. Default ``True``.
    outcome_lines
        ``OutcomeLines.JOB`` (default): a log line per job outcome, what an operator searches first.
        ``OutcomeLines.BATCH``: successes and duplicates are summarized in one line per batch (counts,
        durations, job ids); failures, dead jobs and parking keep their own lines; the metrics are
        the same: about 120 log bytes per job instead of about 870 ($0.35 less per million jobs).

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
    mode: constants.JobMode
    #: The DynamoDB claim table (partition key ``id``, TTL ``expiration``); claim mode only.
    claim_table: dynamodb.Table | None
    #: The group table (partition key ``group``, sort key ``sk``): parked groups and their kept jobs
    #: (PARK policy) and, in state mode, each group's state. ``None`` in claim mode under CONTINUE.
    group_table: dynamodb.Table | None
    #: What happens to a group after one of its jobs died.
    on_dead_job: constants.DeadJobPolicy
    #: The function running the constructs-fifo runtime.
    function: lambda_.Function
    #: The function's log group.
    log_group: logs.LogGroup
    #: The SQS event source of the function.
    event_source: event_sources.SqsEventSource
    #: Queue age, dead-letter queue depth, function errors, function throttles, then parked groups
    #: (PARK) and the sequence gap (state mode).
    alarms: list[cloudwatch.Alarm]
    #: The CloudWatch dashboard (construct id ``Dashboard``); ``None`` with ``dashboard=False``.
    dashboard: cloudwatch.Dashboard | None
    #: The KMS key of the queues and tables, if any.
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
        code: lambda_.Code,
        handler: str,
        mode: constants.JobMode = defaults.MODE,
        batch_size: int = defaults.BATCH_SIZE,
        max_attempts: int = defaults.MAX_ATTEMPTS,
        on_dead_job: constants.DeadJobPolicy = defaults.ON_DEAD_JOB,
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
        architecture: lambda_.Architecture = defaults.ARCHITECTURE,
        tracing: lambda_.Tracing | None = None,
        layers: Sequence[lambda_.ILayerVersion] | None = None,
        vpc: ec2.IVpc | None = None,
        vpc_subnets: ec2.SubnetSelection | None = None,
        security_groups: Sequence[ec2.ISecurityGroup] | None = None,
        bundling: CodeBundling | None = None,
        dashboard: bool = defaults.DASHBOARD,
        outcome_lines: constants.OutcomeLines = defaults.OUTCOME_LINES,
    ) -> None:
        super().__init__(scope, id)
        self.mode = constants.JobMode(mode)

        # --- check -----------------------------------------------------------------------------
        dashboard_problems = check_dashboard(dashboard)
        try:
            checked = check_all(
                self,
                code=code,
                handler=handler,
                mode=self.mode,
                batch_size=batch_size,
                max_attempts=max_attempts,
                max_receive_count=max_receive_count,
                timeout=timeout,
                visibility_timeout=visibility_timeout,
                reserved_concurrency=reserved_concurrency,
                max_concurrency=max_concurrency,
                claim_ttl=claim_ttl,
                age_alarm_threshold=age_alarm_threshold,
                environment=environment,
                memory_size=memory_size,
                backoff_base=backoff_base,
                reorder_limit=reorder_limit,
                gap_timeout=gap_timeout,
                gap_policy=gap_policy,
                vpc=vpc,
                vpc_subnets=vpc_subnets,
                security_groups=security_groups,
                architecture=architecture,
                tracing=tracing,
                layers=layers,
                bundling=bundling,
                outcome_lines=outcome_lines,
            )
        except InvalidPropsError as error:  # one error for every invalid prop of the call
            raise InvalidPropsError([*error.problems, *dashboard_problems]) from None
        raise_if_any(dashboard_problems)
        props = checked.props
        self.encryption_key = encryption_key
        self.metrics_namespace = metrics_namespace
        self.on_dead_job = constants.DeadJobPolicy(on_dead_job)
        parks = self.on_dead_job is constants.DeadJobPolicy.PARK

        # --- build: queues, tables, function -------------------------------------------------------
        queues = build_queues(
            self,
            visibility_timeout=props.visibility_timeout,
            max_receive_count=props.max_receive_count,
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
        job_function = build_function(
            self,
            code_dir=checked.code_dir,
            settings=RuntimeSettings(
                handler=handler,
                mode=self.mode,
                on_dead_job=self.on_dead_job,
                visibility_timeout=props.visibility_timeout,
                backoff_base=backoff_base,
                claim_ttl=claim_ttl,
                max_attempts=max_attempts,
                metrics_namespace=metrics_namespace,
                outcome_lines=constants.OutcomeLines(outcome_lines),
                state=checked.state,
            ),
            user_environment=environment,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            claim_table=self.claim_table,
            group_table=self.group_table,
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
            encryption_key=encryption_key,
        )
        self.function, self.log_group = job_function.function, job_function.log_group
        if encryption_key is not None:
            permissions.allow_log_encryption_or_warn(self, encryption_key)

        # --- wire: least privilege, then the event source ------------------------------------------
        permissions.grant_function_access(
            job_function.role,
            log_group=self.log_group,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            claim_table=self.claim_table,
            group_table=self.group_table,
            parks=parks,
            encryption_key=encryption_key,
            in_vpc=vpc is not None,
        )
        permissions.acknowledge_wildcards(
            job_function.role, in_vpc=vpc is not None, traced=tracing == lambda_.Tracing.ACTIVE
        )
        # Binding the event source grants consume on the queue (and kms:Decrypt on its key).
        self.event_source = event_sources.SqsEventSource(
            self.queue,
            batch_size=batch_size,
            report_batch_item_failures=True,
            max_concurrency=(
                max_concurrency
                if max_concurrency is not None
                else defaults.max_concurrency_for(reserved_concurrency)
            ),
        )
        self.function.add_event_source(self.event_source)
        self.node.add_validation(StaticGroupRuleTargets(self, self.queue))  # a static group: one lane

        # --- expose: alarms ------------------------------------------------------------------------
        self.alarms = build_alarms(
            self,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            function=self.function,
            log_group=self.log_group,
            age_alarm_threshold=age_alarm_threshold,
            alarm_topic=alarm_topic,
            groups_parked=self.metric_groups_parked(period=defaults.ALARM_PERIOD) if parks else None,
            sequence_gap=(
                (
                    self.metric_sequence_gap_open_seconds(period=defaults.ALARM_PERIOD),
                    checked.state.gap_timeout,
                )
                if checked.state is not None
                else None
            ),
        )
        self.dashboard = (
            build_dashboard(
                self,
                queue=self.queue,
                function=self.function,
                reserved_concurrency=reserved_concurrency,
                alarms=self.alarms,
                metric=self.metric,
                claims=self.mode is constants.JobMode.CLAIM,
                parks=parks,
            )
            if dashboard
            else None
        )

    # --- grants -------------------------------------------------------------------------------------
    def grant_enqueue(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` send jobs: ``sqs:SendMessage`` on the queue and nothing else.

        With an ``encryption_key``, also ``kms:GenerateDataKey`` and ``kms:Decrypt`` on the key, which
        SQS needs to encrypt the message for the sender.

        Parameters
        ----------
        grantee
            The producer (a role, a function, a user ...).

        Returns
        -------
        iam.Grant
            The grant (combined with the key's grant, when there is a key).
        """
        return permissions.grant_enqueue(grantee, queue=self.queue, encryption_key=self.encryption_key)

    @property
    def state_table(self) -> dynamodb.Table | None:
        """State mode: the table holding each group's state (the group table); ``None`` in claim mode."""
        return self.group_table if self.mode is constants.JobMode.STATE else None

    def grant_read_state(self, grantee: iam.IGrantable) -> iam.Grant:
        """Let ``grantee`` read group states (``constructs_fifo.client.GroupStateReader``).

        Grants ``dynamodb:GetItem`` on the state table and nothing else (plus ``kms:Decrypt`` on the
        key, when there is one). State mode only.

        Raises
        ------
        InvalidPropsError
            The queue is in claim mode: it has no states to read.
        """
        table = self.state_table
        if table is None:
            raise InvalidPropsError(
                [
                    f"grant_read_state() needs mode=JobMode.STATE; this queue is in mode={self.mode.value} "
                    "and keeps no group states: read your own store, or build the queue in state mode."
                ]
            )
        return permissions.grant_read_state(grantee, table=table, encryption_key=self.encryption_key)
