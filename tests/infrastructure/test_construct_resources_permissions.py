"""``grant_steer``: who may steer sent jobs is a grant of its own, least privilege, in both modes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest
from aws_cdk import App, Stack, assertions
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.construct.resources.permissions import GROUP_STEER_ACTIONS, STEER_ACTIONS
from constructs_fifo.runtime.constants import JobMode

from .stacks import REPO


def _statements(template: Mapping[str, Any], role: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for resource in template["Resources"].values():
        if resource["Type"] == "AWS::IAM::Policy" and role in json.dumps(resource["Properties"]["Roles"]):
            found += resource["Properties"]["PolicyDocument"]["Statement"]
    return found


def _table_ids(template: Mapping[str, Any]) -> dict[str, str]:
    ids: dict[str, str] = {}
    for logical_id, resource in template["Resources"].items():
        if resource["Type"] == "AWS::DynamoDB::Table":
            keys = [k["AttributeName"] for k in resource["Properties"]["KeySchema"]]
            ids["group" if keys == ["group", "sk"] else "claim"] = logical_id
    return ids


@pytest.mark.parametrize("mode", [JobMode.CLAIM, JobMode.STATE])
def test_grant_steer_names_its_actions_per_table_and_enqueue_gives_no_dynamodb_action(mode: JobMode) -> None:
    # GIVEN a queue of each mode (PARK: both tables in claim mode), a Steerer with grant_steer and a
    # Producer with grant_enqueue
    stack = Stack(App(), "Steered")
    jobs = OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="agent_worker.apply_job" if mode is JobMode.STATE else "notifier.handle",
        mode=mode,
    )
    jobs.grant_steer(iam.Role(stack, "Steerer", assumed_by=iam.AccountRootPrincipal()))
    jobs.grant_enqueue(iam.Role(stack, "Producer", assumed_by=iam.AccountRootPrincipal()))
    template = assertions.Template.from_stack(stack).to_json()
    # WHEN reading their statements
    steerer, producer = _statements(template, "Steerer"), _statements(template, "Producer")
    tables = _table_ids(template)
    by_resource = {json.dumps(s["Resource"]): sorted(_actions(s)) for s in steerer}
    # THEN the steerer gets exactly: send on the queue, the named actions on each table it has
    expected = {json.dumps({"Fn::GetAtt": [tables["group"], "Arn"]}): sorted(GROUP_STEER_ACTIONS)}
    if mode is JobMode.CLAIM:
        expected[json.dumps({"Fn::GetAtt": [tables["claim"], "Arn"]})] = sorted(STEER_ACTIONS)
    queue = next(k for k in by_resource if "Arn" in k and k not in expected)
    assert by_resource.pop(queue) == ["sqs:SendMessage"]
    assert by_resource == expected
    # AND the producer cannot steer: no DynamoDB action at all
    assert not any("dynamodb" in json.dumps(s["Action"]) for s in producer)


def _actions(statement: Mapping[str, Any]) -> list[str]:
    actions = statement["Action"]
    return [actions] if isinstance(actions, str) else list(actions)
