"""``OrderedAgentQueue``: an ordered, exactly-once-effect job queue on SQS FIFO, Lambda and DynamoDB.

The construct is thin: check the props, build the resources, wire them, expose them. Defaults live in
:mod:`constructs_fifo.construct.defaults`, checks in :mod:`constructs_fifo.construct.validation`, the
function asset in :mod:`constructs_fifo.construct.packaging` and the alarms in
:mod:`constructs_fifo.construct.alarms`.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import ArnFormat, Duration, Names, RemovalPolicy, Stack, Token
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct import defaults
from constructs_fifo.construct.alarms import build_alarms
from constructs_fifo.construct.packaging import build_function_code
from constructs_fifo.construct.tables import build_claim_table, build_group_table
from constructs_fifo.construct.validation import (
    InvalidPropsError,
    Props,
    check_code,
    check_environment,
    check_props,
    check_state_props,
    raise_if_any,
    warn_risky,
)
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.transitions import GapPolicy

__all__ = [
    "CLAIM_TABLE_ACTIONS",
    "ENQUEUE_ACTIONS",
    "ENQUEUE_KEY_ACTIONS",
    "GROUP_TABLE_ACTIONS",
    "READ_STATE_ACTIONS",
    "OrderedAgentQueue",
]

#: The only DynamoDB actions the function gets, on the claim table only.
CLAIM_TABLE_ACTIONS = (
    "dynamodb:GetItem",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)
#: The DynamoDB actions the function gets on the group table (PARK policy): one BatchGetItem of park
#: headers per batch, a Query of kept records, and TransactWriteItems (Put/Update/Delete/Condition).
GROUP_TABLE_ACTIONS = (
    "dynamodb:BatchGetItem",
    "dynamodb:GetItem",
    "dynamodb:Query",
    "dynamodb:PutItem",
    "dynamodb:UpdateItem",
    "dynamodb:DeleteItem",
    "dynamodb:ConditionCheckItem",
)
#: What :meth:`OrderedAgentQueue.grant_read_state` grants on the state table.
READ_STATE_ACTIONS = ("dynamodb:GetItem",)
#: What the function sends: dead jobs to the dead-letter queue and (PARK) a resumed group's wake-up
#: message to the source queue.
SEND_ACTIONS = ("sqs:SendMessage",)
#: What the function needs on a customer managed key to read and write the claim table.
CLAIM_TABLE_KEY_ACTIONS = ("kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey", "kms:DescribeKey")
#: What :meth:`OrderedAgentQueue.grant_enqueue` grants on the queue ...
ENQUEUE_ACTIONS = ("sqs:SendMessage",)
#: ... and on the encryption key, when there is one.
ENQUEUE_KEY_ACTIONS = ("kms:GenerateDataKey", "kms:Decrypt")

#: The environment variables the construct writes for its runtime, and where each value comes from
#: (named in the error when a user's ``environment`` tries to set one).
_RUNTIME_ENVIRONMENT = {
    constants.ENV_USER_HANDLER: "from the handler prop",
    constants.ENV_CLAIM_TABLE: "the claim table's name",
    constants.ENV_QUEUE_URL: "the queue's URL",
    constants.ENV_VISIBILITY_TIMEOUT_SECONDS: "from the visibility_timeout prop",
    constants.ENV_BACKOFF_BASE_SECONDS: "from the backoff_base prop",
    constants.ENV_CLAIM_TTL_SECONDS: "from the claim_ttl prop",
    constants.ENV_METRICS_NAMESPACE: "from the metrics_namespace prop",
    constants.ENV_MAX_ATTEMPTS: "from the max_attempts prop",
    constants.ENV_ON_DEAD_JOB: "from the on_dead_job prop",
    constants.ENV_DEAD_LETTER_QUEUE_URL: "the dead-letter queue's URL",
    constants.ENV_GROUP_TABLE: "the group table's name (PARK policy or state mode)",
    constants.ENV_MODE: "from the mode prop",
    constants.ENV_REORDER_LIMIT: "from the reorder_limit prop",
    constants.ENV_GAP_TIMEOUT_SECONDS: "from the gap_timeout prop",
    constants.ENV_GAP_POLICY: "from the gap_policy prop",
}

_DLQ_SUFFIX = "-dlq"
_FIFO_SUFFIX = ".fifo"
# Both names share one base; the longer one (``<base>-dlq.fifo``) stays within SQS's 80 characters.
_BASE_NAME_LENGTH = defaults.MAX_QUEUE_NAME_LENGTH - len(_DLQ_SUFFIX) - len(_FIFO_SUFFIX)


def _whole_number(value: int | float) -> str:
    """``value`` as an environment string (a token stays a token)."""
    return Token.as_string(value) if Token.is_unresolved(value) else str(int(value))


def _whole_seconds(value: Duration) -> str:
    """``value`` in whole seconds as an environment string (a token stays a token)."""
    if value.is_unresolved():
        return Token.as_string(value.to_seconds())
    return str(int(value.to_seconds(integral=False)))


class OrderedAgentQueue(Construct):
    """A FIFO job queue whose jobs run in order per group, with an exactly-once effect.

    Builds a FIFO queue (high-throughput mode, TLS only, encrypted) redriving to a FIFO dead-letter
    queue, a DynamoDB claim table, a Lambda function running the constructs-fifo runtime, which calls
    ``handler`` once per job, the SQS event source with ReportBatchItemFailures, and four alarms.

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
        Default 5. The runtime counts them in the claim table, not from ``ApproximateReceiveCount``.
    on_dead_job
        What happens to a group after one of its jobs died. ``DeadJobPolicy.PARK`` (default): the
        group stops at its dead job, which is kept with every later job of the group in the group
        table, in order, until an operator resumes it. ``DeadJobPolicy.CONTINUE``: the dead job goes
        to the dead-letter queue and the group goes on (its order is broken).
    max_receive_count
        SQS's own dead-letter rule, only a safety net for a function that cannot start at all: at
        least ``(2 x batch_size - 1) x max_attempts`` (below that, healthy jobs could follow a failing
        one into the dead-letter queue), at most 1000. Default twice that, at most 1000 (190).
    timeout
        The function timeout, 1 second to 15 minutes. Default 2 minutes.
    visibility_timeout
        The queue's visibility timeout, at least ``timeout`` (below 6 x ``timeout`` warns).
        Default 6 x ``timeout``.
    reserved_concurrency
        The function's reserved concurrency, at least 1 and at least ``max_concurrency``. Default 10.
    max_concurrency
        The event source's maximum concurrency, 2 to 1000. Default ``reserved_concurrency`` (when it
        is 2 or more; at most 1000), so the mapping never invokes more functions than may run:
        throttled batches return to the queue with raised receive counts.
    claim_ttl
        How long a claim item lives before DynamoDB's TTL may delete it. Default 7 days.
    age_alarm_threshold
        The queue alarm fires when the oldest message is older than this. Default 5 minutes.
    alarm_topic
        SNS topic notified when an alarm fires and when it returns to OK. Default none.
    encryption_key
        KMS key for both queues and the claim table. Default SQS-managed SSE and the AWS managed
        DynamoDB key.
    content_based_deduplication
        Let SQS derive deduplication ids from the body. Default off: producers send the jobId as
        ``MessageDeduplicationId``.
    table_removal_policy
        What happens to the claim table when it leaves the stack. Default RETAIN.
    environment
        Extra environment variables for the job code; the construct's own names may not be used.
    memory_size
        Function memory in MB, 128 to 10240. Default 256.
    backoff_base
        First retry delay of a failed job (doubles per attempt, capped at the visibility timeout),
        at least 1 second. Default 2 seconds.
    metrics_namespace
        CloudWatch namespace of the runtime's metrics. Default ``ConstructsFifo``.
    reorder_limit
        State mode only: jobs with a ``seq`` beyond the next one that a group's reorder buffer holds,
        1 to 1000. Default 100.
    gap_timeout
        State mode only: how long a sequence gap may stay open before ``gap_policy`` applies and the
        gap alarm fires. Default 5 minutes.
    gap_policy
        State mode only: ``GapPolicy.WAIT`` (default: keep waiting; the alarm says so) or
        ``GapPolicy.SKIP_GAP`` (give the missing seqs up, record them, apply what follows).

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
    #: Queue age, dead-letter queue depth, function errors, function throttles (and parked groups).
    alarms: list[cloudwatch.Alarm]
    #: The KMS key of the queues and table, if any.
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
        reserved_concurrency: int = defaults.RESERVED_CONCURRENCY,
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
    ) -> None:
        super().__init__(scope, id)
        self.mode = constants.JobMode(mode)

        # --- check -----------------------------------------------------------------------------
        problems: list[str] = []
        if visibility_timeout is None:
            if timeout.is_unresolved():
                problems.append(
                    "visibility_timeout=None cannot default to 6 x timeout when timeout is an unresolved "
                    "token; pass visibility_timeout explicitly."
                )
                visibility_timeout = timeout
            else:
                visibility_timeout = Duration.seconds(
                    timeout.to_seconds(integral=False) * defaults.VISIBILITY_TIMEOUT_FACTOR
                )
        if max_receive_count is None:
            max_receive_count = (
                defaults.max_receive_count_for(batch_size, max_attempts, self.mode)
                if not (Token.is_unresolved(batch_size) or Token.is_unresolved(max_attempts))
                else defaults.MAX_RECEIVE_COUNT_MAX
            )
        props = Props(
            handler=handler,
            batch_size=batch_size,
            max_attempts=max_attempts,
            max_receive_count=max_receive_count,
            timeout=timeout,
            visibility_timeout=visibility_timeout,
            reserved_concurrency=reserved_concurrency,
            max_concurrency=max_concurrency,
            claim_ttl=claim_ttl,
            age_alarm_threshold=age_alarm_threshold,
            memory_size=memory_size,
            backoff_base=backoff_base,
            mode=self.mode,
        )
        problems += check_props(props)
        problems += check_state_props(
            self.mode, reorder_limit=reorder_limit, gap_timeout=gap_timeout, gap_policy=gap_policy
        )
        reorder_limit = defaults.REORDER_LIMIT if reorder_limit is None else reorder_limit
        gap_timeout = defaults.GAP_TIMEOUT if gap_timeout is None else gap_timeout
        gap_policy = defaults.GAP_POLICY if gap_policy is None else gap_policy
        problems += check_code(code)
        problems += check_environment(environment, _RUNTIME_ENVIRONMENT)
        raise_if_any(problems)
        warn_risky(self, props)
        assert isinstance(code, lambda_.AssetCode)  # checked by check_code

        self.encryption_key = encryption_key
        self.metrics_namespace = metrics_namespace
        self.on_dead_job = constants.DeadJobPolicy(on_dead_job)
        parks = self.on_dead_job is constants.DeadJobPolicy.PARK

        # --- build: queues -----------------------------------------------------------------------
        base_name = Names.unique_resource_name(self, max_length=_BASE_NAME_LENGTH, separator="-")
        self.queue_name = f"{base_name}{_FIFO_SUFFIX}"
        self.dead_letter_queue_name = f"{base_name}{_DLQ_SUFFIX}{_FIFO_SUFFIX}"
        queue_encryption = sqs.QueueEncryption.KMS if encryption_key else sqs.QueueEncryption.SQS_MANAGED

        # The DLQ's redrive allow policy names the source queue by an ARN built from its fixed name:
        # a GetAtt would make a cycle with the source queue's redrive policy.
        source_queue_arn = Stack.of(self).format_arn(
            service="sqs", resource=self.queue_name, arn_format=ArnFormat.NO_RESOURCE_NAME
        )
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=self.dead_letter_queue_name,
            fifo=True,
            retention_period=defaults.DLQ_RETENTION,
            encryption=queue_encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            redrive_allow_policy=sqs.RedriveAllowPolicy(
                redrive_permission=sqs.RedrivePermission.BY_QUEUE,
                source_queues=[sqs.Queue.from_queue_arn(self, "SourceQueueRef", source_queue_arn)],
            ),
        )
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=self.queue_name,
            fifo=True,
            deduplication_scope=sqs.DeduplicationScope.MESSAGE_GROUP,
            fifo_throughput_limit=sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
            content_based_deduplication=content_based_deduplication,
            visibility_timeout=visibility_timeout,
            encryption=queue_encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=max_receive_count
            ),
        )

        # --- build: tables ---------------------------------------------------------------------
        self.claim_table = (
            build_claim_table(self, encryption_key=encryption_key, removal_policy=table_removal_policy)
            if self.mode is constants.JobMode.CLAIM
            else None
        )
        self.group_table = (
            build_group_table(self, encryption_key=encryption_key, removal_policy=table_removal_policy)
            if parks or self.mode is constants.JobMode.STATE
            else None
        )

        # --- build: function ---------------------------------------------------------------------
        self.log_group = logs.LogGroup(self, "LogGroup", retention=defaults.LOG_RETENTION)
        role = iam.Role(
            self,
            "FunctionRole",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description="Runs the constructs-fifo job function: this queue, its tables and log group.",
        )
        environment_vars = {
            **(environment or {}),
            constants.ENV_USER_HANDLER: handler,
            constants.ENV_MODE: self.mode.value,
            constants.ENV_QUEUE_URL: self.queue.queue_url,
            constants.ENV_VISIBILITY_TIMEOUT_SECONDS: _whole_seconds(visibility_timeout),
            constants.ENV_BACKOFF_BASE_SECONDS: _whole_seconds(backoff_base),
            constants.ENV_METRICS_NAMESPACE: metrics_namespace,
            constants.ENV_MAX_ATTEMPTS: _whole_number(max_attempts),
            constants.ENV_ON_DEAD_JOB: self.on_dead_job.value,
            constants.ENV_DEAD_LETTER_QUEUE_URL: self.dead_letter_queue.queue_url,
        }
        if self.claim_table is not None:
            environment_vars[constants.ENV_CLAIM_TABLE] = self.claim_table.table_name
            environment_vars[constants.ENV_CLAIM_TTL_SECONDS] = _whole_seconds(claim_ttl)
        if self.group_table is not None:
            environment_vars[constants.ENV_GROUP_TABLE] = self.group_table.table_name
        if self.mode is constants.JobMode.STATE:
            environment_vars |= {
                constants.ENV_REORDER_LIMIT: _whole_number(reorder_limit),
                constants.ENV_GAP_TIMEOUT_SECONDS: _whole_seconds(gap_timeout),
                constants.ENV_GAP_POLICY: GapPolicy(gap_policy).value,
            }
        self.function = lambda_.Function(
            self,
            "Function",
            runtime=defaults.FUNCTION_RUNTIME,
            code=build_function_code(code),
            handler=constants.ENTRYPOINT,
            role=role,
            timeout=timeout,
            memory_size=memory_size,
            reserved_concurrent_executions=reserved_concurrency,
            environment=environment_vars,
            log_group=self.log_group,
            description=f"constructs-fifo job function ({handler})",
        )

        # --- wire: least privilege ---------------------------------------------------------------
        role.add_to_policy(
            iam.PolicyStatement(
                actions=["logs:CreateLogStream", "logs:PutLogEvents"],
                resources=[self.log_group.log_group_arn],
            )
        )
        if self.claim_table is not None:
            role.add_to_policy(
                iam.PolicyStatement(actions=list(CLAIM_TABLE_ACTIONS), resources=[self.claim_table.table_arn])
            )
        send_to = [self.dead_letter_queue.queue_arn]
        if self.group_table is not None:
            role.add_to_policy(
                iam.PolicyStatement(actions=list(GROUP_TABLE_ACTIONS), resources=[self.group_table.table_arn])
            )
        if parks:
            send_to.append(self.queue.queue_arn)
        role.add_to_policy(iam.PolicyStatement(actions=list(SEND_ACTIONS), resources=send_to))
        if encryption_key is not None:
            encryption_key.grant(role, *CLAIM_TABLE_KEY_ACTIONS)  # also covers sending to the queues
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

        # --- expose: alarms ------------------------------------------------------------------------
        self.alarms = build_alarms(
            self,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            function=self.function,
            age_alarm_threshold=age_alarm_threshold,
            alarm_topic=alarm_topic,
            groups_parked=self.metric_groups_parked(period=defaults.ALARM_PERIOD) if parks else None,
            sequence_gap=(
                (self.metric_sequence_gap_open_seconds(period=defaults.ALARM_PERIOD), gap_timeout)
                if self.mode is constants.JobMode.STATE
                else None
            ),
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
        grant = iam.Grant.add_to_principal_or_resource(
            grantee=grantee,
            actions=list(ENQUEUE_ACTIONS),
            resource_arns=[self.queue.queue_arn],
            resource=self.queue,
        )
        if self.encryption_key is not None:
            grant = grant.combine(self.encryption_key.grant(grantee, *ENQUEUE_KEY_ACTIONS))
        return grant

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
        grant = iam.Grant.add_to_principal_or_resource(
            grantee=grantee, actions=list(READ_STATE_ACTIONS), resource_arns=[table.table_arn], resource=table
        )
        if self.encryption_key is not None:
            grant = grant.combine(self.encryption_key.grant(grantee, "kms:Decrypt"))
        return grant

    # --- metrics ------------------------------------------------------------------------------------
    def metric(
        self,
        metric_name: str,
        *,
        statistic: str = "Sum",
        period: Duration | None = None,
    ) -> cloudwatch.Metric:
        """A metric the runtime publishes (embedded metric format) for this queue.

        Parameters
        ----------
        metric_name
            One of the ``METRIC_*`` names of :mod:`constructs_fifo.runtime.constants`.
        statistic
            Default ``Sum``.
        period
            Default 5 minutes.

        Returns
        -------
        cloudwatch.Metric
            In :attr:`metrics_namespace`, dimension ``QueueName`` = the queue's name.
        """
        return cloudwatch.Metric(
            namespace=self.metrics_namespace,
            metric_name=metric_name,
            dimensions_map={constants.METRIC_DIMENSION_QUEUE: self.queue_name},
            statistic=statistic,
            period=period,
        )

    def metric_jobs_succeeded(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Jobs whose function returned (Sum)."""
        return self.metric(constants.METRIC_JOBS_SUCCEEDED, period=period)

    def metric_jobs_failed(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Job attempts that failed: transient, permanent, malformed, fenced, or a runtime error (Sum)."""
        return self.metric(constants.METRIC_JOBS_FAILED, period=period)

    def metric_duplicates_skipped(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Records skipped because their job had already succeeded (Sum)."""
        return self.metric(constants.METRIC_DUPLICATES_SKIPPED, period=period)

    def metric_claim_conflicts(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Records retried because another worker held a live claim on the job (Sum)."""
        return self.metric(constants.METRIC_CLAIM_CONFLICTS, period=period)

    def metric_jobs_dead_lettered(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Dead jobs the runtime sent to the dead-letter queue (Sum)."""
        return self.metric(constants.METRIC_JOBS_DEAD_LETTERED, period=period)

    def metric_groups_parked(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Groups parked at a dead job (Sum; PARK policy)."""
        return self.metric(constants.METRIC_GROUPS_PARKED, period=period)

    def metric_jobs_kept(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Records kept in a parked group instead of running (Sum; PARK policy)."""
        return self.metric(constants.METRIC_JOBS_KEPT, period=period)

    def metric_sequence_gap_open_seconds(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """State mode: how long the oldest open sequence gap of a group has been open (Maximum)."""
        return self.metric(constants.METRIC_SEQ_GAP_OPEN_SECONDS, statistic="Maximum", period=period)

    def metric_job_duration(
        self, *, statistic: str = "Average", period: Duration | None = None
    ) -> cloudwatch.Metric:
        """How long the job function ran, in milliseconds (Average by default)."""
        return self.metric(constants.METRIC_JOB_DURATION, statistic=statistic, period=period)
