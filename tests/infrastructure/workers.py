"""The stacks of the container consumer's template tests, synthesized once per session (see conftest).

- ``Workers``: a claim-mode queue with ``consumer=ContainerConsumer(...)`` and every other prop at its
  default (a cluster and VPC of its own), deployable as is (no bootstrap version rule);
- ``WorkersVariant``: the same with a key, an alarm topic, ARM64, a given cluster in a VPC of the
  stack, a bigger task, ``slots=8``, ``heartbeat_interval`` and ``max_job_duration`` given, and a hint
  of 6 expected groups.
"""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import App, BootstraplessSynthesizer, Duration, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Template

from constructs_fifo import ContainerConsumer, OrderedAgentQueue

IMAGE = "public.ecr.aws/example/agent-worker:1"


@dataclass
class WorkersSynthesized:
    """The two stacks' queues, templates and annotations."""

    default: OrderedAgentQueue
    variant: OrderedAgentQueue
    template: Template
    variant_template: Template
    variant_annotations: Annotations


def build_workers() -> WorkersSynthesized:
    app = App()
    stack = Stack(app, "Workers", synthesizer=BootstraplessSynthesizer())
    default = OrderedAgentQueue(
        stack,
        "Builds",
        handler="builds.run_tests",
        consumer=ContainerConsumer(image=ecs.ContainerImage.from_registry(IMAGE)),
    )
    variant_stack = Stack(app, "WorkersVariant")
    vpc = ec2.Vpc(variant_stack, "Vpc", max_azs=2, nat_gateways=1)
    cluster = ecs.Cluster(
        variant_stack, "Agents", vpc=vpc, container_insights_v2=ecs.ContainerInsights.ENABLED
    )
    variant = OrderedAgentQueue(
        variant_stack,
        "Builds",
        handler="builds.run_tests",
        encryption_key=kms.Key(variant_stack, "Key", enable_key_rotation=True),
        alarm_topic=sns.Topic(variant_stack, "Alarms"),
        architecture=lambda_.Architecture.ARM_64,
        slots=8,
        heartbeat_interval=Duration.seconds(20),
        max_job_duration=Duration.hours(3),
        consumer=ContainerConsumer(
            image=ecs.ContainerImage.from_registry(IMAGE),
            cluster=cluster,
            cpu=2048,
            memory_mib=8192,
            ephemeral_storage_gib=50,
            max_tasks=5,
            expected_groups=6,
        ),
    )
    return WorkersSynthesized(
        default=default,
        variant=variant,
        template=Template.from_stack(stack),
        variant_template=Template.from_stack(variant_stack),
        variant_annotations=Annotations.from_stack(variant_stack),
    )
