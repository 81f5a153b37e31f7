"""Every default of :class:`~constructs_fifo.construct.OrderedAgentQueue`, in one place.

A prop's default and limits are its row of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`, which the runtime reads too); this module turns
them into the CDK values the construct's signature takes (a ``Duration`` from seconds) and holds the
defaults of what is not a prop (the alarms' period, the DLQ's retention). The construct's signature,
its validation and the docs' props tables all read from here or from the rows, so a default is
changed once.
"""

from __future__ import annotations

from typing import Final

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs

from constructs_fifo.construct.settings import tokens
from constructs_fifo.runtime.aws_limits import SQS_MAX_RETENTION_SECONDS
from constructs_fifo.runtime.constants import WAKE_UP_REFRESH_RECEIVES, DeadJobPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.spec import SETTINGS, Setting

__all__ = [
    "AGE_ALARM_THRESHOLD",
    "ALARM_EVALUATION_PERIODS",
    "ALARM_PERIOD",
    "ARCHITECTURE",
    "ARCHITECTURE_NAMES",
    "BACKOFF_BASE",
    "BATCH_SIZE",
    "BATCH_SIZE_MAX",
    "BATCH_SIZE_MIN",
    "CLAIM_TTL",
    "CONTAINER_CPU",
    "CONTAINER_MAX_JOB_DURATION",
    "CONTAINER_MEMORY_MIB",
    "CONTAINER_VISIBILITY_TIMEOUT",
    "CONTENT_BASED_DEDUPLICATION",
    "DASHBOARD",
    "DLQ_RETENTION",
    "EPHEMERAL_STORAGE_MAX_GIB",
    "EPHEMERAL_STORAGE_MIN_GIB",
    "FUNCTION_RUNTIME",
    "GAP_TIMEOUT",
    "HEARTBEATS_PER_VISIBILITY_TIMEOUT",
    "HEARTBEAT_INTERVAL",
    "LAYERS_MAX",
    "LOG_RETENTION",
    "MAX_ATTEMPTS",
    "MAX_ATTEMPTS_MAX",
    "MAX_ATTEMPTS_MIN",
    "MAX_CONCURRENCY_MAX",
    "MAX_CONCURRENCY_MIN",
    "MAX_CONCURRENCY_UNRESERVED",
    "MAX_RECEIVE_COUNT_MAX",
    "MAX_TASKS",
    "MEMORY_SIZE",
    "MEMORY_SIZE_MAX",
    "MEMORY_SIZE_MIN",
    "METRICS_NAMESPACE",
    "MODE",
    "ON_DEAD_JOB",
    "OUTCOME_LINES",
    "OUTPUTS",
    "RECEIVE_COUNT_SAFETY_FACTOR",
    "RESERVED_CONCURRENCY",
    "SCALING_STEPS_MAX",
    "SECURITY_GROUPS_MAX",
    "SECURITY_GROUPS_MIN",
    "SLOTS",
    "SLOTS_MAX",
    "SLOTS_MIN",
    "TABLE_REMOVAL_POLICY",
    "TIMEOUT",
    "VISIBILITY_TIMEOUT_FACTOR",
    "WHEEL_PLATFORMS",
    "WORKERS_MISSING_PERIODS",
    "max_attempts_for",
    "max_concurrency_for",
    "max_receive_count_for",
    "min_receive_count_for",
]


def _int(value: object) -> int:
    """A row's default or limit that is a whole number (the rows below all have one)."""
    assert isinstance(value, int), value
    return value


def _duration(row: Setting) -> Duration:
    """A duration prop's default: its row's seconds (remembered: no round trip to read it back)."""
    seconds = _int(row.default)
    return tokens.remember_seconds(Duration.seconds(seconds), seconds)


