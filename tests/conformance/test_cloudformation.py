"""CloudFormation behaviours constructs-fifo relies on (as ``cdk deploy`` drives them); naming the page."""

from __future__ import annotations

import json
import os
import uuid
from typing import TYPE_CHECKING, Any, Literal

import pytest

from constructs_fifo.local.emulator import patches

from .support import RAW_ENV, Target

if TYPE_CHECKING:
    from mypy_boto3_cloudformation.client import CloudFormationClient
    from mypy_boto3_cloudformation.type_defs import WaiterConfigTypeDef


def _queue(name: str) -> dict[str, Any]:
    return {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": name}}


def _execute_change_set(
    cloudformation: CloudFormationClient,
    stack: str,
    *,
    kind: Literal["CREATE", "UPDATE"],
    template: dict[str, Any],
    delay: int,
) -> None:
    """CreateChangeSet + ExecuteChangeSet, waiting as ``cdk deploy`` does (at once on the emulator)."""
    name = f"{kind.lower()}-{uuid.uuid4().hex[:8]}"
    cloudformation.create_change_set(
        StackName=stack, ChangeSetName=name, ChangeSetType=kind, TemplateBody=json.dumps(template)
    )
    waiter_config: WaiterConfigTypeDef = {"Delay": delay, "MaxAttempts": 120}
    cloudformation.get_waiter("change_set_create_complete").wait(
        StackName=stack, ChangeSetName=name, WaiterConfig=waiter_config
    )
    cloudformation.execute_change_set(StackName=stack, ChangeSetName=name)
    if kind == "CREATE":
        cloudformation.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=waiter_config)
    else:
        cloudformation.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=waiter_config)


def _physical_ids(cloudformation: CloudFormationClient, stack: str) -> dict[str, str]:
    resources = cloudformation.describe_stack_resources(StackName=stack)["StackResources"]
    return {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in resources}


def _outputs(cloudformation: CloudFormationClient, stack: str) -> dict[str, str]:
    [found] = cloudformation.describe_stacks(StackName=stack)["Stacks"]
    return {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", [])}


def test_a_stack_created_and_updated_by_change_sets_has_its_outputs_and_template(target: Target) -> None:
    """AWS: API_DescribeStacks ("Outputs: A list of output structures"), API_GetTemplate, and
    using-cfn-updating-stacks-changesets (executing a change set creates or updates the stack from
    its template). ``cdk deploy`` works this way; its outputs (QueueUrl, ...) are read from
    DescribeStacks, its construct paths from GetTemplate. Standard queues only: free, and deleted
    with the stack."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    sqs = target.client("sqs")
    stack = f"cfconf-{target.run_id}-outputs"
    delay = 5 if target.on_aws else 1
    # GIVEN a template whose outputs use a literal, Ref, Fn::GetAtt and Fn::Join
    template: dict[str, Any] = {
        "Resources": {"Jobs": _queue(f"{stack}-jobs")},
        "Outputs": {
            "Literal": {"Value": "v1"},
            "QueueUrl": {"Value": {"Ref": "Jobs"}},
            "QueueArn": {"Value": {"Fn::GetAtt": ["Jobs", "Arn"]}},
            "Joined": {"Value": {"Fn::Join": ["|", ["jobs", {"Fn::GetAtt": ["Jobs", "QueueName"]}]]}},
        },
    }
    try:
        # WHEN the stack is created by executing a CREATE change set
        _execute_change_set(cloudformation, stack, kind="CREATE", template=template, delay=delay)

        # THEN DescribeStacks returns every output, resolved as CreateStack would (Ref of a queue is
        # its URL, the physical id; moto's host in that URL may differ from the endpoint's)
        jobs_url = _physical_ids(cloudformation, stack)["Jobs"]
        jobs_arn = sqs.get_queue_attributes(QueueUrl=jobs_url, AttributeNames=["QueueArn"])["Attributes"]
        assert jobs_url.endswith(f"/{stack}-jobs")
        assert _outputs(cloudformation, stack) == {
            "Literal": "v1",
            "QueueUrl": jobs_url,
            "QueueArn": jobs_arn["QueueArn"],
            "Joined": f"jobs|{stack}-jobs",
        }
        # AND GetTemplate returns the template the change set carried
        assert cloudformation.get_template(StackName=stack)["TemplateBody"] == template

        # WHEN an UPDATE change set adds a resource, changes an output and drops another
        template["Resources"]["Dlq"] = _queue(f"{stack}-dlq")
        template["Outputs"] = {
            "Literal": {"Value": "v2"},
            "QueueUrl": {"Value": {"Ref": "Jobs"}},
            "DlqUrl": {"Value": {"Ref": "Dlq"}},
        }
        _execute_change_set(cloudformation, stack, kind="UPDATE", template=template, delay=delay)

        # THEN DescribeStacks returns the updated template's outputs, and only those
        dlq_url = _physical_ids(cloudformation, stack)["Dlq"]
        assert dlq_url.endswith(f"/{stack}-dlq")
        assert _outputs(cloudformation, stack) == {"Literal": "v2", "QueueUrl": jobs_url, "DlqUrl": dlq_url}
        assert cloudformation.get_template(StackName=stack)["TemplateBody"] == template
    finally:
        cloudformation.delete_stack(StackName=stack)


@pytest.mark.emulator_only
@pytest.mark.skipif(os.environ.get(RAW_ENV) == "1", reason="raw-moto run: the patches must stay off")
def test_the_change_set_outputs_patch_is_reverted_and_applied_once() -> None:
    from moto.cloudformation.models import ChangeSet

    # GIVEN the patches applied (the session's emulator applied them)
    patches.apply()
    patched = ChangeSet.apply
    try:
        # WHEN they are reverted THEN moto's own ChangeSet.apply is back
        patches.revert()
        assert ChangeSet.apply is not patched
        assert ChangeSet.apply.__module__ == "moto.cloudformation.models"
    finally:
        # AND applying again twice installs the same patch once (no wrapper of a wrapper)
        patches.apply()
        patches.apply()
    assert ChangeSet.apply is patched
