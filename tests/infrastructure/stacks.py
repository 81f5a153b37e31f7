"""The app shared by every template test (jsii starts Node once per process; synth is slow).

Stacks:

- ``AgentJobs``: the sample app's stack: ``Workspaces`` (state mode) and ``Notifications`` (claim mode,
  every other prop of the construct at its default, so the tests of the defaults read it); each
  construct's own resources are also a template of their own, ``AgentJobs/Workspaces`` and
  ``AgentJobs/Notifications`` (:func:`construct_template`);
- ``Variant``: every prop set to a non-default value (KMS key, alarm topic, max_concurrency, the
  CONTINUE policy, no dashboard ...);
- ``Risky``: valid but risky props (visibility < 6 x timeout, reserved_concurrency 1) for warnings;
- ``State``: state mode under CONTINUE with its settings, and a ``Reader`` role granted ``grant_read_state``;
- ``Placed``: the placement and platform props: an imported VPC (its private subnets, two security
  groups), arm64, active tracing, two layers, and an imported key (whose policy the stack cannot change).

Each stack also grants ``grant_enqueue`` to a producer role (``Producer``; in the sample stack, on the
``Notifications`` queue).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from aws_cdk import App, CfnElement, Duration, RemovalPolicy, Stack
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Template
from constructs import Construct

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode, OutcomeLines
from constructs_fifo.runtime.settings.choices import GapPolicy

REPO = Path(__file__).resolve().parents[2]


def load_sample_app() -> ModuleType:
    """Import the repository's ``app.py`` as a module (it is not a package)."""
    spec = importlib.util.spec_from_file_location("constructs_fifo_sample_app", REPO / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def construct_template(template: Template, construct: Construct) -> Template:
    """The resources of ``template`` that belong to ``construct`` (found by their logical ids)."""
    stack = Stack.of(construct)
    logical_ids = {
        stack.resolve(stack.get_logical_id(child))
        for child in construct.node.find_all()
        if isinstance(child, CfnElement)
    }
    resources: dict[str, Any] = {
        logical_id: resource
        for logical_id, resource in template.to_json()["Resources"].items()
        if logical_id in logical_ids
    }
    return Template.from_json({"Resources": resources})


@dataclass
class Synthesized:
    """The stacks, their constructs and templates."""

    app: App
    sample: Stack
    #: The sample's claim-mode queue, which keeps every other default of the construct.
    sample_jobs: OrderedAgentQueue
    #: The sample's state-mode queue.
    sample_workspaces: OrderedAgentQueue
    #: The table the sample's notifier writes (outside both constructs).
    sample_notification_table: dynamodb.Table
    variant: Stack
    variant_jobs: OrderedAgentQueue
    risky: Stack
    state_jobs: OrderedAgentQueue
    placed_jobs: OrderedAgentQueue
    templates: dict[str, Template]
    annotations: dict[str, Annotations]


def build_synthesized() -> Synthesized:
    app = App()
    sample_module = load_sample_app()
    sample = sample_module.AgentJobsStack(app, sample_module.STACK_NAME)
    iam.Role(sample, "Producer", assumed_by=iam.AccountRootPrincipal())
    sample.notifications.grant_enqueue(sample.node.find_child("Producer"))

    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    variant = Stack(app, "Variant")
    key = kms.Key(variant, "Key", enable_key_rotation=True)
    topic = sns.Topic(variant, "Topic", enforce_ssl=True, master_key=key)
    variant_jobs = OrderedAgentQueue(
        variant,
        "Jobs",
        code=code,
        handler="notifier.handle",
        batch_size=3,
        max_attempts=4,
        on_dead_job=DeadJobPolicy.CONTINUE,
        max_receive_count=40,
        timeout=Duration.seconds(30),
        visibility_timeout=Duration.minutes(5),
        reserved_concurrency=20,
        max_concurrency=5,
        claim_ttl=Duration.days(1),
        age_alarm_threshold=Duration.minutes(10),
        alarm_topic=topic,
        encryption_key=key,
        content_based_deduplication=True,
        table_removal_policy=RemovalPolicy.DESTROY,
        environment={"EXTRA": "1"},
        memory_size=512,
        backoff_base=Duration.seconds(5),
        metrics_namespace="Agents",
        outcome_lines=OutcomeLines.BATCH,
        dashboard=False,
    )
    producer = iam.Role(variant, "Producer", assumed_by=iam.AccountRootPrincipal())
    variant_jobs.grant_enqueue(producer)

    risky = Stack(app, "Risky")
    OrderedAgentQueue(
        risky,
        "Jobs",
        code=code,
        handler="notifier.handle",
        timeout=Duration.minutes(1),
        visibility_timeout=Duration.minutes(2),
        reserved_concurrency=1,
    )

    state = Stack(app, "State")
    state_jobs = OrderedAgentQueue(
        state,
        "Jobs",
        code=code,
        handler="agent_worker.apply_job",
        mode=JobMode.STATE,
        on_dead_job=DeadJobPolicy.CONTINUE,
        reorder_limit=50,
        gap_timeout=Duration.minutes(10),
        gap_policy=GapPolicy.SKIP_GAP,
    )
    state_jobs.grant_read_state(iam.Role(state, "Reader", assumed_by=iam.AccountRootPrincipal()))

    placed = Stack(app, "Placed")
    vpc = ec2.Vpc.from_vpc_attributes(
        placed,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["eu-west-1a", "eu-west-1b"],
        private_subnet_ids=["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"],
    )
    placed_jobs = OrderedAgentQueue(
        placed,
        "Jobs",
        code=code,
        handler="notifier.handle",
        vpc=vpc,
        vpc_subnets=ec2.SubnetSelection(subnet_type=ec2.SubnetType.PRIVATE_WITH_EGRESS),
        security_groups=[
            ec2.SecurityGroup.from_security_group_id(placed, f"Sg{i}", f"sg-0123456789abcdef{i}")
            for i in (0, 1)
        ],
        architecture=lambda_.Architecture.ARM_64,
        tracing=lambda_.Tracing.ACTIVE,
        layers=[
            lambda_.LayerVersion.from_layer_version_arn(
                placed, f"Layer{i}", f"arn:aws:lambda:eu-west-1:111111111111:layer:tools{i}:3"
            )
            for i in (0, 1)
        ],
        encryption_key=kms.Key.from_key_arn(
            placed,
            "ImportedKey",
            "arn:aws:kms:eu-west-1:111111111111:key/0123abcd-0000-0000-0000-000000000000",
        ),
    )

    stacks = {"AgentJobs": sample, "Variant": variant, "Risky": risky, "State": state, "Placed": placed}
    templates = {name: Template.from_stack(stack) for name, stack in stacks.items()}
    for queue in (sample.workspaces, sample.notifications, sample.accounts):
        templates[queue.node.path] = construct_template(templates["AgentJobs"], queue)
    return Synthesized(
        app=app,
        sample=sample,
        sample_jobs=sample.notifications,
        sample_workspaces=sample.workspaces,
        sample_notification_table=sample.notification_table,
        variant=variant,
        variant_jobs=variant_jobs,
        risky=risky,
        state_jobs=state_jobs,
        placed_jobs=placed_jobs,
        templates=templates,
        annotations={name: Annotations.from_stack(stack) for name, stack in stacks.items()},
    )
