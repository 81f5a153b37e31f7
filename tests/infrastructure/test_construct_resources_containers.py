"""The container consumer's template (constructs_fifo/construct/resources/containers.py and
shared_storage.py): the Fargate service, its task definition and environment, its task role's least
privilege, its scaling, its capacity providers, a floor of tasks and shared storage, and a deploy of the
stack to the emulator's CloudFormation."""

from __future__ import annotations

import json
from typing import Any

import boto3
import pytest
from aws_cdk import App, Stack
from aws_cdk import aws_ecs as ecs
from aws_cdk.assertions import Match, Template

from constructs_fifo import ContainerConsumer, FargateCapacity, OrderedAgentQueue, SharedStorage
from constructs_fifo.construct import InvalidPropsError
from constructs_fifo.construct.resources.permissions import (
    CLAIM_TABLE_ACTIONS,
    CONSUME_ACTIONS,
    GROUP_TABLE_ACTIONS,
    SEND_ACTIONS,
    SHARED_STORAGE_ACTIONS,
    TASK_PROTECTION_ACTIONS,
)
from constructs_fifo.runtime import constants
from constructs_fifo.runtime.settings.spec import SETTINGS

from .workers import IMAGE, WorkersSynthesized

REGION = "eu-west-1"


def _one(template: Template, kind: str) -> dict[str, Any]:
    [resource] = template.find_resources(kind).values()
    return dict(resource)


def _environment(template: Template) -> dict[str, Any]:
    [container] = _one(template, "AWS::ECS::TaskDefinition")["Properties"]["ContainerDefinitions"]
    return {pair["Name"]: pair["Value"] for pair in container["Environment"]}


def test_the_container_consumer_builds_a_fargate_service_and_no_function(workers: WorkersSynthesized) -> None:
    # GIVEN a queue with consumer=ContainerConsumer(image) and every other prop at its default
    template = workers.template
    # THEN there is no function nor event source mapping, and one Fargate service of a cluster of its own
    template.resource_count_is("AWS::Lambda::Function", 0)
    template.resource_count_is("AWS::Lambda::EventSourceMapping", 0)
    template.resource_count_is("AWS::ECS::Cluster", 1)
    service = _one(template, "AWS::ECS::Service")["Properties"]
    assert service["LaunchType"] == "FARGATE"
    # AND its tasks get no public IP, in the private subnets of the VPC it made (which logs its flows)
    network = service["NetworkConfiguration"]["AwsvpcConfiguration"]
    assert network["AssignPublicIp"] == "DISABLED"
    assert all("PrivateSubnet" in subnet["Ref"] for subnet in network["Subnets"])
    template.resource_count_is("AWS::EC2::FlowLog", 1)
    # AND the created cluster has Container Insights on
    cluster = _one(template, "AWS::ECS::Cluster")["Properties"]
    assert cluster["ClusterSettings"] == [{"Name": "containerInsights", "Value": "enabled"}]


def test_the_task_runs_the_image_with_the_workers_grace_period(workers: WorkersSynthesized) -> None:
    # GIVEN the default container consumer's task definition
    task = _one(workers.template, "AWS::ECS::TaskDefinition")["Properties"]
    [container] = task["ContainerDefinitions"]
    # THEN it runs the image (its CMD is the worker), 1 vCPU / 2 GiB on x86_64, stopped 120 s after SIGTERM
    assert container["Image"] == IMAGE
    assert "Command" not in container
    assert (task["Cpu"], task["Memory"]) == ("1024", "2048")
    assert task["RuntimePlatform"] == {"CpuArchitecture": "X86_64", "OperatingSystemFamily": "LINUX"}
    assert container["StopTimeout"] == 120
    # AND it logs to its own log group, for a month
    assert container["LogConfiguration"]["LogDriver"] == "awslogs"
    group = container["LogConfiguration"]["Options"]["awslogs-group"]["Ref"]
    assert group.startswith("BuildsWorkerLogGroup")
    assert workers.template.to_json()["Resources"][group]["Properties"]["RetentionInDays"] == 30


