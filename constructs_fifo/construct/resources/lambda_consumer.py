"""The Lambda consumer of an :class:`~constructs_fifo.construct.OrderedAgentQueue` (the default): the
function (:mod:`~constructs_fifo.construct.resources.function`), its least privilege
(:mod:`~constructs_fifo.construct.resources.permissions`) and the SQS event source that invokes it.
The container consumer is :mod:`~constructs_fifo.construct.resources.containers`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_logs as logs
from constructs import Construct

from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.construct.resources import permissions
from constructs_fifo.construct.resources.containers import QueueResources
from constructs_fifo.construct.resources.function import FunctionSettings, build_function
from constructs_fifo.construct.settings import defaults
from constructs_fifo.runtime.settings.choices import JobMode

__all__ = ["LambdaConsumer", "LambdaConsumerAccess", "ProvisionedPollers", "build_lambda_consumer"]


@dataclass(frozen=True)
class ProvisionedPollers:
    """The SQS event source's provisioned mode (``provisioned_pollers=`` prop): Lambda keeps ``minimum``
    pollers ready and scales up to ``maximum``, three times faster than on-demand polling.

    Lambda takes either this or ``MaximumConcurrency``, not both, so a queue with provisioned pollers has
    no ``max_concurrency``: ``reserved_concurrency`` is the function's only ceiling, and a FIFO queue's
    concurrency stays bounded by its groups with work. Each poller is billed per hour
    (docs/capacity.md).

    Attributes
    ----------
    minimum : int
        Pollers always provisioned: 2 to 200 (Lambda's default 2).
    maximum : int
        The most pollers: ``minimum`` to 2,000 (Lambda's default 200).
    """

    minimum: int = 2
    maximum: int = 200


@dataclass(frozen=True)
class LambdaConsumer:
    """What :func:`build_lambda_consumer` built."""

    function: lambda_.Function
    log_group: logs.LogGroup
    event_source: event_sources.SqsEventSource


class LambdaConsumerAccess:
    """The function and event source of a queue whose consumer is the Lambda function; with the
    container consumer they raise, naming what to read instead. A base of
    :class:`~constructs_fifo.construct.OrderedAgentQueue`, which sets ``_lambda``."""

    _lambda: LambdaConsumer | None

    @property
    def function(self) -> lambda_.Function:
        """The function running the constructs-fifo runtime (the Lambda consumer).

        Raises
        ------
        InvalidPropsError
            The jobs run in containers (``consumer``): read ``workers`` instead.
        """
        return self._lambda_consumer().function

    @property
    def event_source(self) -> event_sources.SqsEventSource:
        """The SQS event source of the function (the Lambda consumer; raises as :attr:`function`)."""
        return self._lambda_consumer().event_source

    def _lambda_consumer(self) -> LambdaConsumer:
        if self._lambda is None:
            raise InvalidPropsError(
                [
                    "this queue's jobs run in containers (consumer=ContainerConsumer(...)): it has no "
                    "function nor event source; read its workers (.workers.service, .workers.task_role)."
                ]
            )
        return self._lambda


def _subnet_ids(vpc: ec2.IVpc, selection: ec2.SubnetSelection) -> list[str]:
    """The ids of the subnets the function runs in: ``vpc_subnets`` of ``vpc``, as the function selects."""
    return vpc.select_subnets(
        availability_zones=selection.availability_zones,
        one_per_az=selection.one_per_az,
        subnet_filters=selection.subnet_filters,
        subnet_group_name=selection.subnet_group_name,
        subnets=selection.subnets,
        subnet_type=selection.subnet_type,
    ).subnet_ids


def build_lambda_consumer(
    scope: Construct,
    *,
    code_dir: Path,
    settings: Mapping[str, object],
    mode: JobMode,
    user_environment: Mapping[str, str] | None,
    resources: QueueResources,
    function_settings: FunctionSettings,
    batch_size: int,
    max_concurrency: int | None,
    encryption_key: kms.IKey | None,
) -> LambdaConsumer:
    """Build the function, grant it least privilege, then bind the event source (which grants consuming
    the queue, and ``kms:Decrypt`` on its key).

    ``max_concurrency=None``: the event source's ``MaximumConcurrency`` follows the reserved concurrency
    (:func:`~constructs_fifo.construct.settings.defaults.max_concurrency_for`), unless ``settings`` has
    ``provisioned_pollers``: the mapping is then in provisioned mode, with no ``MaximumConcurrency``.
    """
    own = function_settings
    job_function = build_function(
        scope,
        code_dir=code_dir,
        settings=settings,
        mode=mode,
        user_environment=user_environment,
        queue=resources.queue,
        dead_letter_queue=resources.dead_letter_queue,
        claim_table=resources.claim_table,
        group_table=resources.group_table,
        function_settings=own,
        encryption_key=encryption_key,
    )
    permissions.grant_function_access(
        job_function.role,
        log_group=job_function.log_group,
        queue=resources.queue,
        dead_letter_queue=resources.dead_letter_queue,
        claim_table=resources.claim_table,
        group_table=resources.group_table,
        parks=resources.parks,
        encryption_key=encryption_key,
        network=(
            permissions.FunctionNetwork(
                subnet_ids=_subnet_ids(own.vpc, own.vpc_subnets or ec2.SubnetSelection()),
                security_group_ids=[
                    group.security_group_id for group in job_function.function.connections.security_groups
                ],
            )
            if own.vpc is not None
            else None
        ),
    )
    permissions.acknowledge_wildcards(
        job_function.role, in_vpc=own.vpc is not None, traced=own.tracing == lambda_.Tracing.ACTIVE
    )
    pollers = settings.get("provisioned_pollers")
    if isinstance(pollers, ProvisionedPollers):
        event_source = event_sources.SqsEventSource(
            resources.queue,
            batch_size=batch_size,
            report_batch_item_failures=True,
            provisioned_poller_config=lambda_.ProvisionedPollerConfig(
                minimum_pollers=pollers.minimum, maximum_pollers=pollers.maximum
            ),
        )
    else:
        event_source = event_sources.SqsEventSource(
            resources.queue,
            batch_size=batch_size,
            report_batch_item_failures=True,
            max_concurrency=(
                max_concurrency
                if max_concurrency is not None
                else defaults.max_concurrency_for(own.reserved_concurrency)
            ),
        )
    job_function.function.add_event_source(event_source)
    return LambdaConsumer(job_function.function, job_function.log_group, event_source)
