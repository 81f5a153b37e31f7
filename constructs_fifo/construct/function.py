"""The job function of an :class:`~constructs_fifo.construct.OrderedAgentQueue`: its log group, its role,
the environment its runtime reads, and the function itself.

The function runs ``constructs_fifo.runtime.entrypoint.handler`` from an asset holding the user's job
code and the runtime (:mod:`constructs_fifo.construct.packaging`); the user's ``module.function`` goes
in its environment, with every setting the runtime reads, under the names of
:mod:`constructs_fifo.runtime.constants` (one module for both sides). The role starts empty: what it
may do is granted by :mod:`constructs_fifo.construct.permissions`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct import defaults, tokens
from constructs_fifo.construct.packaging import build_function_code
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.state.records import GapPolicy

__all__ = ["RUNTIME_ENVIRONMENT", "JobFunction", "RuntimeSettings", "StateSettings", "build_function"]

#: The environment variables the construct writes for its runtime, and where each value comes from
#: (named in the error when a user's ``environment`` tries to set one).
RUNTIME_ENVIRONMENT = {
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


@dataclass(frozen=True)
class StateSettings:
    """State mode's settings, as the runtime reads them."""

    reorder_limit: int | float
    gap_timeout: Duration
    gap_policy: GapPolicy


@dataclass(frozen=True)
class RuntimeSettings:
    """Every setting the runtime reads from the function's environment (the props they come from)."""

    handler: str
    mode: constants.JobMode
    on_dead_job: constants.DeadJobPolicy
    visibility_timeout: Duration
    backoff_base: Duration
    claim_ttl: Duration
    max_attempts: int | float
    metrics_namespace: str
    #: State mode only; ``None`` in claim mode.
    state: StateSettings | None


@dataclass(frozen=True)
class JobFunction:
    """What :func:`build_function` built."""

    function: lambda_.Function
    log_group: logs.LogGroup
    #: The function's role, with no policy yet.
    role: iam.Role


def _whole_number(value: int | float) -> str:
    """``value`` as an environment string (a token stays a token)."""
    return Token.as_string(value) if tokens.is_unresolved(value) else str(int(value))


def _whole_seconds(value: Duration) -> str:
    """``value`` in whole seconds as an environment string (a token stays a token)."""
    seconds = tokens.seconds(value)
    if seconds is None:
        return Token.as_string(value.to_seconds())
    return str(int(seconds))


def _environment(
    settings: RuntimeSettings,
    *,
    user_environment: Mapping[str, str] | None,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
) -> dict[str, str]:
    """The user's variables, then the runtime's (already checked not to collide)."""
    variables = {
        **(user_environment or {}),
        constants.ENV_USER_HANDLER: settings.handler,
        constants.ENV_MODE: settings.mode.value,
        constants.ENV_QUEUE_URL: queue.queue_url,
        constants.ENV_VISIBILITY_TIMEOUT_SECONDS: _whole_seconds(settings.visibility_timeout),
        constants.ENV_BACKOFF_BASE_SECONDS: _whole_seconds(settings.backoff_base),
        constants.ENV_METRICS_NAMESPACE: settings.metrics_namespace,
        constants.ENV_MAX_ATTEMPTS: _whole_number(settings.max_attempts),
        constants.ENV_ON_DEAD_JOB: settings.on_dead_job.value,
        constants.ENV_DEAD_LETTER_QUEUE_URL: dead_letter_queue.queue_url,
    }
    if claim_table is not None:
        variables[constants.ENV_CLAIM_TABLE] = claim_table.table_name
        variables[constants.ENV_CLAIM_TTL_SECONDS] = _whole_seconds(settings.claim_ttl)
    if group_table is not None:
        variables[constants.ENV_GROUP_TABLE] = group_table.table_name
    if settings.state is not None:
        variables |= {
            constants.ENV_REORDER_LIMIT: _whole_number(settings.state.reorder_limit),
            constants.ENV_GAP_TIMEOUT_SECONDS: _whole_seconds(settings.state.gap_timeout),
            constants.ENV_GAP_POLICY: GapPolicy(settings.state.gap_policy).value,
        }
    return variables


def build_function(
    scope: Construct,
    *,
    code_dir: Path,
    settings: RuntimeSettings,
    user_environment: Mapping[str, str] | None,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
    timeout: Duration,
    memory_size: int | float,
    reserved_concurrency: int | float,
) -> JobFunction:
    """Create the log group (``LogGroup``), the role (``FunctionRole``) and the function (``Function``).

    Parameters
    ----------
    scope
        The parent construct.
    code_dir
        The directory of the user's asset (checked by
        :func:`constructs_fifo.construct.validation.check_code`); the runtime is added next to it.
    settings
        What the runtime reads from the environment.
    user_environment
        The user's extra variables (checked not to use the runtime's names).
    queue, dead_letter_queue, claim_table, group_table
        The resources whose URLs and names the runtime is told (a table may be absent).
    timeout, memory_size, reserved_concurrency
        The function's own settings.
    """
    log_group = logs.LogGroup(scope, "LogGroup", retention=defaults.LOG_RETENTION)
    role = iam.Role(
        scope,
        "FunctionRole",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description="Runs the constructs-fifo job function: this queue, its tables and log group.",
    )
    environment = _environment(
        settings,
        user_environment=user_environment,
        queue=queue,
        dead_letter_queue=dead_letter_queue,
        claim_table=claim_table,
        group_table=group_table,
    )
    function = lambda_.Function(
        scope,
        "Function",
        runtime=defaults.FUNCTION_RUNTIME,
        code=build_function_code(code_dir),
        handler=constants.ENTRYPOINT,
        role=role,
        timeout=timeout,
        memory_size=memory_size,
        reserved_concurrent_executions=reserved_concurrency,
        environment=environment,
        log_group=log_group,
        description=f"constructs-fifo job function ({settings.handler})",
    )
    return JobFunction(function=function, log_group=log_group, role=role)