def test_the_container_environment_is_the_settings_spec_with_the_workers_rows(
    workers: WorkersSynthesized,
) -> None:
    # GIVEN the default container consumer's environment
    environment = _environment(workers.template)
    # THEN it is every row's variable the function writes, plus the workers' own, with their defaults
    # (``pace`` has none: it is written only when given)
    expected = {row.env for row in SETTINGS.values() if row.env and not row.state_only and row.name != "pace"}
    assert set(environment) == expected
    assert environment[constants.ENV_SLOTS] == "4"
    assert environment[constants.ENV_HEARTBEAT_INTERVAL_SECONDS] == "30"
    # AND the receive's batch size reaches the workers (the function's reaches its event source instead)
    assert environment[SETTINGS["batch_size"].variable()] == "10"
    # AND a run is bounded by an hour, the queue's visibility timeout is 5 minutes (heartbeats extend it)
    assert environment[constants.ENV_MAX_JOB_DURATION_SECONDS] == "3600"
    assert environment[constants.ENV_VISIBILITY_TIMEOUT_SECONDS] == "300"
    queue = next(
        iter(
            workers.template.find_resources(
                "AWS::SQS::Queue", {"Properties": {"RedrivePolicy": Match.any_value()}}
            ).values()
        )
    )
    assert queue["Properties"]["VisibilityTimeout"] == 300


def test_the_task_role_has_the_functions_grants_plus_consuming_and_its_own_protection(
    workers: WorkersSynthesized,
) -> None:
    # GIVEN the task role's policy
    policies = workers.template.find_resources(
        "AWS::IAM::Policy", {"Properties": {"Roles": [{"Ref": Match.string_like_regexp("BuildsTaskRole")}]}}
    )
    [policy] = policies.values()
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    actions = [tuple(s["Action"]) if isinstance(s["Action"], list) else (s["Action"],) for s in statements]
    # THEN it holds exactly the function's table and send grants, consuming the queue, and task protection
    assert actions == [
        CLAIM_TABLE_ACTIONS,
        GROUP_TABLE_ACTIONS,
        SEND_ACTIONS,
        CONSUME_ACTIONS,
        TASK_PROTECTION_ACTIONS,
    ]
    # AND nothing on Resource "*", no log action (the log driver writes with the execution role)
    assert all(s["Resource"] != "*" for s in statements)
    assert not any(a.startswith("logs:") for group in actions for a in group)
    protection = json.dumps(statements[-1]["Resource"])
    assert ":task/" in protection and "BuildsCluster" in protection


