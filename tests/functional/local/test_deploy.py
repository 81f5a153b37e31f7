"""deploy(): the CDK CLI's command lines and environment, bootstrap detection, stack outputs.

The CLI is replaced by a small script that records how it was called; the AWS side is moto. The real
``cdk deploy`` into the emulator is the end-to-end test's job.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from constructs_fifo.local.aws import FAKE_CREDENTIALS, AwsTarget
from constructs_fifo.local.deploy import cdk_executable, deploy, readable_line, stack_outputs
from constructs_fifo.local.emulator import patches
from constructs_fifo.local.errors import (
    CdkCommandError,
    CdkNotFoundError,
    DeployError,
    StackNotFoundError,
    StackOutputsError,
)

REGION = "eu-west-1"
FAKE_CDK = """#!{python}
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_CDK_LOG"], "a") as log:
    keys = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_REGION", "CDK_DEFAULT_REGION")
    log.write(json.dumps({{"args": args, "env": {{k: os.environ.get(k) for k in keys}}}}) + "\\n")
if os.environ.get("FAKE_CDK_FAIL") and args[0] == "deploy":
    print("Error: the stack failed")
    sys.exit(3)
if args[0] == "deploy":
    # what jsii's Python runtime relays of its Node warnings: print(bytes) (aws/jsii issue 4065)
    print(b"!!  Node 20 is end-of-life  !!\\n")
    out = args[args.index("--outputs-file") + 1]
    outputs = {{}} if os.environ.get("FAKE_CDK_NO_OUTPUTS") else {{"QueueUrl": "http://q.fifo"}}
    with open(out, "w") as f:
        json.dump({{args[1]: outputs}}, f)