# --- event source mapping -----------------------------------------------------------------------
#: Records per batch; FIFO event source mappings accept 1 to 10.
BATCH_SIZE: Final = _int(SETTINGS["batch_size"].default)
BATCH_SIZE_MIN: Final = _int(SETTINGS["batch_size"].low)
BATCH_SIZE_MAX: Final = _int(SETTINGS["batch_size"].high)
#: Bounds of the mapping's ``ScalingConfig.MaximumConcurrency`` (AWS API_ScalingConfig).
MAX_CONCURRENCY_MIN: Final = _int(SETTINGS["max_concurrency"].low)
MAX_CONCURRENCY_MAX: Final = _int(SETTINGS["max_concurrency"].high)


def max_concurrency_for(reserved_concurrency: int | float | None) -> int | None:
    """The mapping's MaximumConcurrency when ``max_concurrency`` is not given.

    With a reservation: ``reserved_concurrency``. Without a cap the mapping may invoke more functions
    than the reserved concurrency lets run; a throttled FIFO batch goes back to the queue with the
    receive count of every record raised, and sustained throttling pushes healthy jobs to the
    dead-letter queue. ``None`` (no cap) when the reserved concurrency is below the API's minimum of 2
    (a warning says so) or an unresolved token.

    Without a reservation (``None``): :data:`MAX_CONCURRENCY_UNRESERVED`, the mapping's cap being then
    the only limit (AWS recommends MaximumConcurrency as the limiter for SQS).
    """
    if reserved_concurrency is None:
        return MAX_CONCURRENCY_UNRESERVED
    if tokens.is_unresolved(reserved_concurrency) or reserved_concurrency < MAX_CONCURRENCY_MIN:
        return None
    return min(int(reserved_concurrency), MAX_CONCURRENCY_MAX)


# --- modes ------------------------------------------------------------------------------------------
#: CLAIM: a job is a side effect, claimed before it runs; STATE is opt-in per queue.
MODE: Final = JobMode(str(SETTINGS["mode"].default))
#: State mode: a sequence gap open this long applies the gap policy (and the gap alarm fires).
GAP_TIMEOUT: Final = _duration(SETTINGS["gap_timeout"])

# --- dead jobs ---------------------------------------------------------------------------------------
#: Runs of one job (a crash included) before the runtime declares it dead.
MAX_ATTEMPTS: Final = _int(SETTINGS["max_attempts"].default)
MAX_ATTEMPTS_MIN: Final = _int(SETTINGS["max_attempts"].low)
MAX_ATTEMPTS_MAX: Final = _int(SETTINGS["max_attempts"].high)
#: PARK: a group stops at its dead job (its order is the product); CONTINUE is opt-in.
ON_DEAD_JOB: Final = DeadJobPolicy(str(SETTINGS["on_dead_job"].default))

# --- logs ---------------------------------------------------------------------------------------------
#: JOB: a log line per job outcome, what an operator searches at 3 a.m. (OutcomeLines says why).
OUTCOME_LINES: Final = OutcomeLines(str(SETTINGS["outcome_lines"].default))

# --- queues -------------------------------------------------------------------------------------------
#: SQS's upper bound for a redrive policy's maxReceiveCount.
MAX_RECEIVE_COUNT_MAX: Final = _int(SETTINGS["max_receive_count"].high)
#: The default maxReceiveCount is this many times the least safe one.
RECEIVE_COUNT_SAFETY_FACTOR: Final = 2


#: State mode: the runs of a job that crashes its worker not counted as attempts (the first delivery
#: runs unwatched; the run marker of the second only says that the group's run crashed).
STATE_UNCOUNTED_CRASHES: Final = 2


def min_receive_count_for(
    batch_size: int | float, max_attempts: int | float, mode: JobMode = JobMode.CLAIM
) -> int:
    """The least ``max_receive_count`` that never dead-letters a job for another job's failures.

    ``(2 x batch_size - 1) x runs + 1``, where ``runs`` is ``max_attempts`` (state mode: ``+ 2``, the
    crashes its crash watch does not count), and never below ``WAKE_UP_REFRESH_RECEIVES + 1``: 96 for
    the defaults, 134 in state mode. Why each term: docs/architecture.md, rule 9 (the one statement of
    the rule).
    """
    runs = int(max_attempts) + (STATE_UNCOUNTED_CRASHES if mode is JobMode.STATE else 0)
    return max((2 * int(batch_size) - 1) * runs + 1, WAKE_UP_REFRESH_RECEIVES + 1)


