"""docs/security.md's ``ingress`` rows: what cdk-nag and cfn-lint report on the ingress constructs.

One stack feeds a state-mode queue by all three ways in (a pipe from a custom classic bus, an SNS FIFO
topic, a Custom Event Bus subscriber), synthesized without and with the queue's key, with both cdk-nag
packs; the queue itself is acknowledged as the sample is. Only findings on the ingress constructs'
resources count: they must be exactly the ``ingress`` rows, every one acknowledged by the construct.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import cfnlint.api
import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_events as events
from aws_cdk import aws_eventsv2 as eventsv2
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs

from constructs_fifo import CustomBusIngress, EventBusIngress, JobMode, OrderedAgentQueue, SnsFifoIngress

from .stacks import REPO, load_sample_app
from .test_security import documented

INGRESS = "ingress"
STACK = "Ingress"
#: The queue's own resources: scanned with the sample, not here.
QUEUE_PATH = f"{STACK}/Jobs/"


def _synth(outdir: Path, *, keyed: bool) -> tuple[dict[str, Any], Path]:
    sample = load_sample_app()
    context = {
        **json.loads((REPO / "cdk.json").read_text()).get("context", {}),
        "aws:cdk:enable-path-metadata": True,
    }
    app = App(outdir=str(outdir), context=context)
    stack = Stack(app, STACK)
    key = kms.Key(stack, "Key", enable_key_rotation=True) if keyed else None
    jobs = OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="agent_worker.apply_job",
        mode=JobMode.STATE,
        encryption_key=key,
    )
    Validations.of(jobs.function).acknowledge(*sample.FUNCTION_ACKNOWLEDGEMENTS)
    Validations.of(jobs.dead_letter_queue).acknowledge(*sample.DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    EventBusIngress(
        stack,
        "Events",
        queue=jobs,
        event_bus=events.EventBus(stack, "Bus", event_bus_name="accounts"),
        event_pattern=events.EventPattern(source=["accounts"]),
        group_path="$.detail.accountId",
        seq_path="$.detail.version",
        job_id_path="$.detail.eventId",
        job_type_path="$.detail-type",
    )
    SnsFifoIngress(
        stack,
        "Topic",
        queue=jobs,
        topic=sns.Topic(stack, "Fifo", fifo=True, enforce_ssl=True, master_key=key),
    )
    CustomBusIngress(
        stack,
        "Custom",
        queue=jobs,
        event_bus=eventsv2.CfnEventBus(stack, "CustomBus", name="accounts"),
        group_expression="$events.Data.detail.accountId",
        job_type="account_event",
    )
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    app.synth()
    report = json.loads((outdir / "validation-report.json").read_text())
    return report, outdir / f"{STACK}.template.json"


def _ingress_rules(violations: list[dict[str, Any]]) -> set[str]:
    return {
        v["ruleName"]
        for v in violations
        if any(not c["constructPath"].startswith(QUEUE_PATH) for c in v["violatingConstructs"])
    }


@pytest.fixture(scope="module", params=[False, True], ids=["without a key", "with a key"])
def scanned(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict[str, Any], Path]:
    return _synth(tmp_path_factory.mktemp("ingress"), keyed=request.param)


def test_every_cdk_nag_finding_on_the_ingress_is_acknowledged_and_documented(
    scanned: tuple[dict[str, Any], Path],
) -> None:
    # GIVEN the three ways in, synthesized with both cdk-nag packs
    report, _ = scanned
    plugins = report["pluginReports"]
    # THEN nothing is open, and what the constructs acknowledged is exactly the documented rows
    assert [v["ruleName"] for p in plugins for v in p["violations"]] == []
    suppressed = [v for p in plugins for v in p.get("suppressedViolations", [])]
    assert _ingress_rules(suppressed) == documented("cdk-nag", INGRESS)


def test_cfn_lint_finds_nothing_on_the_ingress(scanned: tuple[dict[str, Any], Path]) -> None:
    # GIVEN the template WHEN cfn-lint checks it with every rule, informational ones included
    _, template_path = scanned
    resources = json.loads(template_path.read_text())["Resources"]
    matches = cfnlint.api.lint_file(template_path, config=ManualArgs(include_checks=["I"]))
    on_ingress = {
        m.rule.id
        for m in matches
        if len(m.path) > 1
        and not str(resources.get(m.path[1], {}).get("Metadata", {}).get("aws:cdk:path", "")).startswith(
            QUEUE_PATH
        )
    }
    # THEN the ingress resources add no finding (the queue's own are the sample's rows)
    assert on_ingress == documented("cfn-lint", INGRESS) == set()