"""


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "cdk.json").write_text('{"app": "python app.py"}')
    return tmp_path


@pytest.fixture
def fake_cdk(tmp_path: Path) -> Path:
    script = tmp_path / "bin" / "cdk"
    script.parent.mkdir()
    script.write_text(FAKE_CDK.format(python=sys.executable))
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.fixture
def session() -> Iterator[boto3.Session]:
    with mock_aws():
        yield boto3.Session(aws_access_key_id="k", aws_secret_access_key="s", region_name=REGION)


@pytest.fixture
def fidelity_patches() -> Iterator[None]:
    """moto as the emulator serves it; reverted afterwards unless something applied it before."""
    already = patches.is_applied()
    patches.apply()
    yield
    if not already:
        patches.revert()


def _calls(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def _base_env(log: Path, **extra: str) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", ""), "FAKE_CDK_LOG": str(log), **extra}


def test_deploy_bootstraps_a_fresh_environment_then_deploys(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an endpoint with no CDKToolkit stack, reached with fake credentials
    log = tmp_path / "calls.jsonl"

    # WHEN the app is deployed to the endpoint
    outputs = deploy(
        app_dir,
        stack="AgentJobs",
        target=AwsTarget("http://localhost:4566", REGION, fake_credentials=True),
        env=_base_env(log),
        cdk=str(fake_cdk),
        cloudformation_client=session.client("cloudformation"),
        sts_client=session.client("sts"),
    )

    # THEN bootstrap ran for the endpoint's account, then deploy, with the endpoint and fake credentials
    calls = _calls(log)
    assert [c["args"][:2] for c in calls] == [
        ["bootstrap", f"aws://123456789012/{REGION}"],
        ["deploy", "AgentJobs"],
    ]
    assert calls[1]["args"][2:4] == ["--require-approval", "never"]
    assert "--outputs-file" in calls[1]["args"]
    for call in calls:
        assert call["env"] == {
            "AWS_ENDPOINT_URL": "http://localhost:4566",
            "AWS_ACCESS_KEY_ID": FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            "AWS_REGION": REGION,
            "CDK_DEFAULT_REGION": REGION,
        }
    assert outputs == {"QueueUrl": "http://q.fifo"}
    # AND this process's environment was not touched
    assert os.environ.get("AWS_ENDPOINT_URL") != "http://localhost:4566"


def test_deploy_skips_bootstrap_when_the_toolkit_stack_exists(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a bootstrapped environment
    session.client("cloudformation").create_stack(
        StackName="CDKToolkit",
        TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    log = tmp_path / "calls.jsonl"

    # WHEN the app is deployed
    deploy(
        app_dir,
        target=AwsTarget(None, REGION),
        env=_base_env(log),
        cdk=str(fake_cdk),
        cloudformation_client=session.client("cloudformation"),
        sts_client=session.client("sts"),
    )

    # THEN only deploy ran
    assert [c["args"][0] for c in _calls(log)] == ["deploy"]


def test_the_cdk_apps_bytes_lines_are_echoed_as_text(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a bootstrapped environment and a CDK app whose jsii warning comes out as Python bytes
    session.client("cloudformation").create_stack(
        StackName="CDKToolkit",
        TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}),
    )
    echoed: list[str] = []
    # WHEN the app is deployed
    deploy(
        app_dir,
        target=AwsTarget(None, REGION),
        env=_base_env(tmp_path / "calls.jsonl"),
        cdk=str(fake_cdk),
        echo=echoed.append,
        cloudformation_client=session.client("cloudformation"),
        sts_client=session.client("sts"),
    )
    # THEN the warning is echoed as the text it is, not as b'...'
    assert echoed == ["!!  Node 20 is end-of-life  !!"]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        ("b'!!  Node 20 !!\\n'\n", "!!  Node 20 !!\n"),
        ("b'caf\\xc3\\xa9'\n", "café\n"),
        ("b'not closed\n", "b'not closed\n"),
        ("b'\\x'\n", "b'\\x'\n"),
        ("deploying b'x'\n", "deploying b'x'\n"),
    ],
)
def test_readable_line_decodes_only_whole_bytes_literals(line: str, shown: str) -> None:
    # GIVEN a line of the CDK CLI's output WHEN made readable THEN only a whole b'...' literal is decoded
    assert readable_line(line) == shown


def test_a_failing_cdk_command_raises_with_its_output(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a CDK CLI whose deploy fails
    log = tmp_path / "calls.jsonl"
    env = _base_env(log, FAKE_CDK_FAIL="1")

    # WHEN the app is deployed THEN the error names the command, the status and the CLI's output
    with pytest.raises(CdkCommandError, match=r"deploy AgentJobs .* exited with status 3") as caught:
        deploy(
            app_dir,
            target=AwsTarget(None, REGION),
            env=env,
            cdk=str(fake_cdk),
            cloudformation_client=session.client("cloudformation"),
            sts_client=session.client("sts"),
        )
    assert "Error: the stack failed" in str(caught.value)


def test_deploy_refuses_a_directory_without_cdk_json(tmp_path: Path) -> None:
    # GIVEN a directory that is not a CDK app WHEN deployed THEN the error says what to pass
    with pytest.raises(DeployError, match=r"has no cdk\.json; it must be the CDK app's directory"):
        deploy(tmp_path, target=AwsTarget(None), cdk="cdk")


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_cdk_executable_takes_cdk_on_path_first(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a CDK CLI on PATH and another in the app's node_modules
    on_path = _executable(tmp_path / "bin" / "cdk")
    _executable(tmp_path / "app" / "node_modules" / ".bin" / "cdk")
    monkeypatch.setenv("PATH", str(on_path.parent))
    # WHEN the CLI is looked up THEN the one on PATH is used, as for any pip-installed tool
    assert cdk_executable(tmp_path / "app") == str(on_path)


def test_cdk_executable_falls_back_to_the_apps_node_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN no CDK CLI on PATH, and one in the app's node_modules
    local = _executable(tmp_path / "node_modules" / ".bin" / "cdk")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    # WHEN the CLI is looked up THEN that one is used
    assert cdk_executable(tmp_path) == str(local)


def test_cdk_executable_explains_how_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # GIVEN no CLI on PATH nor in the app
    monkeypatch.setenv("PATH", str(tmp_path))

    # WHEN it is looked up THEN the error names both places and how to install it, and nothing else
    with pytest.raises(CdkNotFoundError) as caught:
        cdk_executable(tmp_path)
    assert caught.value.message == (
        f"the AWS CDK CLI was not found (no `cdk` on PATH, no {tmp_path.resolve()}/node_modules/.bin/cdk); "
        "deploying needs it"
    )
    assert caught.value.fix == (
        f"install it: `npm install -g aws-cdk@2`, or `npm install aws-cdk@2` in {tmp_path.resolve()}"
    )


def test_stack_outputs_reads_outputs_and_names_missing_stacks(session: boto3.Session) -> None:
    # GIVEN a stack with two outputs
    cloudformation = session.client("cloudformation")
    template = {
        "Resources": {"B": {"Type": "AWS::S3::Bucket"}},
        "Outputs": {"A": {"Value": "1"}, "B": {"Value": {"Ref": "B"}}},
    }
    cloudformation.create_stack(StackName="AgentJobs", TemplateBody=json.dumps(template))

    # WHEN its outputs are read THEN both come back; a missing stack is named with the fix
    outputs = stack_outputs("AgentJobs", cloudformation_client=cloudformation)
    bucket = cloudformation.describe_stack_resources(StackName="AgentJobs")["StackResources"][0]
    assert outputs == {"A": "1", "B": bucket["PhysicalResourceId"]}
    with pytest.raises(
        StackNotFoundError, match=r"stack 'Nope' was not found .* Fix: run `constructs-fifo deploy`"
    ):
        stack_outputs("Nope", cloudformation_client=cloudformation)


def test_stack_outputs_of_a_change_set_stack_are_all_read(
    session: boto3.Session, fidelity_patches: None
) -> None:
    # GIVEN a stack created by executing a change set (what cdk deploy does), on moto with the
    # emulator's fidelity patches
    cloudformation = session.client("cloudformation")
    template = {
        "Resources": {"Bucket": {"Type": "AWS::S3::Bucket"}},
        "Outputs": {
            "Literal": {"Value": "x"},
            "BucketName": {"Value": {"Ref": "Bucket"}},
            "Arn": {"Value": {"Fn::GetAtt": ["Bucket", "Arn"]}},
            "Joined": {"Value": {"Fn::Join": ["/", ["b", {"Ref": "Bucket"}]]}},
        },
    }
    cloudformation.create_change_set(
        StackName="AgentJobs", ChangeSetName="cs", ChangeSetType="CREATE", TemplateBody=json.dumps(template)
    )
    cloudformation.execute_change_set(ChangeSetName="cs", StackName="AgentJobs")

    # WHEN its outputs are read
    outputs = stack_outputs("AgentJobs", cloudformation_client=cloudformation)

    # THEN every output comes back resolved, intrinsic functions included
    bucket = cloudformation.describe_stack_resources(StackName="AgentJobs")["StackResources"][0]
    name = bucket["PhysicalResourceId"]
    assert outputs == {
        "Literal": "x",
        "BucketName": name,
        "Arn": f"arn:aws:s3:::{name}",
        "Joined": f"b/{name}",
    }


def test_stack_outputs_of_a_stack_without_outputs_name_the_stack_and_the_fix(session: boto3.Session) -> None:
    # GIVEN a complete stack with no outputs
    cloudformation = session.client("cloudformation")
    template = {"Resources": {"B": {"Type": "AWS::S3::Bucket"}}}
    cloudformation.create_stack(StackName="Bare", TemplateBody=json.dumps(template))

    # WHEN its outputs are read THEN the error names the stack and how to fix it
    with pytest.raises(
        StackOutputsError, match=r"stack 'Bare' \(CREATE_COMPLETE\) has no outputs .* Fix: deploy the app"
    ) as caught:
        stack_outputs("Bare", cloudformation_client=cloudformation)
    assert "constructs-fifo local serve" in str(caught.value)


def test_deploying_a_stack_without_outputs_succeeds_with_none(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a bootstrapped environment and an app whose stack defines no outputs (the README's quickstart)
    cloudformation = session.client("cloudformation")
    cloudformation.create_stack(
        StackName="CDKToolkit", TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}})
    )
    cloudformation.create_stack(
        StackName="Quickstart", TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}})
    )
    log = tmp_path / "calls.jsonl"

    # WHEN it is deployed THEN the deploy succeeds and reports no outputs (a stack without outputs is normal)
    outputs = deploy(
        app_dir,
        stack="Quickstart",
        target=AwsTarget(None, REGION),
        env=_base_env(log, FAKE_CDK_NO_OUTPUTS="1"),
        cdk=str(fake_cdk),
        cloudformation_client=cloudformation,
        sts_client=session.client("sts"),
    )
    assert outputs == {}
