"""The app shared by every template test (jsii starts Node once per process; synth is slow).

Stacks:

- ``AgentJobs``: the sample app's stack, all defaults of the construct;
- ``Variant``: every prop set to a non-default value (KMS key, alarm topic, max_concurrency, the
  CONTINUE policy ...);
- ``Risky``: valid but risky props (visibility < 6 x timeout, reserved_concurrency 1) for warnings;
- ``State``: state mode under CONTINUE with its settings, and a ``Reader`` role granted ``grant_read_state``.

Each stack also grants ``grant_enqueue`` to a producer role (``Producer``).
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from aws_cdk import App, Duration, RemovalPolicy, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from aws_cdk.assertions import Annotations, Template

from constructs_fifo import OrderedAgentQueue
from constructs_fifo.runtime.constants import DeadJobPolicy, JobMode
from constructs_fifo.runtime.transitions import GapPolicy

REPO = Path(__file__).resolve().parents[2]


def load_sample_app() -> ModuleType:
    """Import the repository's ``app.py`` as a module (it is not a package)."""
    spec = importlib.util.spec_from_file_location("constructs_fifo_sample_app", REPO / "app.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Synthesized:
    """The stacks, their constructs and templates."""

    app: App
    sample: Stack
    sample_jobs: OrderedAgentQueue
    variant: Stack
    variant_jobs: OrderedAgentQueue
    risky: Stack
    state_jobs: OrderedAgentQueue
    templates: dict[str, Template]
    annotations: dict[str, Annotations]


def build_synthesized() -> Synthesized:
    app = App()
    sample_module = load_sample_app()
    sample = sample_module.AgentJobsStack(app, sample_module.STACK_NAME)
    iam.Role(sample, "Producer", assumed_by=iam.AccountRootPrincipal())
    sample.jobs.grant_enqueue(sample.node.find_child("Producer"))

    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    variant = Stack(app, "Variant")
    key = kms.Key(variant, "Key", enable_key_rotation=True)
    topic = sns.Topic(variant, "Topic", enforce_ssl=True, master_key=key)
    variant_jobs = OrderedAgentQueue(
        variant,
        "Jobs",
        code=code,
        handler="workers.agent.handle",
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
    )
    producer = iam.Role(variant, "Producer", assumed_by=iam.AccountRootPrincipal())
    variant_jobs.grant_enqueue(producer)

    risky = Stack(app, "Risky")
    OrderedAgentQueue(
        risky,
        "Jobs",
        code=code,
        handler="agent_worker.handle",
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

    stacks = {"AgentJobs": sample, "Variant": variant, "Risky": risky, "State": state}
    return Synthesized(
        app=app,
        sample=sample,
        sample_jobs=sample.jobs,
        variant=variant,
        variant_jobs=variant_jobs,
        risky=risky,
        state_jobs=state_jobs,
        templates={name: Template.from_stack(stack) for name, stack in stacks.items()},
        annotations={name: Annotations.from_stack(stack) for name, stack in stacks.items()},
    )