def max_attempts_for(batch_size: int | float, mode: JobMode = JobMode.CLAIM) -> int:
    """The most ``max_attempts`` whose :func:`min_receive_count_for` fits SQS's 1000 (0 if none)."""
    most = 0
    for attempts in range(1, MAX_ATTEMPTS_MAX + 1):
        if min_receive_count_for(batch_size, attempts, mode) <= MAX_RECEIVE_COUNT_MAX:
            most = attempts
    return most


def max_receive_count_for(
    batch_size: int | float, max_attempts: int | float, mode: JobMode = JobMode.CLAIM
) -> int:
    """The default ``max_receive_count``: twice :func:`min_receive_count_for`, at most SQS's 1000.

    192 for the defaults (batch 10, 5 attempts); 268 in state mode.

    The margin covers receives that are not attempts (conflicts with a stale worker, deadline, a
    throttled claim write); ``maxReceiveCount`` is only the safety net for a function that cannot
    start at all, the runtime decides when a job is dead.
    """
    return min(
        MAX_RECEIVE_COUNT_MAX,
        RECEIVE_COUNT_SAFETY_FACTOR * min_receive_count_for(batch_size, max_attempts, mode),
    )


#: AWS guidance: the queue's visibility timeout is at least 6 x the function timeout.
VISIBILITY_TIMEOUT_FACTOR: Final = 6
#: How long the dead-letter queue keeps a message: the SQS maximum.
DLQ_RETENTION: Final = Duration.seconds(SQS_MAX_RETENTION_SECONDS)
CONTENT_BASED_DEDUPLICATION: Final = bool(SETTINGS["content_based_deduplication"].default)

# --- function --------------------------------------------------------------------------------------
#: The newest Python runtime in aws-cdk-lib 2.275. ``Runtime.determine_latest_python_runtime`` answers
#: the newest runtime available in *every* region (3.13 here), which cdk-nag's AwsSolutions-L1 flags.
FUNCTION_RUNTIME: Final = lambda_.Runtime.PYTHON_3_14
TIMEOUT: Final = _duration(SETTINGS["timeout"])
RESERVED_CONCURRENCY: Final = _int(SETTINGS["reserved_concurrency"].default)
#: The mapping's MaximumConcurrency when ``reserved_concurrency=None`` and no ``max_concurrency`` is
#: given: the same ceiling the default reservation gives, without taking it from the account.
MAX_CONCURRENCY_UNRESERVED: Final = RESERVED_CONCURRENCY
#: Megabytes; more than Lambda's 128 MB default (Serverless-LambdaDefaultMemorySize) for boto3's import.
MEMORY_SIZE: Final = _int(SETTINGS["memory_size"].default)
MEMORY_SIZE_MIN: Final = _int(SETTINGS["memory_size"].low)
MEMORY_SIZE_MAX: Final = _int(SETTINGS["memory_size"].high)
LOG_RETENTION: Final = logs.RetentionDays.ONE_MONTH
#: The instruction set; x86_64 stays the default (AWS's own): the asset is pure Python, so arm64 is
#: a price choice (about 20% less per GB-second) the user makes, with wheels of bundled dependencies
#: then chosen for arm64.
ARCHITECTURE: Final[lambda_.Architecture] = getattr(
    lambda_.Architecture, str(SETTINGS["architecture"].default)
)
#: The architectures Lambda runs (``lambda_.Architecture`` attribute names) ...
ARCHITECTURE_NAMES: Final = SETTINGS["architecture"].choices
#: ... and, per architecture (``Architecture.name``), the wheel platforms of bundled dependencies,
#: most general first: manylinux2014 (glibc 2.17, pip expands it to every older manylinux tag), then
#: the newer tags Amazon Linux 2023 (glibc 2.34, every Python runtime from 3.12) also runs.
WHEEL_PLATFORMS: Final = {
    "x86_64": ("manylinux2014_x86_64", "manylinux_2_28_x86_64", "manylinux_2_34_x86_64"),
    "arm64": ("manylinux2014_aarch64", "manylinux_2_28_aarch64", "manylinux_2_34_aarch64"),
}
#: Security groups of a VPC function (Lambda's limit) ...
SECURITY_GROUPS_MIN: Final = _int(SETTINGS["security_groups"].low)
SECURITY_GROUPS_MAX: Final = _int(SETTINGS["security_groups"].high)
#: ... and layers of one function (Lambda's limit).
LAYERS_MAX: Final = _int(SETTINGS["layers"].high)

