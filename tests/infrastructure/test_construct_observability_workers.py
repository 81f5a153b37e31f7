"""The container consumer's alarms and dashboard row (constructs_fifo/construct/observability/workers.py)."""

from __future__ import annotations

import json
from typing import Any

from aws_cdk.assertions import Template

from constructs_fifo.construct.observability.alarms import ALARM_IDS, PARKED_GROUPS_ALARM_ID
from constructs_fifo.construct.observability.workers import (
    HEARTBEAT_FAILURES_ALARM_ID,
    JOB_DURATION_EXCEEDED_ALARM_ID,
    WORKER_ALARM_IDS,
    WORKERS_MISSING_ALARM_ID,
)
from constructs_fifo.runtime import constants

from .workers import WorkersSynthesized


def _alarm(template: Template, construct_id: str) -> dict[str, Any]:
    [alarm] = [
        dict(resource["Properties"])
        for logical_id, resource in template.find_resources("AWS::CloudWatch::Alarm").items()
        if logical_id.startswith(f"Builds{construct_id}")
    ]
    return alarm


def test_a_container_queue_has_the_queues_alarms_then_the_workers(workers: WorkersSynthesized) -> None:
    # GIVEN the default container queue (claim mode, PARK) / THEN its alarms are the queue's, parked
    # groups, then the workers' three, and no function alarm
    ids = [alarm.node.id for alarm in workers.default.alarms]
    age, dlq, _errors, _throttles = ALARM_IDS
    assert ids == [age, dlq, PARKED_GROUPS_ALARM_ID, *WORKER_ALARM_IDS]


def test_workers_missing_fires_on_a_backlog_without_a_running_task(workers: WorkersSynthesized) -> None:
    # GIVEN the workers-missing alarm
    alarm = _alarm(workers.template, WORKERS_MISSING_ALARM_ID)
    expression = next(m for m in alarm["Metrics"] if "Expression" in m)["Expression"]
    # THEN it reads visible messages and the service's CPU samples (none: no task runs), for 10 minutes
    assert expression == "IF(visible > 0 AND FILL(tasks, 0) == 0, 1, 0)"
    names = {m["MetricStat"]["Metric"]["MetricName"] for m in alarm["Metrics"] if "MetricStat" in m}
    assert names == {"ApproximateNumberOfMessagesVisible", "CPUUtilization"}
    assert (alarm["EvaluationPeriods"], alarm["Threshold"]) == (10, 1)
    # AND its first command shows the service's events
    text = json.dumps(alarm["AlarmDescription"])
    assert "First run: aws ecs describe-services --cluster " in text
    assert "services[0].events[:5]" in text


def test_heartbeat_and_duration_alarms_read_the_workers_metrics(workers: WorkersSynthesized) -> None:
    # GIVEN the heartbeat and duration alarms
    for construct_id, metric_name in (
        (HEARTBEAT_FAILURES_ALARM_ID, constants.METRIC_HEARTBEAT_FAILURES),
        (JOB_DURATION_EXCEEDED_ALARM_ID, constants.METRIC_JOB_DURATION_EXCEEDED),
    ):
        alarm = _alarm(workers.template, construct_id)
        # THEN each fires on one occurrence of its runtime metric, in the queue's namespace and dimension
        assert (alarm["MetricName"], alarm["Namespace"], alarm["Threshold"]) == (
            metric_name,
            "ConstructsFifo",
            1,
        )
        assert alarm["Dimensions"][0]["Name"] == constants.METRIC_DIMENSION_QUEUE
        # AND its first command searches the workers' log group for it
        text = json.dumps(alarm["AlarmDescription"])
        assert "First run: aws logs tail " in text and f"--filter-pattern {metric_name}" in text


def test_the_variants_worker_alarms_notify_its_topic(workers: WorkersSynthesized) -> None:
    # GIVEN the variant with an alarm topic / THEN each worker alarm notifies it on alarm and on OK
    for construct_id in WORKER_ALARM_IDS:
        alarm = _alarm(workers.variant_template, construct_id)
        assert len(alarm["AlarmActions"]) == 1 and alarm["AlarmActions"] == alarm["OKActions"]


def test_the_dashboard_draws_the_workers_in_the_place_of_the_function(workers: WorkersSynthesized) -> None:
    # GIVEN the default container queue's dashboard
    [dashboard] = workers.template.find_resources("AWS::CloudWatch::Dashboard").values()
    body = json.dumps(dashboard["Properties"]["DashboardBody"])
    # THEN it has the workers' graphs and none of the function's
    assert "Workers: slots running a job, per task" in body
    assert constants.METRIC_RUNNING_SLOTS in body
    assert "Function: invocations" not in body
    # AND the queue's graphs as the Lambda consumer has them
    assert "Queue: messages visible and in flight" in body
