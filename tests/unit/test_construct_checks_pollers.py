"""The ``provisioned_pollers`` prop (constructs_fifo/construct/checks/pollers.py): its ranges, its type,
and its refusal beside ``max_concurrency``, each problem naming the prop, the value, the rule and the fix."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue, ProvisionedPollers
from constructs_fifo.construct import InvalidPropsError

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


def test_provisioned_pollers_at_their_limits_are_valid() -> None:
    # GIVEN the smallest floor and the largest ceiling WHEN built THEN the queue builds
    for pollers in (ProvisionedPollers(), ProvisionedPollers(minimum=200, maximum=2000)):
        assert _queue(provisioned_pollers=pollers).event_source is not None


@pytest.mark.parametrize(
    ("pollers", "start", "fix"),
    [
        (ProvisionedPollers(minimum=1), "provisioned_pollers.minimum=1 is out of range", "from 2 to 200"),
        (
            ProvisionedPollers(minimum=201, maximum=300),
            "provisioned_pollers.minimum=201 is out of range",
            "to 200",
        ),
        (
            ProvisionedPollers(maximum=2001),
            "provisioned_pollers.maximum=2001 is out of range",
            "from 2 to 2000",
        ),
        (
            ProvisionedPollers(minimum=10, maximum=5),
            "provisioned_pollers.minimum=10 is more than maximum=5",
            "minimum <= maximum",
        ),
        (
            ProvisionedPollers(minimum=cast(int, 2.5)),
            "provisioned_pollers.minimum=2.5 is out of range",
            "from 2 to 200",
        ),
        (
            {"minimum": 2},
            "provisioned_pollers={'minimum': 2} is a dict, not a ProvisionedPollers",
            "ProvisionedPollers(",
        ),
    ],
)
def test_pollers_out_of_lambdas_ranges_are_refused(pollers: Any, start: str, fix: str) -> None:
    # GIVEN provisioned pollers Lambda would refuse WHEN built THEN the problem names the field, rule and fix
    [problem] = _problems(provisioned_pollers=pollers)
    assert problem.startswith(start) and fix in problem


def test_max_concurrency_beside_provisioned_pollers_is_refused_with_the_reason_and_fix() -> None:
    # GIVEN both ways of bounding the event source WHEN built
    [problem] = _problems(provisioned_pollers=ProvisionedPollers(), max_concurrency=5)
    # THEN the problem says Lambda takes one or the other, and which prop bounds the function instead
    assert problem.startswith("max_concurrency=5 cannot go with provisioned_pollers")
    assert "exclude each other" in problem
    assert "remove max_concurrency and bound the function with reserved_concurrency" in problem


def test_pollers_problems_are_collected_with_the_others() -> None:
    # GIVEN a wrong batch size, pollers out of range and max_concurrency beside them WHEN built
    problems = _problems(batch_size=11, provisioned_pollers=ProvisionedPollers(maximum=1), max_concurrency=5)
    # THEN one error lists all three
    assert [p.split(" ")[0] for p in problems] == [
        "batch_size=11",
        "provisioned_pollers.maximum=1",
        "max_concurrency=5",
    ]
