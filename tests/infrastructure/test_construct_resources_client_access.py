"""``grant_client`` (construct/resources/client_access.py): a sender's grants, and the queue's address
in its environment, under the names ``QueueClient.from_environment`` reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk.assertions import Template

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.construct.errors import InvalidPropsError
from constructs_fifo.runtime.payloads.pointer import ENV_PAYLOAD_BUCKET
from constructs_fifo.runtime.settings.addresses import client_variables

REPO = Path(__file__).resolve().parents[2]


def _stack() -> tuple[Stack, OrderedAgentQueue, lambda_.Function]:
    stack = Stack(App(), "Senders")
    queue = OrderedAgentQueue(
        stack, "Tools", code=lambda_.Code.from_asset(str(REPO / "lambda")), handler="notifier.handle"
    )
    sender = lambda_.Function(
        stack,
        "Server",
        runtime=lambda_.Runtime.PYTHON_3_12,
        handler="index.handler",
        code=lambda_.Code.from_inline("def handler(event, context):\n    return None\n"),
    )
    return stack, queue, sender


def _statements(template: Template, role_prefix: str) -> list[dict[str, Any]]:
    policies = template.find_resources("AWS::IAM::Policy")
    return [
        statement
        for policy in policies.values()
        if any(role["Ref"].startswith(role_prefix) for role in policy["Properties"]["Roles"])
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]


def test_a_sender_may_send_and_read_outcomes_and_finds_the_queue_in_its_environment() -> None:
    # GIVEN a claim-mode queue (PARK: claim and group tables) and a function that sends to it
    stack, queue, sender = _stack()
    # WHEN it is given client access
    queue.grant_client(sender)
    template = Template.from_stack(stack)
    # THEN its environment holds the queue's address under the runtime's own names (no payload bucket:
    # the queue has none)
    [function] = [
        f for key, f in template.find_resources("AWS::Lambda::Function").items() if key.startswith("Server")
    ]
    variables = function["Properties"]["Environment"]["Variables"]
    assert set(variables) == set(client_variables().values()) - {ENV_PAYLOAD_BUCKET}
    # AND it may send, and read (one and many items) the two tables, and nothing else
    statements = _statements(template, "ServerServiceRole")
    actions = sorted(
        action
        for statement in statements
        for action in ([statement["Action"]] if isinstance(statement["Action"], str) else statement["Action"])
    )
    assert actions == sorted(
        [
            "sqs:SendMessage",
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
            "dynamodb:GetItem",
            "dynamodb:BatchGetItem",
        ]
    )


def test_a_named_client_sets_its_own_variables_and_a_bad_name_is_refused() -> None:
    # GIVEN a function that sends to this queue among others
    stack, queue, sender = _stack()
    # WHEN it is given client access under a name
    queue.grant_client(sender, name="fast_tools")
    [function] = [
        f
        for key, f in Template.from_stack(stack).find_resources("AWS::Lambda::Function").items()
        if key.startswith("Server")
    ]
    # THEN the variables carry the name
    assert "CONSTRUCTS_FIFO_FAST_TOOLS_QUEUE_URL" in function["Properties"]["Environment"]["Variables"]
    # AND a name that cannot be part of a variable name is refused with the rule
    with pytest.raises(InvalidPropsError, match="a letter followed by letters"):
        queue.grant_client(sender, name="fast-tools")
