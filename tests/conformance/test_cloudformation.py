"""CloudFormation behaviours constructs-fifo relies on (as ``cdk deploy`` drives them); naming the page."""

from __future__ import annotations

import contextlib
import json
import os
import time
import uuid
from collections.abc import Iterator
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
def test_the_change_set_patches_are_reverted_and_applied_once() -> None:
    from moto.cloudformation.models import ChangeSet
    from moto.cloudformation.responses import CloudFormationResponse

    # GIVEN the patches applied (the session's emulator applied them)
    patches.apply()
    actions = ("create_change_set", "describe_change_set", "delete_change_set", "execute_change_set")
    patched = [ChangeSet.apply, *(getattr(CloudFormationResponse, name) for name in actions)]
    try:
        # WHEN they are reverted THEN moto's own ChangeSet.apply and change-set actions are back
        patches.revert()
        assert ChangeSet.apply.__module__ == "moto.cloudformation.models"
        assert {getattr(CloudFormationResponse, name).__module__ for name in actions} == {
            "moto.cloudformation.responses"
        }
    finally:
        # AND applying again twice installs the same patches once (no wrapper of a wrapper)
        patches.apply()
        patches.apply()
    assert [ChangeSet.apply, *(getattr(CloudFormationResponse, name) for name in actions)] == patched


# Change sets, as `cdk deploy` drives them: every stack's change set has the same name
# (cdk-deploy-change-set); before an update the CLI deletes it by name and stack, a change set with no
# changes is FAILED and deleted by ARN, and the stack's BootstrapVersion is an SSM parameter passed
# with UsePreviousValue.

CHANGE_SET = "deploy"
NO_CHANGES = "The submitted information didn't contain changes."
_IN_PROGRESS = frozenset({"CREATE_PENDING", "CREATE_IN_PROGRESS"})


