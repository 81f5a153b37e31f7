"""The job function of an :class:`~constructs_fifo.construct.OrderedAgentQueue`: its log group, its role,
the environment its runtime reads, and the function itself.

The function runs ``constructs_fifo.runtime.entrypoint.handler`` from an asset holding the user's job
code, its dependencies (:mod:`constructs_fifo.construct.code.bundling`) and the runtime
(:mod:`constructs_fifo.construct.code.packaging`); the user's ``module.function`` goes in its environment,
with every setting the runtime reads, under the variables of their rows of the settings spec
(:data:`constructs_fifo.runtime.settings.SETTINGS`, read by both sides). The role starts empty: what
it may do is granted by :mod:`constructs_fifo.construct.resources.permissions`. With an ``encryption_key`` the
log group and the environment are encrypted with it too.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import Duration, Token
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from constructs_fifo.construct.code.bundling import CodeBundling, bundle_dependencies
from constructs_fifo.construct.code.packaging import build_function_code
from constructs_fifo.construct.settings import defaults, tokens
from constructs_fifo.construct.settings.pace import Pace
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.settings.choices import JobMode
from constructs_fifo.runtime.settings.spec import SETTINGS

__all__ = [
    "RUNTIME_ENVIRONMENT",
    "FunctionSettings",
    "JobFunction",
    "build_function",
    "runtime_environment",
]

#: The environment variables the construct writes for its runtime, and where each value comes from
#: (named in the error when a user's ``environment`` tries to set one).
RUNTIME_ENVIRONMENT = {
    row.env: f"from the {row.prop} prop" if row.prop else row.doc
    for row in SETTINGS.values()
    if row.env is not None
}


@dataclass(frozen=True)
class FunctionSettings:
    """The function's own settings (the props they come from), checked by
    :func:`~constructs_fifo.construct.checks.function_props.check_function_props`."""

    timeout: Duration
    memory_size: int | float
    reserved_concurrency: int | float | None
    architecture: lambda_.Architecture = defaults.ARCHITECTURE
    tracing: lambda_.Tracing | None = None
    layers: Sequence[lambda_.ILayerVersion] | None = None
    vpc: ec2.IVpc | None = None
    vpc_subnets: ec2.SubnetSelection | None = None
    security_groups: Sequence[ec2.ISecurityGroup] | None = None
    bundling: CodeBundling | None = None


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


def _encode(value: object) -> str:
    """A setting's value as its environment string: a ``Duration`` in whole seconds, a whole number, an
    enum's value (a row's default is already in those terms: seconds, an enum member)."""
    if isinstance(value, Pace):
        return value.limit().to_env()
    if isinstance(value, Duration):
        return _whole_seconds(value)
    if isinstance(value, enum.Enum):
        return str(value.value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _whole_number(value)
    return str(value)


def runtime_environment(
    settings: Mapping[str, object],
    *,
    mode: JobMode,
    user_environment: Mapping[str, str] | None,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
    container: bool = False,
) -> dict[str, str]:
    """The user's variables, then the runtime's (already checked not to collide): every row with a
    variable, from its prop (``None``: the row's default; no default: not written) or from the resource
    it names. A state-mode row is written only in state mode, a claim-mode row only with a claim table,
    a container workers' row (or a row only the workers read, ``batch_size``) only for the
    ``container`` consumer (the function's and the container's
    environment are this one writer's)."""
    resources: dict[str, object] = {
        "queue_url": queue.queue_url,
        "dead_letter_queue_url": dead_letter_queue.queue_url,
        "claim_table": claim_table.table_name if claim_table is not None else None,
        "group_table": group_table.table_name if group_table is not None else None,
    }
    variables = dict(user_environment or {})
    for row in SETTINGS.values():
        if row.env is None or (row.state_only and mode is not JobMode.STATE):
            continue
        if row.claim_only and claim_table is None:
            continue
        if (row.container_only or row.container_env) and not container:
            continue
        if row.prop is None:
            value = resources[row.name]
        else:
            given = settings.get(row.name)
            value = given if given is not None else row.default
        if value is not None:
            variables[row.env] = _encode(value)
    return variables


def build_function(
    scope: Construct,
    *,
    code_dir: Path,
    settings: Mapping[str, object],
    mode: JobMode,
    user_environment: Mapping[str, str] | None,
    queue: sqs.IQueue,
    dead_letter_queue: sqs.IQueue,
    claim_table: dynamodb.ITable | None,
    group_table: dynamodb.ITable | None,
    function_settings: FunctionSettings,
    encryption_key: kms.IKey | None,
) -> JobFunction:
    """Create the log group (``LogGroup``), the role (``FunctionRole``) and the function (``Function``).

    Parameters
    ----------
    scope
        The parent construct.
    code_dir
        The directory of the user's asset (checked by
        :func:`constructs_fifo.construct.checks.function_props.check_code`); the runtime is added next to it.
    settings
        The checked props by name (:class:`~constructs_fifo.construct.checks.props.CheckedProps`'s
        ``values``): those with a row variable are what the runtime reads from the environment.
    mode
        The queue's mode (which rows are written).
    user_environment
        The user's extra variables (checked not to use the runtime's names).
    queue, dead_letter_queue, claim_table, group_table
        The resources whose URLs and names the runtime is told (a table may be absent).
    function_settings
        The function's own settings; ``reserved_concurrency=None`` sets no
        ``ReservedConcurrentExecutions`` (the function draws on the account's unreserved pool).
    encryption_key
        Encrypts the log group and the environment too, when given (its key policy must let
        CloudWatch Logs use it:
        :func:`~constructs_fifo.construct.resources.permissions.allow_log_encryption`).

    Raises
    ------
    DependencyBundlingError
        The job code's dependencies have no wheel for the function's platform (or could not be installed).
    """
    own = function_settings
    bundling = own.bundling or CodeBundling()
    dependencies_dir = bundle_dependencies(code_dir, architecture=own.architecture.name, bundling=bundling)
    log_group = logs.LogGroup(
        scope, "LogGroup", retention=defaults.LOG_RETENTION, encryption_key=encryption_key
    )
    role = iam.Role(
        scope,
        "FunctionRole",
        assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        description="Runs the constructs-fifo job function: this queue, its tables and log group.",
    )
    environment = runtime_environment(
        settings,
        mode=mode,
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
        code=build_function_code(
            code_dir, exclude=bundling.exclude, dependencies_dir=dependencies_dir, docker=bundling.docker
        ),
        handler=constants.ENTRYPOINT,
        role=role,
        timeout=own.timeout,
        memory_size=own.memory_size,
        reserved_concurrent_executions=own.reserved_concurrency,
        architecture=own.architecture,
        tracing=own.tracing,
        layers=list(own.layers) if own.layers else None,
        vpc=own.vpc,
        vpc_subnets=own.vpc_subnets,
        security_groups=list(own.security_groups) if own.security_groups is not None else None,
        environment=environment,
        environment_encryption=encryption_key,
        log_group=log_group,
        description=f"constructs-fifo job function ({settings['handler']})",
    )
    return JobFunction(function=function, log_group=log_group, role=role)