def test_the_service_scales_from_zero_to_max_tasks_on_visible_and_in_flight_messages(
    workers: WorkersSynthesized,
) -> None:
    # GIVEN the scaling of the default consumer (4 slots, 4 tasks at most)
    target = _one(workers.template, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    # THEN it scales between 0 and max_tasks
    assert (target["MinCapacity"], target["MaxCapacity"]) == (0, 4)
    # AND both its step policies set an exact task count
    policies = workers.template.find_resources("AWS::ApplicationAutoScaling::ScalingPolicy")
    adjustments = sorted(
        (step.get("MetricIntervalLowerBound", -1e9), step["ScalingAdjustment"])
        for policy in policies.values()
        for step in policy["Properties"]["StepScalingPolicyConfiguration"]["StepAdjustments"]
    )
    assert {
        p["Properties"]["StepScalingPolicyConfiguration"]["AdjustmentType"] for p in policies.values()
    } == {"ExactCapacity"}
    assert [change for _, change in adjustments] == [0, 1, 2, 3, 4]
    # AND the alarms driving them read visible + in-flight messages
    scaling_alarms = workers.template.find_resources(
        "AWS::CloudWatch::Alarm",
        {"Properties": {"AlarmDescription": Match.string_like_regexp("scaling alarm")}},
    )
    assert len(scaling_alarms) == 2
    for alarm in scaling_alarms.values():
        assert alarm["Properties"]["Metrics"][0]["Expression"] == "visible + inflight"


def test_the_variant_takes_its_cluster_size_architecture_key_and_settings(
    workers: WorkersSynthesized,
) -> None:
    # GIVEN a consumer with a given cluster, 2 vCPU / 8 GiB, 50 GiB of disk, ARM64, a key and settings
    template = workers.variant_template
    task = _one(template, "AWS::ECS::TaskDefinition")["Properties"]
    # THEN the task definition says so, and the cluster is the given one (no cluster of its own)
    assert (task["Cpu"], task["Memory"], task["EphemeralStorage"]) == ("2048", "8192", {"SizeInGiB": 50})
    assert task["RuntimePlatform"]["CpuArchitecture"] == "ARM64"
    template.resource_count_is("AWS::ECS::Cluster", 1)
    service = _one(template, "AWS::ECS::Service")["Properties"]
    assert service["Cluster"] == {"Ref": Match.string_like_regexp("Agents")} or "Agents" in json.dumps(
        service["Cluster"]
    )
    # AND the workers' log group is encrypted with the key
    [log_group] = template.find_resources("AWS::Logs::LogGroup").values()
    assert "KmsKeyId" in log_group["Properties"]
    # AND the environment carries the given settings
    environment = _environment(template)
    assert (
        environment[constants.ENV_SLOTS],
        environment[constants.ENV_HEARTBEAT_INTERVAL_SECONDS],
        environment[constants.ENV_MAX_JOB_DURATION_SECONDS],
    ) == ("8", "20", "10800")
    # AND scaling stops at the groups the hint expects (6 groups / 8 slots: one task)
    target = _one(template, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    assert target["MaxCapacity"] == 5


@pytest.fixture(scope="module")
def options() -> Template:
    """A container queue with a floor of one task, Spot mixed with on-demand Fargate, and shared storage."""
    stack = Stack(App(), "WorkersOptions")
    OrderedAgentQueue(
        stack,
        "Builds",
        handler="builds.run_tests",
        consumer=ContainerConsumer(
            image=ecs.ContainerImage.from_registry(IMAGE),
            min_tasks=1,
            capacity=FargateCapacity(on_demand_base=1, on_demand_weight=1, spot_weight=3),
            shared_storage=SharedStorage(path="/workspaces"),
        ),
    )
    return Template.from_stack(stack)


def test_capacity_places_tasks_on_fargate_spot_mixed_with_on_demand(options: Template) -> None:
    # GIVEN a consumer with FargateCapacity(on_demand_base=1, on_demand_weight=1, spot_weight=3)
    service = _one(options, "AWS::ECS::Service")["Properties"]
    # THEN the service has no launch type but that strategy: the first task on demand, then 1 in 4
    assert "LaunchType" not in service
    assert service["CapacityProviderStrategy"] == [
        {"CapacityProvider": "FARGATE", "Base": 1, "Weight": 1},
        {"CapacityProvider": "FARGATE_SPOT", "Weight": 3},
    ]
    # AND the cluster of its own has both Fargate capacity providers
    [association] = options.find_resources("AWS::ECS::ClusterCapacityProviderAssociations").values()
    assert sorted(association["Properties"]["CapacityProviders"]) == ["FARGATE", "FARGATE_SPOT"]


def test_min_tasks_is_the_floor_of_scaling(options: Template) -> None:
    # GIVEN a consumer with min_tasks=1 (4 slots, 4 tasks at most)
    target = _one(options, "AWS::ApplicationAutoScaling::ScalableTarget")["Properties"]
    # THEN the scalable target keeps one task, and no step asks for fewer
    assert (target["MinCapacity"], target["MaxCapacity"]) == (1, 4)
    changes = sorted(
        step["ScalingAdjustment"]
        for policy in options.find_resources("AWS::ApplicationAutoScaling::ScalingPolicy").values()
        for step in policy["Properties"]["StepScalingPolicyConfiguration"]["StepAdjustments"]
    )
    assert changes[0] == 1 and changes[-1] == 4


def test_shared_storage_is_an_encrypted_file_system_mounted_on_every_task_through_an_access_point(
    options: Template,
) -> None:
    # GIVEN a consumer with SharedStorage(path="/workspaces")
    task = _one(options, "AWS::ECS::TaskDefinition")["Properties"]
    [container] = task["ContainerDefinitions"]
    # THEN the task mounts one EFS volume there, with TLS and IAM through an access point
    [volume] = task["Volumes"]
    configuration = volume["EFSVolumeConfiguration"]
    assert configuration["TransitEncryption"] == "ENABLED"
    assert configuration["AuthorizationConfig"]["IAM"] == "ENABLED"
    assert "AccessPointId" in configuration["AuthorizationConfig"]
    assert container["MountPoints"] == [
        {"ContainerPath": "/workspaces", "SourceVolume": volume["Name"], "ReadOnly": False}
    ]
    # AND the file system is encrypted, refuses requests without TLS and allows nothing by itself
    file_system = _one(options, "AWS::EFS::FileSystem")["Properties"]
    assert file_system["Encrypted"] is True
    [statement] = file_system["FileSystemPolicy"]["Statement"]
    assert (statement["Effect"], statement["Condition"]) == (
        "Deny",
        {"Bool": {"aws:SecureTransport": "false"}},
    )
    # AND its access point writes as one POSIX user into an owner-only directory
    access_point = _one(options, "AWS::EFS::AccessPoint")["Properties"]
    assert access_point["PosixUser"] == {"Uid": "1000", "Gid": "1000"}
    assert access_point["RootDirectory"]["CreationInfo"]["Permissions"] == "750"


def test_the_task_role_may_only_mount_and_write_through_the_access_point(options: Template) -> None:
    # GIVEN the task role's statements of the consumer with shared storage
    statements = [
        statement
        for policy in options.find_resources("AWS::IAM::Policy").values()
        if "BuildsTaskRole" in json.dumps(policy["Properties"]["Roles"])
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]
    ]
    [storage] = [s for s in statements if "elasticfilesystem" in json.dumps(s["Action"])]
    # THEN it may mount and write (no root access), on the file system, through its access point only
    assert sorted(storage["Action"]) == sorted(SHARED_STORAGE_ACTIONS)
    assert "SharedFileSystem" in json.dumps(storage["Resource"])
    assert "SharedAccessPoint" in json.dumps(storage["Condition"]["StringEquals"])
    # AND only the service's tasks reach the file system's NFS port
    [ingress] = options.find_resources("AWS::EC2::SecurityGroupIngress").values()
    assert (ingress["Properties"]["FromPort"], ingress["Properties"]["ToPort"]) == (2049, 2049)
    assert "BuildsService" in json.dumps(ingress["Properties"]["SourceSecurityGroupId"])


def test_the_function_of_a_container_queue_is_refused_with_what_to_read(workers: WorkersSynthesized) -> None:
    # GIVEN a container queue WHEN its function is read THEN the error names its workers
    with pytest.raises(InvalidPropsError, match=r"\.workers\.service"):
        _ = workers.default.function
    assert workers.default.workers is not None


@pytest.mark.usefixtures("patched_moto")
def test_the_container_stack_deploys_to_the_emulators_cloudformation(workers: WorkersSynthesized) -> None:
    # GIVEN the default container stack's template WHEN the emulator's CloudFormation creates it
    cloudformation = boto3.client("cloudformation", region_name=REGION)
    cloudformation.create_stack(
        StackName="Workers",
        TemplateBody=json.dumps(workers.template.to_json()),
        Capabilities=["CAPABILITY_IAM"],
    )
    # THEN the stack is complete, with its cluster, task definition and service (scaling is not applied)
    [stack] = cloudformation.describe_stacks(StackName="Workers")["Stacks"]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    ecs = boto3.client("ecs", region_name=REGION)
    [cluster] = ecs.list_clusters()["clusterArns"]
    [service] = ecs.list_services(cluster=cluster)["serviceArns"]
    [described] = ecs.describe_services(cluster=cluster, services=[service])["services"]
    [definition] = ecs.describe_task_definition(taskDefinition=described["taskDefinition"])["taskDefinition"][
        "containerDefinitions"
    ]
    assert definition["image"] == IMAGE
    assert {pair["name"] for pair in definition["environment"]} >= {
        constants.ENV_SLOTS,
        constants.ENV_QUEUE_URL,
    }