def _versioned_template(parameter: str, queue: str, visibility_seconds: int) -> dict[str, Any]:
    """A CDK-like template: a standard queue and a ``Version`` parameter read from SSM."""
    return {
        "Parameters": {"Version": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": parameter}},
        "Resources": {
            "Jobs": {
                "Type": "AWS::SQS::Queue",
                "Properties": {"QueueName": queue, "VisibilityTimeout": visibility_seconds},
            }
        },
        "Outputs": {"Version": {"Value": {"Ref": "Version"}}, "QueueUrl": {"Value": {"Ref": "Jobs"}}},
    }


def _settled(cloudformation: CloudFormationClient, change_set_arn: str, delay: float) -> dict[str, Any]:
    """DescribeChangeSet once its creation has ended (CREATE_COMPLETE or FAILED)."""
    for _ in range(120):
        described = dict(cloudformation.describe_change_set(ChangeSetName=change_set_arn))
        if described["Status"] not in _IN_PROGRESS:
            return described
        time.sleep(delay)
    raise AssertionError(f"change set {change_set_arn} still being created")


def _create(
    cloudformation: CloudFormationClient,
    stack: str,
    kind: Literal["CREATE", "UPDATE"],
    template: dict[str, Any],
    delay: float,
) -> dict[str, Any]:
    """CreateChangeSet ``deploy`` as the CDK CLI does (UPDATE: Version with UsePreviousValue)."""
    parameters: list[Any] = (
        [{"ParameterKey": "Version", "UsePreviousValue": True}] if kind == "UPDATE" else []
    )
    created = cloudformation.create_change_set(
        StackName=stack,
        ChangeSetName=CHANGE_SET,
        ChangeSetType=kind,
        TemplateBody=json.dumps(template),
        Parameters=parameters,
    )
    return _settled(cloudformation, created["Id"], delay)


def _execute(cloudformation: CloudFormationClient, stack: str, kind: str, delay: int) -> None:
    cloudformation.execute_change_set(StackName=stack, ChangeSetName=CHANGE_SET)
    config: WaiterConfigTypeDef = {"Delay": delay, "MaxAttempts": 120}
    if kind == "CREATE":
        cloudformation.get_waiter("stack_create_complete").wait(StackName=stack, WaiterConfig=config)
    else:
        cloudformation.get_waiter("stack_update_complete").wait(StackName=stack, WaiterConfig=config)


def _error_code(call: Any) -> tuple[str, str]:
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


@pytest.fixture
def two_stacks(target: Target) -> Iterator[tuple[CloudFormationClient, list[str], str]]:
    """Two stack names and an SSM parameter ``Version`` = ``v1``; whatever was created is deleted."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    ssm = target.client("ssm")
    parameter = f"/cfconf-{target.run_id}/version"
    ssm.put_parameter(Name=parameter, Value="v1", Type="String", Overwrite=True)
    stacks = [f"cfconf-{target.run_id}-cs-a", f"cfconf-{target.run_id}-cs-b"]
    try:
        yield cloudformation, stacks, parameter
    finally:
        for stack in stacks:
            with contextlib.suppress(Exception):
                cloudformation.delete_stack(StackName=stack)
        ssm.delete_parameter(Name=parameter)


def test_change_sets_of_the_same_name_belong_each_to_its_stack(
    target: Target, two_stacks: tuple[CloudFormationClient, list[str], str]
) -> None:
    """AWS: API_CreateChangeSet, API_DescribeChangeSet, API_ExecuteChangeSet, API_ListChangeSets: a
    change set is named per stack (found by ARN, or by name with its StackName); ListChangeSets
    lists one stack's; executing one deletes the stack's others. moto 5.2.5 found change sets by
    name across stacks and listed all of them."""
    cloudformation, (a, b), parameter = two_stacks
    delay = 5 if target.on_aws else 0.05
    # GIVEN a CREATE change set named `deploy` on each of two new stacks
    made = {
        stack: _create(
            cloudformation, stack, "CREATE", _versioned_template(parameter, f"{stack}-q", 30), delay
        )
        for stack in (a, b)
    }
    # THEN each is CREATE_COMPLETE and AVAILABLE, and found by name on its own stack
    for stack, change_set in made.items():
        assert (change_set["Status"], change_set["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
        found = cloudformation.describe_change_set(StackName=stack, ChangeSetName=CHANGE_SET)
        assert (found["ChangeSetId"], found["StackName"]) == (change_set["ChangeSetId"], stack)
        # AND ListChangeSets lists that stack's change set only
        listed = cloudformation.list_change_sets(StackName=stack)["Summaries"]
        assert [s["ChangeSetId"] for s in listed] == [change_set["ChangeSetId"]]

    # WHEN A's is executed by name and stack
    _execute(cloudformation, a, "CREATE", int(delay) or 1)
    # THEN A is created from it, and B's change set is untouched (still AVAILABLE, B not created)
    assert cloudformation.describe_stacks(StackName=a)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    untouched = cloudformation.describe_change_set(StackName=b, ChangeSetName=CHANGE_SET)
    assert (untouched["ChangeSetId"], untouched["ExecutionStatus"]) == (made[b]["ChangeSetId"], "AVAILABLE")
    assert cloudformation.describe_stacks(StackName=b)["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"

    # WHEN A's UPDATE change set of the same name (a changed queue, Version by UsePreviousValue) runs
    cloudformation.delete_change_set(StackName=a, ChangeSetName=CHANGE_SET)  # as `cdk deploy` does
    update = _create(cloudformation, a, "UPDATE", _versioned_template(parameter, f"{a}-q", 45), delay)
    assert (update["Status"], update["ExecutionStatus"]) == ("CREATE_COMPLETE", "AVAILABLE")
    _execute(cloudformation, a, "UPDATE", int(delay) or 1)
    # THEN A is updated with the SSM parameter's value still resolved, and B's change set still waits
    assert _outputs(cloudformation, a)["Version"] == "v1"
    queue_url = _outputs(cloudformation, a)["QueueUrl"]
    sqs = target.client("sqs")
    attributes = sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"])
    assert attributes["Attributes"]["VisibilityTimeout"] == "45"
    assert cloudformation.describe_change_set(ChangeSetName=made[b]["ChangeSetId"])["ExecutionStatus"] == (
        "AVAILABLE"
    )


def test_a_change_set_without_changes_fails_cannot_run_and_is_deleted(
    target: Target, two_stacks: tuple[CloudFormationClient, list[str], str]
) -> None:
    """AWS: API_DescribeChangeSet (Status FAILED, StatusReason "The submitted information didn't
    contain changes..."), API_ExecuteChangeSet (InvalidChangeSetStatus), API_DeleteChangeSet (no
    error for a change set that is gone; ChangeSetNotFound from DescribeChangeSet afterwards):
    `cdk deploy` of an unchanged app with --force, on each of two stacks."""
    cloudformation, stacks, parameter = two_stacks
    delay = 5 if target.on_aws else 0.05
    templates = {stack: _versioned_template(parameter, f"{stack}-q", 30) for stack in stacks}
    for stack in stacks:
        _create(cloudformation, stack, "CREATE", templates[stack], delay)
        _execute(cloudformation, stack, "CREATE", int(delay) or 1)
    for stack in stacks:
        # GIVEN the stack's leftover change set deleted by name (a no-op if CloudFormation removed it)
        cloudformation.delete_change_set(StackName=stack, ChangeSetName=CHANGE_SET)
        cloudformation.delete_change_set(StackName=stack, ChangeSetName=CHANGE_SET)
        # WHEN an UPDATE change set repeats the stack's template and parameters
        empty = _create(cloudformation, stack, "UPDATE", templates[stack], delay)
        # THEN it is FAILED, not executable, with AWS's reason
        assert (empty["Status"], empty["ExecutionStatus"]) == ("FAILED", "UNAVAILABLE")
        assert empty["StatusReason"].startswith(NO_CHANGES)
        code, _ = _error_code(
            lambda s=stack: cloudformation.execute_change_set(StackName=s, ChangeSetName=CHANGE_SET)
        )
        assert code == "InvalidChangeSetStatus"
        # AND deleted by its ARN it is gone: DescribeChangeSet says ChangeSetNotFound
        cloudformation.delete_change_set(StackName=empty["StackId"], ChangeSetName=empty["ChangeSetId"])
        code, message = _error_code(
            lambda s=stack: cloudformation.describe_change_set(StackName=s, ChangeSetName=CHANGE_SET)
        )
        assert code == "ChangeSetNotFound"
        assert CHANGE_SET in message
        assert cloudformation.list_change_sets(StackName=stack)["Summaries"] == []
        # AND the stack is as it was
        assert (
            cloudformation.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
        )


def test_change_set_requests_naming_a_missing_stack_or_an_existing_one_to_create_are_refused(
    target: Target, two_stacks: tuple[CloudFormationClient, list[str], str]
) -> None:
    """AWS: API_DeleteChangeSet on a stack that does not exist: ValidationError (observed on AWS,
    ministack pull request 1625); API_CreateChangeSet CREATE for a stack that exists:
    ValidationError "Stack [S] already exists and cannot be created again with the changeSet [C]."
    (observed on AWS). moto
    5.2.5 failed with HTTP 500 on the delete and made a second stack of the same name."""
    cloudformation, (a, missing), parameter = two_stacks
    delay = 5 if target.on_aws else 0.05
    template = _versioned_template(parameter, f"{a}-q", 30)
    _create(cloudformation, a, "CREATE", template, delay)
    _execute(cloudformation, a, "CREATE", int(delay) or 1)
    # WHEN a change set of a stack that does not exist is deleted THEN ValidationError
    code, _ = _error_code(
        lambda: cloudformation.delete_change_set(StackName=missing, ChangeSetName=CHANGE_SET)
    )
    assert code == "ValidationError"
    # WHEN a CREATE change set names the existing stack THEN ValidationError, and no second stack
    code, message = _error_code(
        lambda: cloudformation.create_change_set(
            StackName=a, ChangeSetName="again", ChangeSetType="CREATE", TemplateBody=json.dumps(template)
        )
    )
    assert (code, message) == (
        "ValidationError",
        f"Stack [{a}] already exists and cannot be created again with the changeSet [again].",
    )
    assert [s["StackName"] for s in cloudformation.describe_stacks()["Stacks"]].count(a) == 1


def test_a_second_change_set_of_a_name_on_one_stack_is_refused(
    target: Target, two_stacks: tuple[CloudFormationClient, list[str], str]
) -> None:
    """AWS: API_CreateChangeSet (ChangeSetName "must be unique among all change sets that are
    associated with the specified stack") and the observation on AWS: AlreadyExistsException,
    "ChangeSet NAME cannot be created due to a mismatch with existing attribute ...". moto 5.2.5
    made a second change set of the name."""
    cloudformation, (a, _), parameter = two_stacks
    delay = 5 if target.on_aws else 0.05
    # GIVEN a change set `deploy` waiting on a new stack
    first = _create(cloudformation, a, "CREATE", _versioned_template(parameter, f"{a}-q", 30), delay)
    # WHEN another change set `deploy` with another template is created for that stack
    again = json.dumps(_versioned_template(parameter, f"{a}-q", 60))
    code, message = _error_code(
        lambda: cloudformation.create_change_set(
            StackName=a, ChangeSetName=CHANGE_SET, ChangeSetType="CREATE", TemplateBody=again
        )
    )
    # THEN it is refused, and the stack still has its one change set
    assert code == "AlreadyExistsException"
    assert message.startswith(
        f"ChangeSet {CHANGE_SET} cannot be created due to a mismatch with existing attribute"
    )
    listed = cloudformation.list_change_sets(StackName=a)["Summaries"]
    assert [s["ChangeSetId"] for s in listed] == [first["ChangeSetId"]]


def test_ref_of_a_queue_is_the_url_the_endpoint_serves(target: Target) -> None:
    """AWS: aws-resource-sqs-queue, Return values ("Ref returns the queue URL"), the URL SQS's
    GetQueueUrl returns (API_GetQueueUrl). On AWS both are ``https://sqs.<region>.amazonaws.com/...``;
    an emulator must answer both in its own endpoint's form, or every stack output and physical id of
    a queue points at AWS (``cdk deploy``'s Outputs, DescribeStacks, a function's environment)."""
    cloudformation: CloudFormationClient = target.client("cloudformation")
    sqs = target.client("sqs")
    stack = f"cfconf-{target.run_id}-urls"
    delay = 5 if target.on_aws else 1
    # GIVEN a stack with a queue and its URL as an output, created as `cdk deploy` creates it
    template: dict[str, Any] = {
        "Resources": {"Jobs": _queue(f"{stack}-jobs")},
        "Outputs": {"QueueUrl": {"Value": {"Ref": "Jobs"}}},
    }
    try:
        _execute_change_set(cloudformation, stack, kind="CREATE", template=template, delay=delay)
        # WHEN the queue's URL is read from SQS, from the stack's output and from its physical id
        served = sqs.get_queue_url(QueueName=f"{stack}-jobs")["QueueUrl"]
        # THEN the three are the same URL
        assert _outputs(cloudformation, stack) == {"QueueUrl": served}
        assert _physical_ids(cloudformation, stack)["Jobs"] == served
        if target.endpoint_url is not None:  # the emulator's: its own host
            assert served.startswith(f"{target.endpoint_url}/")
    finally:
        cloudformation.delete_stack(StackName=stack)
