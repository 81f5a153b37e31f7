"""The ``pace`` prop (constructs_fifo/construct/checks/pace.py): every problem named with its prop, value,
rule and fix, collected at once; a valid limit reaches the consumer's environment, with SQS's most receives
(each paced return is one), and a queue without it writes neither."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import App, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_fifo import OrderedAgentQueue, Pace
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.runtime.steering.pace import PaceLimit

REPO = Path(__file__).resolve().parents[2]


def _queue(**props: Any) -> OrderedAgentQueue:
    return OrderedAgentQueue(
        Stack(App(), "S"),
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        **props,
    )


def _problems(**props: Any) -> list[str]:
    with pytest.raises(InvalidPropsError) as raised:
        _queue(**props)
    return raised.value.problems


def _environment(queue: OrderedAgentQueue) -> dict[str, Any]:
    functions = Template.from_stack(Stack.of(queue)).find_resources("AWS::Lambda::Function")
    (function,) = [f for f in functions.values() if "CONSTRUCTS_FIFO_QUEUE_URL" in str(f)]
    return cast(dict[str, Any], function["Properties"]["Environment"]["Variables"])


def _max_receive_count(queue: OrderedAgentQueue) -> int:
    queues = Template.from_stack(Stack.of(queue)).find_resources("AWS::SQS::Queue")
    return next(
        int(q["Properties"]["RedrivePolicy"]["maxReceiveCount"])
        for q in queues.values()
        if "RedrivePolicy" in q["Properties"]
    )


def test_every_problem_of_a_pace_is_named_at_once() -> None:
    # GIVEN a pace with every value wrong
    problems = _problems(pace=Pace(jobs=0, per=Duration.days(2), burst=-1, key="tenant"))
    # THEN each is named with its value and the fix, in one error
    assert [problem.split(" ")[0] for problem in problems] == [
        "pace.jobs=0",
        "pace.burst=-1",
        "pace.per=2",
        "pace.key='tenant':",
    ]
    assert all("pass e.g. pace=Pace(" in problem for problem in problems)


def test_a_pace_of_another_type_is_refused_with_the_fix() -> None:
    # GIVEN a pace given as a string
    (problem,) = _problems(pace="10/min")
    # THEN the problem names the type and the class to pass
    assert problem.startswith("pace='10/min' is a str, not a Pace: pass pace=Pace(")


def test_a_pace_reaches_the_function_and_raises_the_receive_safety_net() -> None:
    # GIVEN a tenant paced at 60 a minute, bursts of 10
    queue = _queue(pace=Pace(jobs=60, per=Duration.minutes(1), burst=10, key="body:payload.tenant"))
    # THEN the function's environment carries the limit, and SQS's dead-letter rule allows 1000 receives
    limit = PaceLimit.from_env(_environment(queue)["CONSTRUCTS_FIFO_PACE"])
    assert limit == PaceLimit(jobs=60, period_seconds=60, burst=10, key="body:payload.tenant")
    assert _max_receive_count(queue) == 1000


def test_a_queue_without_pace_writes_no_limit() -> None:
    # GIVEN a queue without pace / THEN no variable is written and the receive rule is the usual one
    queue = _queue()
    assert "CONSTRUCTS_FIFO_PACE" not in _environment(queue)
    assert _max_receive_count(queue) < 1000


def test_a_burst_left_out_is_a_period_of_jobs() -> None:
    # GIVEN no burst / THEN the burst is the period's jobs
    assert Pace(jobs=5, per=Duration.seconds(10)).limit().burst == 5