# --- runtime settings written into the function's environment --------------------------------------
CLAIM_TTL: Final = _duration(SETTINGS["claim_ttl"])
BACKOFF_BASE: Final = _duration(SETTINGS["backoff_base"])
METRICS_NAMESPACE: Final = str(SETTINGS["metrics_namespace"].default)

# --- the tables -------------------------------------------------------------------------------------
TABLE_REMOVAL_POLICY: Final = getattr(RemovalPolicy, str(SETTINGS["table_removal_policy"].default))

# --- alarms -------------------------------------------------------------------------------------------
AGE_ALARM_THRESHOLD: Final = _duration(SETTINGS["age_alarm_threshold"])
#: A CloudWatch dashboard is built unless ``dashboard=False``.
DASHBOARD: Final = bool(SETTINGS["dashboard"].default)
#: The construct's CfnOutputs are added unless ``outputs=False``.
OUTPUTS: Final = bool(SETTINGS["outputs"].default)
ALARM_PERIOD: Final = Duration.minutes(1)
ALARM_EVALUATION_PERIODS: Final = 1

# --- the container consumer (``consumer=ContainerConsumer(...)``) --------------------------------------
SLOTS: Final = _int(SETTINGS["slots"].default)
SLOTS_MIN: Final = _int(SETTINGS["slots"].low)
SLOTS_MAX: Final = _int(SETTINGS["slots"].high)
HEARTBEAT_INTERVAL: Final = _duration(SETTINGS["heartbeat_interval"])
#: The queue's visibility timeout with the container consumer: heartbeats extend it while a job runs,
#: so it bounds only how soon a dead worker's records return (10 heartbeats of the default interval).
CONTAINER_VISIBILITY_TIMEOUT: Final = tokens.remember_seconds(Duration.minutes(5), 300)
#: ``max_job_duration`` with the container consumer, when none is given: a run has no function timeout
#: to end it, and SQS keeps a message hidden at most 12 hours from its first receive.
CONTAINER_MAX_JOB_DURATION: Final = tokens.remember_seconds(Duration.hours(1), 3_600)
#: A heartbeat must come at least this many times per visibility timeout.
HEARTBEATS_PER_VISIBILITY_TIMEOUT: Final = 2
#: A task's size: 1 vCPU and 2 GiB (a valid Fargate combination), at most ``MAX_TASKS`` of them.
CONTAINER_CPU: Final = 1024
CONTAINER_MEMORY_MIB: Final = 2048
MAX_TASKS: Final = 4
#: Fargate's ephemeral storage per task, in GiB (21 without the parameter; 21 to 200).
EPHEMERAL_STORAGE_MIN_GIB: Final = 21
EPHEMERAL_STORAGE_MAX_GIB: Final = 200
#: The intervals of the step scaling policy at most (one per task count up to it, then spread).
SCALING_STEPS_MAX: Final = 10
#: The worker alarm on a backlog without a running task waits this many alarm periods: scaling out from
#: zero (the alarm, then a Fargate task's start) takes a few minutes by itself.
WORKERS_MISSING_PERIODS: Final = 10
