"""OrderedAgentQueue props of the wrong type: each an InvalidPropsError problem like any other.

Each prop is checked against the type its row of the settings spec names before any rule reads its
value; a wrong type is one problem naming the prop, the value, the type it must be and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import JobMode, OrderedAgentQueue
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.construct.checks.prop_types import checked_type
from constructs_fifo.runtime.settings.spec import SETTINGS

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def code() -> lambda_.Code:
    return lambda_.Code.from_asset(str(REPO / "lambda"))


def _problems(code: lambda_.Code, **props: Any) -> list[str]:
    kwargs: dict[str, Any] = {"code": code, "handler": "notifier.handle", **props}
    with pytest.raises(InvalidPropsError) as raised:
        OrderedAgentQueue(Stack(App(), "S"), "Jobs", **kwargs)
    return raised.value.problems


WRONG_TYPES: dict[str, tuple[dict[str, Any], str]] = {
    "timeout_as_an_int": (
        {"timeout": 60},
        "timeout=60 is an int: timeout must be a CDK Duration; pass timeout=Duration.seconds(60).",
    ),
    "batch_size_as_a_string": (
        {"batch_size": "10"},
        "batch_size='10' is a str: batch_size must be a whole number; pass batch_size=10.",
    ),
    "visibility_timeout_as_an_int": (
        {"visibility_timeout": 720},
        "visibility_timeout=720 is an int: visibility_timeout must be a CDK Duration or None; pass "
        "visibility_timeout=Duration.seconds(720).",
    ),
    "timeout_as_a_string": (
        {"timeout": "2m"},
        "timeout='2m' is a str: timeout must be a CDK Duration; pass timeout=Duration.minutes(2).",
    ),
    "max_attempts_as_a_bool": (
        {"max_attempts": True},
        "max_attempts=True is a bool: max_attempts must be a whole number; pass max_attempts=5.",
    ),
    "handler_as_an_int": (
        {"handler": 5},
        "handler=5 is an int: handler must be a string; pass handler='agent_worker.handle'.",
    ),
    "content_based_deduplication_as_a_string": (
        {"content_based_deduplication": "yes"},
        "content_based_deduplication='yes' is a str: content_based_deduplication must be a bool; pass "
        "content_based_deduplication=False.",
    ),
    "table_removal_policy_as_a_string": (
        {"table_removal_policy": "destroy"},
        "table_removal_policy='destroy' is a str: table_removal_policy must be a RemovalPolicy; pass "
        "table_removal_policy=RemovalPolicy.RETAIN.",
    ),
    "on_dead_job_as_an_int": (
        {"on_dead_job": 1},
        "on_dead_job=1 is an int: on_dead_job must be a DeadJobPolicy; pass on_dead_job=DeadJobPolicy.PARK.",
    ),
    "mode_not_a_mode": (
        {"mode": "bogus"},
        "mode='bogus' is not a JobMode: it must be JobMode.CLAIM or JobMode.STATE; pass e.g. "
        "mode=JobMode.CLAIM.",
    ),
    "gap_policy_not_a_policy": (
        {"mode": JobMode.STATE, "gap_policy": "skip"},
        "gap_policy='skip' is not a GapPolicy: it must be GapPolicy.WAIT or GapPolicy.SKIP_GAP; pass e.g. "
        "gap_policy=GapPolicy.WAIT.",
    ),
}


@pytest.mark.parametrize("case", sorted(WRONG_TYPES))
def test_a_prop_of_the_wrong_type_is_one_invalid_props_problem(code: lambda_.Code, case: str) -> None:
    # GIVEN one prop of another type than its row's (a TypeError from CDK or a comparison before)
    props, message = WRONG_TYPES[case]
    # WHEN the construct is built / THEN exactly that problem is raised, naming prop, value, type and fix
    assert _problems(code, **props) == [message]


def test_wrong_types_are_collected_with_every_other_problem(code: lambda_.Code) -> None:
    # GIVEN two props of the wrong type and one out of its range, in one call
    problems = _problems(code, timeout=60, batch_size="10", max_attempts=0)
    # THEN one error lists all three (the rules by value skip the wrongly typed props)
    assert [problem.split(" ")[0] for problem in problems] == [
        "batch_size='10'",
        "timeout=60",
        "max_attempts=0",
    ]


def test_a_value_of_an_enum_as_its_string_is_accepted(code: lambda_.Code) -> None:
    # GIVEN a mode given as its value / WHEN built / THEN it is that mode
    value = cast(JobMode, "STATE")
    queue = OrderedAgentQueue(Stack(App(), "S"), "Jobs", code=code, handler="notifier.handle", mode=value)
    assert queue.mode is JobMode.STATE


def test_the_props_whose_type_is_not_checked_here_are_known() -> None:
    # GIVEN the prop rows / THEN those without a generic type check are CDK interfaces, sequences, or
    # props whose own rule checks their type (a new row with a new type is a deliberate choice)
    unchecked = sorted(row.name for row in SETTINGS.values() if row.prop and checked_type(row) is None)
    assert unchecked == [
        "alarm_topic",
        "architecture",
        "bundling",
        "code",
        "consumer",
        "dashboard",
        "encryption_key",
        "environment",
        "layers",
        "pace",
        "provisioned_pollers",
        "security_groups",
        "tracing",
        "vpc",
        "vpc_subnets",
    ]
