"""tokens: the Python answers agree with CDK's, for plain values and for every kind of token."""

from __future__ import annotations

import pytest
from aws_cdk import App, Aws, CfnParameter, Duration, Fn, Stack, Token

from constructs_fifo.construct.settings import tokens

PLAIN_VALUES: list[object] = [
    0,
    1,
    -1,
    10,
    2**53,
    -(2**53),
    0.5,
    1e300,
    -1.8e289,
    "",
    "agent_worker.handle",
    "Token",
]


@pytest.mark.parametrize("value", PLAIN_VALUES, ids=repr)
def test_plain_values_are_resolved_as_cdk_says(value: object) -> None:
    # GIVEN a value that is not a token WHEN asking THEN the answer is CDK's
    assert tokens.is_unresolved(value) is False
    assert Token.is_unresolved(value) is False


def test_every_kind_of_token_is_unresolved() -> None:
    # GIVEN tokens of each encoding: a number, a string, a pseudo parameter, an intrinsic, a list
    stack = Stack(App(), "Tokens")
    number = CfnParameter(stack, "Number", type="Number").value_as_number
    string = CfnParameter(stack, "String").value_as_string
    listed = CfnParameter(stack, "List", type="CommaDelimitedList").value_as_list
    candidates = [
        number,
        string,
        Aws.ACCOUNT_ID,
        Fn.join("-", [string, "x"]),
        listed,
        f"prefix-{string}",
    ]
    # WHEN asking THEN each is unresolved, as CDK says
    for value in candidates:
        assert tokens.is_unresolved(value) is True, value
        assert Token.is_unresolved(value) is True, value


def test_seconds_of_a_duration_keeps_fractions_and_a_token_is_none() -> None:
    # GIVEN durations in several units, one fractional, and one whose amount is a token
    stack = Stack(App(), "Durations")
    token = Duration.seconds(CfnParameter(stack, "Timeout", type="Number").value_as_number)
    # WHEN reading their seconds (twice: the second answer comes from the first)
    # THEN they are CDK's, and the token's is None
    for _ in range(2):
        assert tokens.seconds(Duration.minutes(2)) == 120.0
        assert tokens.seconds(Duration.millis(1500)) == 1.5
        assert tokens.seconds(token) is None


def test_a_remembered_duration_answers_its_seconds() -> None:
    # GIVEN a duration the construct made from a number it knows
    duration = tokens.remember_seconds(Duration.seconds(720), 720)
    # WHEN reading its seconds THEN it is that number, and CDK agrees
    assert tokens.seconds(duration) == 720.0 == duration.to_seconds()
