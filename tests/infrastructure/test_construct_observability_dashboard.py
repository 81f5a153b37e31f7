"""The construct's CloudWatch dashboard (construct/observability/dashboard.py): widgets, metrics, alarm
thresholds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.runtime import constants

from .stacks import REPO, Synthesized

SQS = "AWS/SQS"
LAMBDA = "AWS/Lambda"


def _token(part: dict[str, Any]) -> str:
    """A readable stand-in for an intrinsic inside the dashboard body: ``Ref:X``, ``GetAtt:X.Attr``."""
    if "Ref" in part:
        return f"Ref:{part['Ref']}"
    logical_id, attribute = part["Fn::GetAtt"]
    return f"GetAtt:{logical_id}.{attribute}"


def _dashboards(template: Template) -> list[dict[str, Any]]:
    """Every dashboard's body as JSON, each intrinsic replaced by its :func:`_token`."""
    bodies = []
    for resource in template.find_resources("AWS::CloudWatch::Dashboard").values():
        body = resource["Properties"]["DashboardBody"]
        parts = body["Fn::Join"][1] if isinstance(body, dict) else [body]
        bodies.append(json.loads("".join(p if isinstance(p, str) else _token(p) for p in parts)))
    return bodies


def _graphs(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {w["properties"]["title"]: w["properties"] for w in body["widgets"] if w["type"] == "metric"}


def _metrics(graph: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(namespace, metric, stat)`` of each line of a graph."""
    return [(line[0], line[1], line[-1]["stat"]) for line in graph["metrics"]]


def _thresholds(graph: dict[str, Any]) -> list[float]:
    return [a["value"] for a in graph.get("annotations", {}).get("horizontal", [])]


def _logical_id(stack: Stack, construct: Any) -> str:
    return str(stack.resolve(stack.get_logical_id(construct.node.default_child)))


def test_the_default_queue_has_one_dashboard_in_its_own_resources(synthesized: Synthesized) -> None:
    # GIVEN the sample's claim-mode queue (every prop but the job code's at its default)
    jobs = synthesized.sample_jobs
    # THEN it built a dashboard, among its own resources
    assert jobs.dashboard is not None
    assert len(_dashboards(synthesized.templates[jobs.node.path])) == 1


def test_the_queue_graphs_draw_the_queue_and_its_alarms_thresholds(synthesized: Synthesized) -> None:
    # GIVEN the sample's claim-mode queue (age alarm threshold 5 minutes)
    jobs = synthesized.sample_jobs
    [body] = _dashboards(synthesized.templates[jobs.node.path])
    graphs = _graphs(body)
    queue = f"GetAtt:{_logical_id(synthesized.sample, jobs.queue)}.QueueName"
    dlq = f"GetAtt:{_logical_id(synthesized.sample, jobs.dead_letter_queue)}.QueueName"
    # THEN visible and in-flight messages of the queue are drawn
    messages = graphs["Queue: messages visible and in flight"]
    assert _metrics(messages) == [
        (SQS, "ApproximateNumberOfMessagesVisible", "Maximum"),
        (SQS, "ApproximateNumberOfMessagesNotVisible", "Maximum"),
    ]
    assert {line[3] for line in messages["metrics"]} == {queue}
    # AND the age of the oldest message against the age alarm's threshold (300 s)
    age = graphs["Queue: age of oldest message (seconds)"]
    assert (_metrics(age), age["metrics"][0][3], _thresholds(age)) == (
        [(SQS, "ApproximateAgeOfOldestMessage", "Maximum")],
        queue,
        [300],
    )
    # AND the dead-letter queue's depth against its alarm's threshold (1)
    dead = graphs["Dead-letter queue: messages"]
    assert (_metrics(dead), dead["metrics"][0][3], _thresholds(dead)) == (
        [(SQS, "ApproximateNumberOfMessagesVisible", "Maximum")],
        dlq,
        [1],
    )


def test_the_function_graphs_draw_errors_duration_and_concurrency_against_reserved(
    synthesized: Synthesized,
) -> None:
    # GIVEN the sample's claim-mode queue (reserved concurrency 10)
    jobs = synthesized.sample_jobs
    [body] = _dashboards(synthesized.templates[jobs.node.path])
    graphs = _graphs(body)
    function = f"Ref:{_logical_id(synthesized.sample, jobs.function)}"
    # THEN invocations, errors and throttles, with the errors and throttles alarms' thresholds (0)
    calls = graphs["Function: invocations, errors, throttles"]
    assert _metrics(calls) == [
        (LAMBDA, "Invocations", "Sum"),
        (LAMBDA, "Errors", "Sum"),
        (LAMBDA, "Throttles", "Sum"),
    ]
    assert _thresholds(calls) == [0, 0]
    # AND the duration's p50 and p99
    assert _metrics(graphs["Function: duration (ms)"]) == [
        (LAMBDA, "Duration", "p50"),
        (LAMBDA, "Duration", "p99"),
    ]
    # AND the concurrency against the reserved concurrency
    concurrency = graphs["Function: concurrency"]
    assert _metrics(concurrency) == [(LAMBDA, "ConcurrentExecutions", "Maximum")]
    assert concurrency["annotations"]["horizontal"] == [
        {"value": 10, "label": "reserved concurrency", "yAxis": "left"}
    ]
    # AND every function metric is this function's
    titles = ("Function: invocations, errors, throttles", "Function: duration (ms)", "Function: concurrency")
    for title in titles:
        assert {line[3] for line in graphs[title]["metrics"]} == {function}


def test_the_runtime_graphs_draw_every_metric_of_claim_mode_under_park(synthesized: Synthesized) -> None:
    # GIVEN the sample's claim-mode queue under the PARK policy
    jobs = synthesized.sample_jobs
    [body] = _dashboards(synthesized.templates[jobs.node.path])
    graphs = _graphs(body)
    runtime = {
        title: graph
        for title, graph in graphs.items()
        if any(line[0] == constants.DEFAULT_METRICS_NAMESPACE for line in graph["metrics"])
    }
    # THEN the runtime's metrics are drawn, in its namespace, for this queue, per minute
    drawn = [line[1] for graph in runtime.values() for line in graph["metrics"]]
    assert drawn == [
        constants.METRIC_JOBS_SUCCEEDED,
        constants.METRIC_JOBS_FAILED,
        constants.METRIC_JOBS_DEAD_LETTERED,
        constants.METRIC_DUPLICATES_SKIPPED,
        constants.METRIC_CLAIM_CONFLICTS,
        constants.METRIC_GROUPS_PARKED,
        constants.METRIC_JOBS_KEPT,
        constants.METRIC_CAPACITY_UNITS_CONSUMED,
        constants.METRIC_JOBS_SUCCEEDED,
    ]
    for graph in runtime.values():
        for line in graph["metrics"]:
            assert line[2:4] == [constants.METRIC_DIMENSION_QUEUE, jobs.queue_name]
            assert (line[-1]["stat"], line[-1]["period"]) == ("Sum", 60)
    # AND the parked groups against the parked-groups alarm's threshold (1)
    assert _thresholds(graphs["Groups parked, jobs kept"]) == [1]
    # AND the DynamoDB capacity the runtime's calls consumed, beside the jobs it bought
    capacity = graphs["DynamoDB capacity units consumed (read + write)"]
    assert _metrics(capacity) == [
        (constants.DEFAULT_METRICS_NAMESPACE, constants.METRIC_CAPACITY_UNITS_CONSUMED, "Sum"),
        (constants.DEFAULT_METRICS_NAMESPACE, constants.METRIC_JOBS_SUCCEEDED, "Sum"),
    ]


def test_the_state_mode_dashboard_draws_the_gap_against_gap_timeout(synthesized: Synthesized) -> None:
    # GIVEN the state stack: state mode, CONTINUE policy, gap_timeout 10 minutes
    [body] = _dashboards(synthesized.templates["State"])
    graphs = _graphs(body)
    # THEN the sequence gap's age is drawn (Maximum) against the gap alarm's threshold (600 s)
    gap = graphs["Sequence gap open (seconds)"]
    assert _metrics(gap) == [
        (constants.DEFAULT_METRICS_NAMESPACE, constants.METRIC_SEQ_GAP_OPEN_SECONDS, "Maximum")
    ]
    assert _thresholds(gap) == [600]
    # AND no graph of what this mode and policy never publish (claim conflicts, parked groups)
    drawn = {line[1] for graph in graphs.values() for line in graph["metrics"]}
    assert constants.METRIC_CLAIM_CONFLICTS not in drawn
    assert constants.METRIC_GROUPS_PARKED not in drawn


def test_the_dashboard_shows_the_first_commands_and_every_alarms_threshold(synthesized: Synthesized) -> None:
    # GIVEN the sample's state-mode queue
    jobs = synthesized.sample_workspaces
    [body] = _dashboards(synthesized.templates[jobs.node.path])
    [text] = [w["properties"]["markdown"] for w in body["widgets"] if w["type"] == "text"]
    # THEN each of its alarms is drawn once, with its threshold, on the graph of its metric
    labels = [
        a["label"]
        for graph in _graphs(body).values()
        for a in graph.get("annotations", {}).get("horizontal", [])
        if a["label"] != "reserved concurrency"
    ]
    assert len(labels) == len(jobs.alarms) == 6
    # AND nothing names an alarm by ARN (the emulator cannot resolve an alarm's Fn::GetAtt)
    assert "Alarm" not in json.dumps(body)
    # AND the text names the first commands for this stack and queue
    target = "--stack AgentJobs --queue AgentJobs/Workspaces"
    for command in ("status", "groups list --parked", "groups list --gaps", "dlq list"):
        assert f"constructs-fifo {command} {target}" in text


def test_dashboard_false_builds_none(synthesized: Synthesized) -> None:
    # GIVEN the variant stack, built with dashboard=False
    # THEN it has no dashboard
    assert synthesized.variant_jobs.dashboard is None
    assert _dashboards(synthesized.templates["Variant"]) == []


@pytest.mark.parametrize("others", [{}, {"batch_size": 11}], ids=["alone", "with another"])
def test_a_dashboard_that_is_not_a_bool_is_listed_with_the_other_invalid_props(
    others: dict[str, Any],
) -> None:
    # GIVEN a non-bool dashboard (and maybe another invalid prop)
    code = lambda_.Code.from_asset(str(Path(REPO) / "lambda"))
    # WHEN the construct is built
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(
            Stack(App(), "S"),
            "Jobs",
            code=code,
            handler="notifier.handle",
            dashboard="yes",  # type: ignore[arg-type]
            **others,
        )
    # THEN one error lists them all, the dashboard's last, naming its value and the fix
    assert len(raised.value.problems) == 1 + len(others)
    assert raised.value.problems[-1] == (
        "dashboard='yes' is not a bool: it says whether the construct builds its CloudWatch dashboard; "
        "pass dashboard=True (default) or dashboard=False."
    )
