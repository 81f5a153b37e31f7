"""docs/security.md: every scanner finding on the sample, in both configurations, is listed with why.

The sample app is synthesized once per configuration (without a key, and with ``-c encryption=kms``)
in a module-scoped fixture, with its cdk-nag packs; cfn-lint (informational rules included) reads the
same templates. In each configuration the findings must be exactly the rows of docs/security.md for
it: a new finding without a row fails, and so does a row nothing reports any more. A third, small
synth covers the rows of the ``vpc or tracing`` configuration (a queue with both props), a fourth those
of the ``container consumer`` (a queue with ``consumer=ContainerConsumer(...)``, its own cluster and VPC,
a task kept running, Fargate Spot mixed with on-demand Fargate, and shared storage).

checkov cannot be a development dependency (its ``packaging<24`` conflicts with pytest's
``packaging>=24``); its rows are checked only when a ``checkov`` is on ``PATH`` or the ``CHECKOV``
environment variable holds a command running one (``make scan`` sets it to checkov in a uv tool
environment of its own), on the same templates: one run for them all (each run starts checkov: ~10 s),
whose failed checks name their template.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cfnlint.api
import pytest
from aws_cdk import App, Stack, Validations
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_
from cdk_nag import AwsSolutionsChecks, ServerlessChecks
from cfnlint.api import ManualArgs

from constructs_fifo import ContainerConsumer, FargateCapacity, OrderedAgentQueue, SharedStorage

from .stacks import REPO, load_sample_app

SECURITY_DOC = REPO / "docs" / "security.md"
#: The configurations of the table: the sample without and with a key, and a queue with vpc and tracing.
WITHOUT_KEY, WITH_KEY, VPC_OR_TRACING = "without a key", "with a key", "vpc or tracing"
CONTAINERS = "container consumer"
LARGE_PAYLOADS = "large payloads"
#: A cluster's logical id in a cdk-nag rule name, as docs/security.md writes it (it names no hash).
_CLUSTER_ID = re.compile(r"<[A-Za-z0-9]*Cluster[0-9A-F]{8}>")
_ROW = re.compile(r"^\| (checkov|cdk-nag|cfn-lint) \| `([^`]+)` \| ([^|]+) \|", re.MULTILINE)


def documented(scanner: str, configuration: str) -> set[str]:
    """The rule ids docs/security.md lists for ``scanner`` in ``configuration`` (``both`` counts in both)."""
    found: set[str] = set()
    for row in _ROW.finditer(SECURITY_DOC.read_text()):
        name, rule, where = row.group(1), row.group(2), row.group(3).strip()
        both = where == "both" and configuration in (WITHOUT_KEY, WITH_KEY)
        if name == scanner and (where == configuration or both):
            found.add(rule)
    return found


@dataclass(frozen=True)
class Scanned:
    """One synthesized configuration: its template file and the cdk-nag findings it acknowledged."""

    template: Path
    nag_acknowledged: set[str]
    nag_open: list[str]


def _synth(outdir: Path, app: App, stack_name: str) -> Scanned:
    app.synth()
    report = json.loads((outdir / "validation-report.json").read_text())
    acknowledged = {
        _CLUSTER_ID.sub("<Cluster>", s["ruleName"])
        for p in report["pluginReports"]
        for s in p.get("suppressedViolations", [])
    }
    open_findings = [v["ruleName"] for p in report["pluginReports"] for v in p["violations"]]
    return Scanned(outdir / f"{stack_name}.template.json", acknowledged, open_findings)


@pytest.fixture(scope="module")
def scanned(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Scanned]]:
    """The sample in both configurations, and a queue with vpc and tracing, each synthesized once."""
    sample = load_sample_app()
    # The context `cdk synth` reads from cdk.json (feature flags),
    # and the metadata the CLI asks for: the template users deploy, as `cdk synth` writes it.
    flags: dict[str, Any] = {
        **json.loads((REPO / "cdk.json").read_text()).get("context", {}),
        "aws:cdk:enable-path-metadata": True,
        "aws:cdk:enable-asset-metadata": True,
    }
    results: dict[str, Scanned] = {}
    for configuration, context in (
        (WITHOUT_KEY, flags),
        (WITH_KEY, {**flags, sample.ENCRYPTION_CONTEXT: sample.ENCRYPTION_KMS}),
    ):
        outdir = tmp_path_factory.mktemp("scan")
        app = sample.build_app(App(outdir=str(outdir), context=context))
        results[configuration] = _synth(outdir, app, sample.STACK_NAME)

    outdir = tmp_path_factory.mktemp("scan")
    app = App(outdir=str(outdir), context=flags)
    stack = Stack(app, "Placed")
    vpc = ec2.Vpc.from_vpc_attributes(
        stack,
        "Vpc",
        vpc_id="vpc-0123456789abcdef0",
        availability_zones=["eu-west-1a"],
        private_subnet_ids=["subnet-0123456789abcdef0"],
    )
    jobs = OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        vpc=vpc,
        tracing=lambda_.Tracing.ACTIVE,
    )
    Validations.of(jobs.function).acknowledge(*sample.FUNCTION_ACKNOWLEDGEMENTS)
    Validations.of(jobs.dead_letter_queue).acknowledge(*sample.DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    results[VPC_OR_TRACING] = _synth(outdir, app, "Placed")

    outdir = tmp_path_factory.mktemp("scan")
    app = App(outdir=str(outdir), context=flags)
    stack = Stack(app, "Workers")
    workers = OrderedAgentQueue(
        stack,
        "Builds",
        handler="builds.run_tests",
        consumer=ContainerConsumer(
            image=ecs.ContainerImage.from_registry("public.ecr.aws/example/worker:1"),
            min_tasks=1,
            capacity=FargateCapacity(on_demand_base=1, on_demand_weight=1, spot_weight=3),
            shared_storage=SharedStorage(path="/workspaces"),
        ),
    )
    Validations.of(workers.dead_letter_queue).acknowledge(*sample.DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    results[CONTAINERS] = _synth(outdir, app, "Workers")

    outdir = tmp_path_factory.mktemp("scan")
    app = App(outdir=str(outdir), context=flags)
    stack = Stack(app, "Large")
    large = OrderedAgentQueue(
        stack,
        "Jobs",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        large_payloads=True,
    )
    Validations.of(large.function).acknowledge(*sample.FUNCTION_ACKNOWLEDGEMENTS)
    Validations.of(large.dead_letter_queue).acknowledge(*sample.DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    Validations.of(app).add_plugins(AwsSolutionsChecks(app), ServerlessChecks(app))
    results[LARGE_PAYLOADS] = _synth(outdir, app, "Large")
    yield results


def _cfn_lint_rules(template: Path) -> set[str]:
    matches = cfnlint.api.lint_file(template, config=ManualArgs(include_checks=["I"]))
    return {m.rule.id for m in matches}


@pytest.mark.parametrize("configuration", [WITHOUT_KEY, WITH_KEY])
def test_every_cdk_nag_finding_on_the_sample_is_acknowledged_and_documented(
    scanned: dict[str, Scanned], configuration: str
) -> None:
    # GIVEN the sample synthesized in one configuration, with its cdk-nag packs
    result = scanned[configuration]
    # THEN no finding is open, and the acknowledged ones are exactly the documented rows (the sample's
    # build queue runs on container workers: the container consumer's rows too)
    assert result.nag_open == []
    assert result.nag_acknowledged == documented("cdk-nag", configuration) | documented("cdk-nag", CONTAINERS)


def test_vpc_and_tracing_add_only_the_documented_acknowledged_wildcard(scanned: dict[str, Scanned]) -> None:
    # GIVEN a queue with vpc and active tracing, acknowledged as the sample is
    result = scanned[VPC_OR_TRACING]
    # THEN the construct's own acknowledgements cover the role's wildcards (EC2's Describe actions and
    # X-Ray's on *, the network-interface actions on the account's interfaces); nothing is left open
    assert result.nag_open == []
    extra = result.nag_acknowledged - documented("cdk-nag", WITH_KEY)
    assert extra == documented("cdk-nag", VPC_OR_TRACING)
    assert extra == {
        "AwsSolutions-IAM5[Resource::*]",
        "AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:ec2:<AWS::Region>:<AWS::AccountId>:"
        "network-interface/*]",
    }


def test_the_container_consumer_adds_only_its_documented_acknowledgements(
    scanned: dict[str, Scanned],
) -> None:
    # GIVEN a queue with the container consumer, its dead-letter queue acknowledged as the sample's is
    result = scanned[CONTAINERS]
    # THEN nothing is open, and the construct's own acknowledgements are exactly the documented rows
    assert result.nag_open == []
    extra = result.nag_acknowledged - documented("cdk-nag", WITH_KEY)
    assert extra == documented("cdk-nag", CONTAINERS)


def test_large_payloads_add_only_the_documented_acknowledgements(scanned: dict[str, Scanned]) -> None:
    # GIVEN a queue with large_payloads=True, acknowledged as the sample is
    result = scanned[LARGE_PAYLOADS]
    # THEN nothing is open, and the bucket's own acknowledgements (no access log; its objects' wildcard)
    # are exactly the documented rows
    assert result.nag_open == []
    extra = result.nag_acknowledged - documented("cdk-nag", WITH_KEY)
    assert extra == documented("cdk-nag", LARGE_PAYLOADS)
    # AND cfn-lint finds nothing the sample's rows do not list (the bucket adds none)
    assert _cfn_lint_rules(result.template) == documented("cfn-lint", WITHOUT_KEY)


def test_every_cfn_lint_finding_on_the_container_consumer_is_documented(scanned: dict[str, Scanned]) -> None:
    # GIVEN the container stack's template WHEN cfn-lint checks it THEN its findings are the documented rows
    rules = _cfn_lint_rules(scanned[CONTAINERS].template)
    assert rules == documented("cfn-lint", CONTAINERS)
    assert not [r for r in rules if r.startswith("E") or r.startswith("W")]


@pytest.mark.parametrize("configuration", [WITHOUT_KEY, WITH_KEY])
def test_every_cfn_lint_finding_on_the_sample_is_documented(
    scanned: dict[str, Scanned], configuration: str
) -> None:
    # GIVEN the sample's template WHEN cfn-lint checks it with every rule, informational ones included
    rules = _cfn_lint_rules(scanned[configuration].template)
    # THEN its findings are exactly the documented rows (no error among them)
    assert rules == documented("cfn-lint", configuration)
    assert not [r for r in rules if r.startswith("E")]


def _checkov() -> str | None:
    return os.environ.get("CHECKOV") or shutil.which("checkov")


#: The configurations with checkov rows in docs/security.md.
CHECKOV_CONFIGURATIONS = (WITHOUT_KEY, WITH_KEY, VPC_OR_TRACING, CONTAINERS)


@pytest.fixture(scope="module")
def checkov_failed(scanned: dict[str, Scanned]) -> dict[str, set[str]]:
    """checkov's failed checks on each of :data:`CHECKOV_CONFIGURATIONS`' templates, by configuration:
    one run for all of them (one ``-f`` each), each failed check read back to its template by its path."""
    checkov = _checkov()
    assert checkov is not None
    templates = {str(scanned[c].template.resolve()): c for c in CHECKOV_CONFIGURATIONS}
    files = [argument for template in templates for argument in ("-f", template)]
    result = subprocess.run(
        [*shlex.split(checkov), *files, "--framework", "cloudformation", "-o", "json", "--quiet"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    report: Any = json.loads(result.stdout)
    failed: dict[str, set[str]] = {configuration: set() for configuration in CHECKOV_CONFIGURATIONS}
    for check in report["results"]["failed_checks"]:
        failed[templates[str(Path(check["file_abs_path"]).resolve())]].add(check["check_id"])
    return failed


@pytest.mark.skipif(
    _checkov() is None,
    reason="no checkov on PATH or in CHECKOV (it cannot share the dev venv: packaging<24); `make scan`",
)
@pytest.mark.parametrize("configuration", CHECKOV_CONFIGURATIONS)
def test_every_checkov_failure_on_the_sample_is_documented(
    checkov_failed: dict[str, set[str]], configuration: str
) -> None:
    # GIVEN the sample's template WHEN checkov checks it THEN its failures are exactly the documented rows
    assert checkov_failed[configuration] == documented("checkov", configuration)
