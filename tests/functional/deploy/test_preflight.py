"""observe(): the facts read from AWS (moto, and a Stubber for GetAccountSettings) and a cloud assembly."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from constructs_fifo.deploy.preflight import BOOTSTRAP_VERSION_PARAMETER
from constructs_fifo.deploy.preflight.facts import (
    AccountConcurrency,
    Bootstrap,
    CdkCli,
    Facts,
    StackConcurrency,
    Status,
    Unavailable,
)
from constructs_fifo.deploy.preflight.observe import observe, read_assembly
from constructs_fifo.deploy.preflight.verify import verify

REGION = "us-east-1"


@pytest.fixture
def session() -> Iterator[boto3.Session]:
    with mock_aws():
        yield boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name=REGION)


def _assembly(path: Path, reserved: list[int], *, requires: int = 6) -> Path:
    resources = {
        f"Fn{i}": {"Type": "AWS::Lambda::Function", "Properties": {"ReservedConcurrentExecutions": r}}
        for i, r in enumerate(reserved)
    }
    resources["Other"] = {"Type": "AWS::Lambda::Function", "Properties": {"Handler": "x.y"}}
    path.mkdir(parents=True, exist_ok=True)
    (path / "AgentJobs.template.json").write_text(json.dumps({"Resources": resources}))
    manifest = {
        "artifacts": {
            "AgentJobs.assets": {
                "type": "cdk:asset-manifest",
                "properties": {"requiresBootstrapStackVersion": 6},
            },
            "AgentJobs": {
                "type": "aws:cloudformation:stack",
                "properties": {
                    "templateFile": "AgentJobs.template.json",
                    "requiresBootstrapStackVersion": requires,
                },
            },
        }
    }
    (path / "manifest.json").write_text(json.dumps(manifest))
    return path


def _version(args: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.CompletedProcess(args, 0, stdout="2.1148.1 (build fcf5e34)\n", stderr="")


def _settings(limit: int) -> dict[str, Any]:
    return {
        "AccountLimit": {
            "TotalCodeSize": 80530636800,
            "CodeSizeUnzipped": 262144000,
            "CodeSizeZipped": 52428800,
            "ConcurrentExecutions": limit,
            "UnreservedConcurrentExecutions": limit,
        },
        "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": 0},
    }


def _observe(session: boto3.Session, assembly: Path | None, lambda_client: Any = None) -> Facts:
    return observe(
        target=f"AWS ({REGION})",
        region=REGION,
        endpoint_url=None,
        stack="AgentJobs",
        sts_client=session.client("sts"),
        cloudformation_client=session.client("cloudformation"),
        ssm_client=session.client("ssm"),
        lambda_client=lambda_client or session.client("lambda"),
        cdk="/opt/cdk",
        cdk_env={},
        assembly=assembly,
        known_regions=[REGION],
        run=_version,
    )


@pytest.mark.parametrize(("limit", "ok"), [(10, False), (50, False), (1000, True)])
def test_the_sample_reservation_against_accounts_of_10_50_and_1000(
    session: boto3.Session, tmp_path: Path, limit: int, ok: bool
) -> None:
    # GIVEN the sample's reservation (10 + 10) and Lambda answering GetAccountSettings for `limit`
    lambda_client = session.client("lambda")
    stubber = Stubber(lambda_client)
    stubber.add_response("get_account_settings", _settings(limit))
    # WHEN the facts are observed and verified
    with stubber:
        facts = _observe(session, _assembly(tmp_path / "cdk.out", [10, 10]), lambda_client)
    check = verify(facts)[-1]
    # THEN the account's numbers were read, and only the account of 1,000 holds the 20 reserved
    assert facts.account == AccountConcurrency(limit=limit, unreserved=limit)
    assert check.name == "concurrency"
    assert check.ok is ok
    if not ok:
        assert f"limit {limit}, unreserved {limit}" in check.message
        assert "--allow-unreserved" in check.fix and "L-B99A9384" in check.fix


def test_observe_on_moto_reads_identity_cdk_bootstrap_and_the_assembly(
    session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN moto with a CDKToolkit stack and its version parameter, and a synthesized stack
    session.client("cloudformation").create_stack(
        StackName="CDKToolkit", TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}})
    )
    session.client("ssm").put_parameter(Name=BOOTSTRAP_VERSION_PARAMETER, Value="29", Type="String")
    # WHEN observed
    facts = _observe(session, _assembly(tmp_path / "cdk.out", [3, 4], requires=30))
    # THEN each fact is read; moto's missing GetAccountSettings is "not implemented" (None), not a failure
    assert facts.identity.account == "123456789012"  # type: ignore[union-attr]
    assert facts.cdk == CdkCli("/opt/cdk", "2.1148.1")
    assert facts.bootstrap == Bootstrap(version=29, status="CREATE_COMPLETE")
    assert facts.account is None
    assert isinstance(facts.stack, StackConcurrency)
    assert dict(facts.stack.reserved) == {"Fn0": 3, "Fn1": 4}
    assert facts.stack.requires_bootstrap == 30
    # AND verify finds the bootstrap too old for the assembly, and nothing else
    assert [(c.name, c.status) for c in verify(facts) if not c.ok] == [("bootstrap", Status.PROBLEM)]


def test_what_the_deployed_stack_reserves_is_counted(session: boto3.Session, tmp_path: Path) -> None:
    # GIVEN the stack deployed with a function reserving 7
    role = session.client("iam").create_role(RoleName="r", AssumeRolePolicyDocument="{}")["Role"]["Arn"]
    template = {
        "Resources": {
            "Fn": {
                "Type": "AWS::Lambda::Function",
                "Properties": {
                    "FunctionName": "deployed-fn",
                    "Runtime": "python3.12",
                    "Handler": "x.y",
                    "Role": role,
                    "Code": {"ZipFile": "def y(e, c): pass"},
                    "ReservedConcurrentExecutions": 7,
                },
            }
        }
    }
    session.client("cloudformation").create_stack(StackName="AgentJobs", TemplateBody=json.dumps(template))
    # WHEN observed
    facts = _observe(session, _assembly(tmp_path / "cdk.out", [10]))
    # THEN the 7 it holds today count back (a deploy replaces them)
    assert isinstance(facts.stack, StackConcurrency)
    assert facts.stack.deployed_reserved == 7


def test_a_missing_assembly_or_stack_is_unavailable_with_the_reason(tmp_path: Path) -> None:
    # GIVEN no assembly, then an assembly without the stack
    assert isinstance(read_assembly(tmp_path / "nothing", "AgentJobs"), Unavailable)
    found = read_assembly(_assembly(tmp_path / "cdk.out", [1]), "Other")
    # THEN the reason names what is there
    assert isinstance(found, Unavailable)
    assert "has no stack 'Other' (it has ['AgentJobs'])" in found.reason


def test_a_cdk_cli_that_fails_is_unavailable(session: boto3.Session) -> None:
    # GIVEN a `cdk --version` that exits 1
    def failing(args: list[str], **_: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(args, 1, stdout="", stderr="node: not found")

    facts = observe(
        target="AWS",
        region=REGION,
        endpoint_url=None,
        stack="AgentJobs",
        sts_client=session.client("sts"),
        cloudformation_client=session.client("cloudformation"),
        ssm_client=session.client("ssm"),
        lambda_client=session.client("lambda"),
        cdk="/opt/cdk",
        cdk_env={},
        assembly=None,
        run=failing,
    )
    # THEN the fact says why, and the check is a problem
    assert facts.cdk == Unavailable("`/opt/cdk --version` exited with 1: node: not found")
    assert not verify(facts)[2].ok
