"""The runtime's metrics of one queue: the ``metric_*`` methods of
:class:`~constructs_fifo.construct.OrderedAgentQueue`, one per useful metric, as the AWS CDK's L2
constructs offer (``queue.metricApproximateAgeOfOldestMessage()``).

The runtime publishes them in embedded metric format, in the queue's ``metrics_namespace``, with the
dimension ``QueueName`` (``constants.METRIC_DIMENSION_QUEUE``) set to the queue's name; the names are
the ``METRIC_*`` constants of :mod:`constructs_fifo.runtime.constants`, which the runtime writes, so the
two cannot drift. The alarms and the dashboard read the same methods.
"""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_cloudwatch as cloudwatch

from constructs_fifo.runtime import constants

__all__ = ["QueueMetrics"]


class QueueMetrics:
    """The runtime's metrics of the queue named :attr:`queue_name`, in :attr:`metrics_namespace`.

    A base of :class:`~constructs_fifo.construct.OrderedAgentQueue`, which sets both attributes.
    """

    #: The physical name of the queue: the metrics' ``QueueName`` dimension.
    queue_name: str
    #: CloudWatch namespace of the runtime's metrics.
    metrics_namespace: str

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

    def metric_capacity_units_consumed(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """DynamoDB capacity units (read and write) the runtime's calls consumed, as reported (Sum)."""
        return self.metric(constants.METRIC_CAPACITY_UNITS_CONSUMED, period=period)

    def metric_job_duration(
        self, *, statistic: str = "Average", period: Duration | None = None
    ) -> cloudwatch.Metric:
        """How long the job function ran, in milliseconds (Average by default)."""
        return self.metric(constants.METRIC_JOB_DURATION, statistic=statistic, period=period)

    def metric_heartbeat_failures(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Container workers: renewals of a running job (visibility or claim) refused or failed (Sum)."""
        return self.metric(constants.METRIC_HEARTBEAT_FAILURES, period=period)

    def metric_job_duration_exceeded(self, *, period: Duration | None = None) -> cloudwatch.Metric:
        """Container workers: runs stopped at ``max_job_duration`` (Sum)."""
        return self.metric(constants.METRIC_JOB_DURATION_EXCEEDED, period=period)

    def metric_running_slots(
        self, *, statistic: str = "Average", period: Duration | None = None
    ) -> cloudwatch.Metric:
        """Container workers: slots running a job, as each task reports it (Average: per task)."""
        return self.metric(constants.METRIC_RUNNING_SLOTS, statistic=statistic, period=period)
