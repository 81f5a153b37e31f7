"""One statement per setting: its prop, environment variable, type, default, limits and doc line.

Every setting of an :class:`~constructs_fifo.construct.OrderedAgentQueue` is one :class:`Setting` row of
:data:`SETTINGS`, and every reader reads the row instead of restating it:

- the construct's validation (``constructs_fifo.construct.checks.validation``) checks each prop against the
  row's limits and writes the row's reason and example into its error;
- the function's environment (``constructs_fifo.construct.resources.function``) is written under the rows'
  variables, and :class:`~constructs_fifo.runtime.settings.config.RuntimeConfig` reads them back, checked
  against the same limits;
- the processors' settings (``BatchSettings``, their keyword defaults) take defaults and limits from them;
- the props tables of README.md and docs/construct.md are generated from the rows
  (``python -m constructs_fifo.construct.settings.props_table``; a test fails when a doc drifts).

A row with a ``prop`` and no ``env`` is the construct's alone (``encryption_key``); with an ``env`` and no
``prop``, written from a resource the construct built (the queue's URL); with neither, the runtime's own
(``first_seq``). Limits are in the row's ``unit`` (a duration in whole seconds). Limits that join props
(``visibility_timeout >= timeout``) are rules in the validation code; the row's ``rule`` says them for
the docs.

``runtime.constants`` names their variables and defaults (``ENV_*``, ``DEFAULT_*``). The consumer's
rows (``consumer``, the workers' own) live in ``consumer_rows`` and take their place after ``outputs``, the
steering rows (``pace``) in ``steering_rows`` after them.
Standard library only (with the row type, the public enums and ``aws_limits``): the runtime ships alone.

Examples
--------
>>> SETTINGS["reorder_limit"].limits_doc()
'1–1000'
>>> SETTINGS["gap_timeout"].env, SETTINGS["reorder_limit"].violation(0)
('CONSTRUCTS_FIFO_GAP_TIMEOUT_SECONDS', 'a whole number from 1 to 1000')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from constructs_fifo.runtime import aws_limits
from constructs_fifo.runtime.settings.choices import DeadJobPolicy, GapPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.consumer_rows import CONSUMER_ROWS
from constructs_fifo.runtime.settings.row import SECONDS, Setting, human_seconds
from constructs_fifo.runtime.settings.steering_rows import STEERING_ROWS

__all__ = ["MAX_VISIBILITY_TIMEOUT_SECONDS", "SECONDS", "SETTINGS", "Setting", "human_seconds"]

#: The cap of every retry delay: SQS's upper bound of a visibility timeout (the name config re-exports).
MAX_VISIBILITY_TIMEOUT_SECONDS: Final = aws_limits.SQS_MAX_VISIBILITY_TIMEOUT_SECONDS

_ROWS: Final = (
    Setting(
        "code",
        "the job code: a **directory** asset (`Code.from_asset(dir)`); inline code, S3 code and zip files "
        "are rejected; the directory may not hold a top-level `constructs_fifo`; with the container "
        "consumer the image holds the code, and a directory given is only checked for `handler`",
        "lambda_.Code | None",
        default_doc="required (the Lambda consumer)",
        prop="code",
    ),
    Setting(
        "handler",
        "`module.function` of the job function, `handle(job, context)` (state mode: the transition "
        "`apply(job, state) -> next_state`): Python identifiers, dotted module allowed (`pkg.mod.handle`)",
        "str",
        default_doc="required",
        prop="handler",
        env="CONSTRUCTS_FIFO_HANDLER",
        field="user_handler",
        example="'agent_worker.handle'",
    ),
    Setting(
        "mode",
        "`CLAIM`: a job is a side effect, claimed in the claim table before it runs; `STATE`: a job is a "
        "transition `apply(job, state) -> state` of its group's state (group table, no claim table)",
        "JobMode",
        default=JobMode.CLAIM,
        default_doc="`CLAIM`",
        prop="mode",
        env="CONSTRUCTS_FIFO_MODE",
        field="mode",
        choices=tuple(JobMode),
    ),
    Setting(
        "batch_size",
        "records per invocation, or per container worker's receive",
        "int",
        default=aws_limits.LAMBDA_SQS_FIFO_MAX_BATCH_SIZE,
        default_doc=f"`{aws_limits.LAMBDA_SQS_FIFO_MAX_BATCH_SIZE}`",
        prop="batch_size",
        env="CONSTRUCTS_FIFO_BATCH_SIZE",
        field="batch_size",
        low=1,
        high=aws_limits.LAMBDA_SQS_FIFO_MAX_BATCH_SIZE,
        unit="records",
        why="an SQS FIFO event source (and ReceiveMessage) takes at most 10 records per batch, so",
        container_env=True,
    ),
    Setting(
        "max_attempts",
        "runs of one job (a crash inside it included) before the runtime declares it dead",
        "int",
        default=5,
        default_doc="`5`",
        prop="max_attempts",
        env="CONSTRUCTS_FIFO_MAX_ATTEMPTS",
        field="max_attempts",
        low=1,
        high=100,
        unit="attempts",
        why="the runtime counts a job's runs and declares it dead after max_attempts, so",
    ),
    Setting(
        "on_dead_job",
        "`PARK`: the group stops at its dead job, which is kept with every later job of the group in the "
        "group table, in order, until resumed (`ParkedGroupsAlarm`); `CONTINUE`: the dead job goes to "
        "the DLQ and the group goes on (its order is broken)",
        "DeadJobPolicy",
        default=DeadJobPolicy.PARK,
        default_doc="`PARK`",
        prop="on_dead_job",
        env="CONSTRUCTS_FIFO_ON_DEAD_JOB",
        field="on_dead_job",
        choices=tuple(DeadJobPolicy),
    ),
    Setting(
        "max_receive_count",
        "SQS's own dead-letter rule, only a safety net for a function that cannot start at all",
        "int | None",
        default_doc="twice the least value, at most 1000 (192; 268 in state mode)",
        prop="max_receive_count",
        high=aws_limits.SQS_MAX_RECEIVE_COUNT,
        unit="receives",
        why="the SQS maximum for a redrive policy",
        rule="≥ `(2 × batch_size − 1) × max_attempts + 1` (state mode: `(2 × batch_size − 1) × "
        "(max_attempts + 2) + 1`; and ≥ 6): below it healthy jobs could follow a failing one into the DLQ",
    ),
    Setting(
        "timeout",
        "the function timeout",
        "Duration",
        default=120,
        default_doc="2 minutes",
        prop="timeout",
        low=1,
        high=aws_limits.LAMBDA_MAX_TIMEOUT_SECONDS,
        unit=SECONDS,
        why="the Lambda maximum of a function timeout",
        example="Duration.minutes(2)",
        lambda_only=True,
    ),
    Setting(
        "visibility_timeout",
        "the queue's visibility timeout: the cap of every retry delay",
        "Duration | None",
        default=MAX_VISIBILITY_TIMEOUT_SECONDS,
        default_doc="6 × `timeout`; the container consumer: 5 minutes",
        prop="visibility_timeout",
        env="CONSTRUCTS_FIFO_VISIBILITY_TIMEOUT_SECONDS",
        field="visibility_timeout_seconds",
        low=0,
        high=MAX_VISIBILITY_TIMEOUT_SECONDS,
        unit=SECONDS,
        why="the SQS maximum",
        example="Duration.minutes(12)",
        rule="≥ `timeout`; below 6 × `timeout` adds warning "
        "`constructs-fifo:visibilityTimeoutBelowSixTimesTimeout`; required when `timeout` is a token "
        "(the Lambda consumer); > 2 × `heartbeat_interval` (the container consumer)",
    ),
    Setting(
        "reserved_concurrency",
        "the function's reserved concurrency: a floor and a ceiling taken from the account's quota; `None` "
        "reserves nothing, and `max_concurrency` is then the only ceiling (no floor)",
        "int | None",
        default=10,
        default_doc="`10`",
        prop="reserved_concurrency",
        low=1,
        unit="executions",
        why="with 0 the function never runs and every message ends in the dead-letter queue",
        rule="≥ `max_concurrency`; `1` adds warning `constructs-fifo:reservedConcurrencyOne` (the mapping "
        "cannot be capped below 2)",
        lambda_only=True,
    ),
    Setting(
        "max_concurrency",
        "the event source's `ScalingConfig.MaximumConcurrency`; the default keeps the mapping from invoking "
        "more functions than may run (throttled batches return with raised receive counts)",
        "int | None",
        default_doc="`reserved_concurrency` (when ≥ 2; at most 1000); `10` when `reserved_concurrency=None`",
        prop="max_concurrency",
        low=aws_limits.LAMBDA_MIN_MAXIMUM_CONCURRENCY,
        high=aws_limits.LAMBDA_MAX_MAXIMUM_CONCURRENCY,
        unit="executions",
        why="Lambda's ScalingConfig.MaximumConcurrency is limited, so",
        lambda_only=True,
    ),
    Setting(
        "claim_ttl",
        "how long a claim item lives: claim items carry `expiration` = now + TTL (claim mode)",
        "Duration",
        default=7 * 24 * 60 * 60,
        default_doc="7 days",
        prop="claim_ttl",
        env="CONSTRUCTS_FIFO_CLAIM_TTL_SECONDS",
        field="claim_ttl_seconds",
        low=1,
        unit=SECONDS,
        example="Duration.days(7)",
        claim_only=True,
    ),
    Setting(
        "age_alarm_threshold",
        "the queue alarm fires when the oldest message is older than this",
        "Duration",
        default=300,
        default_doc="5 minutes",
        prop="age_alarm_threshold",
        low=1,
        unit=SECONDS,
        example="Duration.minutes(5)",
    ),
    Setting(
        "alarm_topic",
        "alarm **and** OK action of every alarm",
        "sns.ITopic | None",
        default_doc="none",
        prop="alarm_topic",
    ),
    Setting(
        "encryption_key",
        "both queues (SSE-KMS), the tables (customer managed), the function's log group (the key policy "
        "gains the statement CloudWatch Logs needs; an imported key warns "
        "`constructs-fifo:encryptionKeyPolicyNotManaged`) and its environment variables; see "
        "docs/security.md",
        "kms.IKey | None",
        default_doc="none",
        prop="encryption_key",
    ),
    Setting(
        "content_based_deduplication",
        "let SQS derive deduplication ids from the body; off: producers send the jobId as "
        "`MessageDeduplicationId`",
        "bool",
        default=False,
        default_doc="`False`",
        prop="content_based_deduplication",
    ),
    Setting(
        "table_removal_policy",
        "what happens to the claim table and the group table when they leave the stack",
        "RemovalPolicy",
        default="RETAIN",
        default_doc="`RETAIN`",
        prop="table_removal_policy",
    ),
    Setting(
        "environment",
        "extra variables for the job code; the construct's own `CONSTRUCTS_FIFO_*` names are rejected",
        "Mapping[str, str] | None",
        default_doc="none",
        prop="environment",
    ),
    Setting(
        "memory_size",
        "function memory",
        "int",
        default=256,
        default_doc="`256`",
        prop="memory_size",
        low=aws_limits.LAMBDA_MIN_MEMORY_MB,
        high=aws_limits.LAMBDA_MAX_MEMORY_MB,
        unit="MB",
        why="Lambda memory is given in MB and",
        lambda_only=True,
    ),
    Setting(
        "backoff_base",
        "first retry delay of a failed job, doubling per attempt, capped at the visibility timeout",
        "Duration",
        default=2,
        default_doc="2 seconds",
        prop="backoff_base",
        env="CONSTRUCTS_FIFO_BACKOFF_BASE_SECONDS",
        field="backoff_base_seconds",
        low=1,
        high=MAX_VISIBILITY_TIMEOUT_SECONDS,
        unit=SECONDS,
        why="the cap of every retry delay (the SQS maximum of a visibility timeout)",
        example="Duration.seconds(2)",
    ),
    Setting(
        "metrics_namespace",
        "CloudWatch namespace of the runtime's EMF metrics",
        "str",
        default="ConstructsFifo",
        default_doc="`ConstructsFifo`",
        prop="metrics_namespace",
        env="CONSTRUCTS_FIFO_METRICS_NAMESPACE",
        field="metrics_namespace",
    ),
    Setting(
        "reorder_limit",
        "state mode only: jobs with a `seq` beyond the next one that a group's reorder buffer holds",
        "int | None",
        default=100,
        default_doc="`100` (state mode)",
        prop="reorder_limit",
        env="CONSTRUCTS_FIFO_REORDER_LIMIT",
        field="reorder_limit",
        low=1,
        high=1000,
        unit="jobs",
        why="the reorder buffer is committed with the group's state in one DynamoDB item, so",
        state_only=True,
    ),
    Setting(
        "gap_timeout",
        "state mode only: how long a sequence gap may stay open before `gap_policy` applies and "
        "`SequenceGapAlarm` fires",
        "Duration | None",
        default=300,
        default_doc="5 minutes (state mode)",
        prop="gap_timeout",
        env="CONSTRUCTS_FIFO_GAP_TIMEOUT_SECONDS",
        field="gap_timeout_seconds",
        low=1,
        unit=SECONDS,
        example="Duration.minutes(5)",
        state_only=True,
    ),
    Setting(
        "gap_policy",
        "state mode only: `WAIT` keeps waiting (the alarm calls an operator); `SKIP_GAP` gives the "
        "missing seqs up, records them and applies what follows",
        "GapPolicy | None",
        default=GapPolicy.WAIT,
        default_doc="`WAIT` (state mode)",
        prop="gap_policy",
        env="CONSTRUCTS_FIFO_GAP_POLICY",
        field="gap_policy",
        choices=tuple(GapPolicy),
        state_only=True,
    ),
    Setting(
        "max_job_duration",
        "bounds one run of a job: a run still going after it is given up as a failed attempt; none: the "
        "consumer's own bound (the Lambda consumer's is `timeout`; the container consumer's is 1 hour)",
        "Duration | None",
        default_doc="the consumer's own bound",
        prop="max_job_duration",
        env="CONSTRUCTS_FIFO_MAX_JOB_DURATION_SECONDS",
        field="max_job_duration_seconds",
        low=1,
        high=MAX_VISIBILITY_TIMEOUT_SECONDS,
        unit=SECONDS,
        why="a run's message stays hidden at most the SQS maximum of a visibility timeout",
        example="Duration.minutes(10)",
        rule="≤ `timeout` with the Lambda consumer (it ends every run there)",
        not_above="timeout",
        not_above_why="the Lambda consumer ends every run at the function timeout, so no run could last "
        "that long",
    ),
    Setting(
        "architecture",
        "the instruction set of the function or the container's tasks (the image must be built for it); "
        "`ARM_64` is about 20% cheaper (the runtime is pure Python); bundled dependencies are installed "
        "for it",
        "lambda_.Architecture",
        default="X86_64",
        default_doc="`X86_64`",
        prop="architecture",
        choices=("X86_64", "ARM_64"),
    ),
    Setting(
        "tracing",
        "X-Ray tracing of the function",
        "lambda_.Tracing | None",
        default_doc="none",
        prop="tracing",
        rule='a `lambda_.Tracing`; `ACTIVE` adds X-Ray\'s statements on `Resource: "*"` (acknowledged for '
        "cdk-nag)",
        lambda_only=True,
    ),
    Setting(
        "layers",
        "Lambda layers of the function",
        "Sequence[lambda_.ILayerVersion] | None",
        default_doc="none",
        prop="layers",
        high=aws_limits.LAMBDA_MAX_LAYERS,
        unit="layers",
        rule="each compatible with `python3.14` when it says",
        lambda_only=True,
    ),
    Setting(
        "vpc",
        "the function (or the container's service) runs in it; its subnets must reach SQS, DynamoDB, "
        "CloudWatch and KMS (NAT or endpoints); the function's role gets the network-interface actions of "
        "`AWSLambdaVPCAccessExecutionRole`, inline",
        "ec2.IVpc | None",
        default_doc="none",
        prop="vpc",
    ),
    Setting(
        "vpc_subnets",
        "which subnets of `vpc` the function (or the container's service) runs in",
        "ec2.SubnetSelection | None",
        default_doc="the VPC's private subnets",
        prop="vpc_subnets",
        rule="needs `vpc`; no public subnets",
    ),
    Setting(
        "security_groups",
        "the function's (or the container's tasks') security groups",
        "Sequence[ec2.ISecurityGroup] | None",
        default_doc="one the function creates (all outbound, no inbound)",
        prop="security_groups",
        low=1,
        high=aws_limits.LAMBDA_MAX_SECURITY_GROUPS,
        unit="groups",
        rule="needs `vpc`",
    ),
    Setting(
        "bundling",
        "how the job code's dependencies are installed: `exclude` patterns, `requirements`, index "
        'options, `cache_dir`, or `docker` bundling (see "Job code with dependencies" in docs/construct.md)',
        "CodeBundling | None",
        default_doc="install what the code directory declares",
        prop="bundling",
        lambda_only=True,
    ),
    Setting(
        "dashboard",
        "build a CloudWatch dashboard: the queue, its DLQ, the function, the runtime's metrics, each alarm "
        'with its threshold, and the first commands to run (see "The dashboard" in docs/construct.md)',
        "bool",
        default=True,
        default_doc="`True`",
        prop="dashboard",
    ),
    Setting(
        "outcome_lines",
        "`JOB`: a log line per job outcome, what an operator searches at 3 a.m.; `BATCH`: successes and "
        "duplicates summarized in one line per batch (failures, dead jobs and parking keep their lines; "
        "the same metrics), less log ingestion",
        "OutcomeLines",
        default=OutcomeLines.JOB,
        default_doc="`JOB`",
        prop="outcome_lines",
        env="CONSTRUCTS_FIFO_OUTCOME_LINES",
        field="outcome_lines",
        choices=tuple(OutcomeLines),
    ),
    Setting("outputs", "add its own CfnOutputs", "bool", default=True, default_doc="`True`", prop="outputs"),
    *CONSUMER_ROWS,
    *STEERING_ROWS,
    # --- written by the construct from the resources it built -----------------------------------------
    Setting("queue_url", "the FIFO queue's URL", "str", env="CONSTRUCTS_FIFO_QUEUE_URL", field="queue_url"),
    Setting(
        "dead_letter_queue_url",
        "the FIFO dead-letter queue's URL",
        "str",
        env="CONSTRUCTS_FIFO_DEAD_LETTER_QUEUE_URL",
        field="dead_letter_queue_url",
    ),
    Setting(
        "claim_table", "the claim table's name", "str", env="CONSTRUCTS_FIFO_CLAIM_TABLE", field="claim_table"
    ),
    Setting(
        "group_table",
        "the group table's name (PARK keeps jobs there, state mode keeps states there)",
        "str",
        env="CONSTRUCTS_FIFO_GROUP_TABLE",
        field="group_table",
    ),
    # --- the runtime's own ---------------------------------------------------------------------------
    Setting(
        "first_seq",
        "the `seq` of a group's first job: a group's sequence starts at 0",
        "int",
        # 0, so that no non-negative ``seq`` is ever taken for a duplicate before anything was applied.
        default=0,
        field="first_seq",
        low=0,
        unit="seq",
    ),
    Setting(
        "remember_job_ids",
        "state mode: job ids without `seq` a group's bookkeeping remembers, to skip their duplicates",
        "int",
        # 800 bytes of keys (``JOB_KEY_BYTES`` each).
        default=100,
        field="remember_job_ids",
        low=1,
        unit="job ids",
    ),
)

#: Every setting by name, props first in the construct's keyword order.
SETTINGS: Final[Mapping[str, Setting]] = {row.name: row for row in _ROWS}
