"""deploy(): the CDK CLI's command lines and environment, bootstrap detection, stack outputs.

The CLI is replaced by a small script that records how it was called; the AWS side is moto. The real
``cdk deploy`` into the emulator is the end-to-end test's job.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws

from constructs_fifo.deploy.cdk import cdk_executable, deploy, readable_line, stack_outputs
from constructs_fifo.deploy.preflight import BOOTSTRAP_VERSION_PARAMETER
from constructs_fifo.deploy.preflight.facts import Check
from constructs_fifo.local.emulator import patches
from constructs_fifo.stacks.aws import FAKE_CREDENTIALS, AwsTarget
from constructs_fifo.stacks.errors import (
    CdkCommandError,
    CdkNotFoundError,
    DeployError,
    PreflightError,
    StackChoiceError,
    StackNotFoundError,
    StackOutputsError,
)
from constructs_fifo.stacks.node_env import quiet_node

REGION = "eu-west-1"
FAKE_CDK = """#!{python}
import json, os, sys
args = sys.argv[1:]
if args == ["--version"]:
    print("2.1148.1 (build fake)")
    sys.exit(0)
with open(os.environ["FAKE_CDK_LOG"], "a") as log:
    keys = ("AWS_ENDPOINT_URL", "AWS_ACCESS_KEY_ID", "AWS_REGION", "CDK_DEFAULT_REGION")
    quiet = [k for k in os.environ if k.startswith(("JSII_SILENCE_", "AWS_SDK_JS_NODE_"))]
    log.write(json.dumps({{"args": args, "env": {{k: os.environ.get(k) for k in keys}},
                          "quiet": {{k: os.environ[k] for k in quiet}},
                          "cdk_home": os.environ.get("CDK_HOME")}}) + "\\n")
if args[0] in ("bootstrap", "deploy") and os.environ.get("CDK_HOME"):
    # The real CLI caches access key id -> account in $CDK_HOME/cache/accounts_partitions.json and
    # refuses credentials whose cached account differs from the environment's.
    cache = os.path.join(os.environ["CDK_HOME"], "cache", "accounts_partitions.json")
    key, account = os.environ.get("AWS_ACCESS_KEY_ID"), os.environ.get("FAKE_CDK_ACCOUNT", "123456789012")
    known = json.load(open(cache)) if os.path.exists(cache) else {{}}
    if key in known and known[key]["accountId"] != account:
        print("IncorrectDefaultCredentials: cached account " + known[key]["accountId"])
        sys.exit(1)
    os.makedirs(os.path.dirname(cache), exist_ok=True)
    json.dump({{**known, key: {{"accountId": account, "partition": "aws"}}}}, open(cache, "w"))
if os.environ.get("FAKE_CDK_FAIL") and args[0] == "deploy":
    print("Error: the stack failed")
    sys.exit(3)
if args[0] == "synth":
    # every stack of the app is synthesized, a selector or not (as the real CLI does); a selector
    # naming none of them fails as the real CLI's does
    stacks = os.environ.get("FAKE_CDK_STACKS", "AgentJobs").split(",")
    queued = os.environ.get("FAKE_CDK_QUEUED", stacks[0]).split(",")
    out = args[args.index("--output") + 1]
    unreserved = "constructs-fifo:unreserved=true" in args and not os.environ.get("FAKE_CDK_DEAF")
    reserved = [] if unreserved else [int(r) for r in os.environ.get("FAKE_CDK_RESERVED", "10,10").split(",")]
    os.makedirs(out, exist_ok=True)
    artifacts = {{}}
    for stack in stacks:
        variables = {{"CONSTRUCTS_FIFO_MODE": "claim"}} if stack in queued else {{}}
        resources = {{f"Fn{{i}}": {{"Type": "AWS::Lambda::Function", "Properties": {{
            "ReservedConcurrentExecutions": r, "Environment": {{"Variables": variables}}}}}}
                     for i, r in enumerate(reserved)}}
        json.dump({{"Resources": resources}}, open(os.path.join(out, stack + ".template.json"), "w"))
        artifacts[stack] = {{"type": "aws:cloudformation:stack", "properties": {{
            "templateFile": stack + ".template.json", "requiresBootstrapStackVersion": 6}}}}
    json.dump({{"artifacts": artifacts}}, open(os.path.join(out, "manifest.json"), "w"))
    if not args[1].startswith("-") and args[1] not in stacks:
        print("No stacks match the name(s) " + args[1])
        sys.exit(1)
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


def _clients(session: boto3.Session) -> dict[str, Any]:
    return {
        name: session.client(service)  # type: ignore[call-overload]
        for name, service in (
            ("cloudformation_client", "cloudformation"),
            ("sts_client", "sts"),
            ("ssm_client", "ssm"),
            ("lambda_client", "lambda"),
        )
    }


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
        **_clients(session),
    )

    # THEN the app was synthesized, bootstrap ran for the endpoint's account, then deploy of the
    # synthesized assembly, with the endpoint and fake credentials
    calls = _calls(log)
    assert [c["args"][:2] for c in calls] == [
        ["synth", "AgentJobs"],
        ["bootstrap", f"aws://123456789012/{REGION}"],
        ["deploy", "AgentJobs"],
    ]
    assert calls[2]["args"][2:6] == ["--app", str(app_dir / "cdk.out"), "--require-approval", "never"]
    assert "--outputs-file" in calls[2]["args"]
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

    session.client("ssm").put_parameter(Name=BOOTSTRAP_VERSION_PARAMETER, Value="29", Type="String")

    # WHEN the app is deployed
    deploy(
        app_dir, target=AwsTarget(None, REGION), env=_base_env(log), cdk=str(fake_cdk), **_clients(session)
    )

    # THEN only synth and deploy ran
    assert [c["args"][0] for c in _calls(log)] == ["synth", "deploy"]


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
        stack="AgentJobs",
        target=AwsTarget(None, REGION),
        env=_base_env(tmp_path / "calls.jsonl"),
        cdk=str(fake_cdk),
        echo=echoed.append,
        check=False,  # the preflight is not this test's subject
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
            check=False,
            **_clients(session),
        )
    assert "Error: the stack failed" in str(caught.value)


def _account_settings(limit: int, unreserved: int | None = None) -> dict[str, Any]:
    return {
        "AccountLimit": {
            "TotalCodeSize": 80530636800,
            "CodeSizeUnzipped": 262144000,
            "CodeSizeZipped": 52428800,
            "ConcurrentExecutions": limit,
            "UnreservedConcurrentExecutions": limit if unreserved is None else unreserved,
        },
        "AccountUsage": {"TotalCodeSize": 0, "FunctionCount": 0},
    }


def _small_account(session: boto3.Session, limit: int) -> dict[str, Any]:
    """Clients of moto, but Lambda answering GetAccountSettings for an account with ``limit``."""
    clients = _clients(session)
    stubber = Stubber(clients["lambda_client"])
    stubber.add_response("get_account_settings", _account_settings(limit))
    stubber.activate()
    return clients


def test_deploy_refuses_before_cdk_deploy_on_an_account_too_small_for_the_reservation(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a new account whose Lambda concurrency limit is 10, and an app reserving 10 + 10
    log = tmp_path / "calls.jsonl"
    lines: list[Check] = []

    # WHEN the app is deployed
    with pytest.raises(PreflightError) as caught:
        deploy(
            app_dir,
            target=AwsTarget("http://localhost:4566", REGION, fake_credentials=True),
            env=_base_env(log),
            cdk=str(fake_cdk),
            report=lines.append,
            **_small_account(session, 10),
        )

    # THEN only synth ran: no bootstrap, no cdk deploy, nothing for CloudFormation to roll back
    assert [c["args"][0] for c in _calls(log)] == ["synth"]
    # AND the error has the numbers and both fixes, and every check was reported
    message = caught.value.one_line()
    assert "reserves 20 concurrent executions (Fn0 10, Fn1 10) but the account can reserve 0" in message
    assert "limit 10, unreserved 10, 10 must stay unreserved" in message
    assert "quota of at least 120" in message
    assert "constructs-fifo deploy --allow-unreserved" in message
    assert [(c.name, c.status) for c in lines] == [
        ("identity", "ok"),
        ("region", "ok"),
        ("cdk-cli", "ok"),
        ("bootstrap", "ok"),
        ("concurrency", "problem"),
    ]


def test_allow_unreserved_synthesizes_again_without_reservation_and_deploys(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an account with a limit of 50 and an app reserving 20, deployed with --allow-unreserved
    log = tmp_path / "calls.jsonl"
    lines: list[Check] = []

    # WHEN the app is deployed
    deploy(
        app_dir,
        target=AwsTarget("http://localhost:4566", REGION, fake_credentials=True),
        env=_base_env(log),
        cdk=str(fake_cdk),
        allow_unreserved=True,
        report=lines.append,
        **_small_account(session, 50),
    )

    # THEN the app was synthesized again with the context, and that assembly was deployed
    calls = [c["args"] for c in _calls(log)]
    assert [c[0] for c in calls] == ["synth", "synth", "bootstrap", "deploy"]
    assert calls[1][-2:] == ["--context", "constructs-fifo:unreserved=true"]
    concurrency = lines[-1]
    assert concurrency.ok
    assert "reserves no concurrency (synthesized with constructs-fifo:unreserved=true)" in concurrency.message


def test_allow_unreserved_refuses_an_app_that_ignores_the_context(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an app that reserves concurrency whatever its context says, on an account limited to 10
    log = tmp_path / "calls.jsonl"
    # WHEN deployed with --allow-unreserved THEN it stops before deploying and says what the app lacks
    with pytest.raises(PreflightError, match=r"the app does not read that context"):
        deploy(
            app_dir,
            target=AwsTarget("http://localhost:4566", REGION, fake_credentials=True),
            env=_base_env(log, FAKE_CDK_DEAF="1"),
            cdk=str(fake_cdk),
            allow_unreserved=True,
            **_small_account(session, 10),
        )
    assert [c["args"][0] for c in _calls(log)] == ["synth", "synth"]


def test_deploy_to_an_endpoint_ignores_a_cdk_cache_naming_another_account(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a CDK cache written by another emulator (LocalStack: the fake key is account 000000000000)
    theirs = tmp_path / "their-cdk-home"
    cache = theirs / "cache" / "accounts_partitions.json"
    cache.parent.mkdir(parents=True)
    stale = {FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"]: {"accountId": "000000000000", "partition": "aws"}}
    cache.write_text(json.dumps(stale))
    log = tmp_path / "calls.jsonl"
    # (the CLI stand-in refuses that cache, as the real CLI does: the negative control)
    refused = subprocess.run(
        [str(fake_cdk), "bootstrap", "aws://123456789012/eu-west-1"],
        env={**_base_env(log), **FAKE_CREDENTIALS, "CDK_HOME": str(theirs)},
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 1 and "IncorrectDefaultCredentials" in refused.stdout
    log.unlink()

    # WHEN the app is deployed to moto's endpoint with that cache as the user's CDK_HOME
    deploy(
        app_dir,
        target=AwsTarget("http://localhost:4566", REGION, fake_credentials=True),
        env=_base_env(log, CDK_HOME=str(theirs)),
        cdk=str(fake_cdk),
        **_clients(session),
    )

    # THEN bootstrap and deploy ran with a CDK home of their own (one for the whole deploy), and the
    # user's cache is untouched
    homes = {c["cdk_home"] for c in _calls(log)}
    assert len(homes) == 1 and str(theirs) not in homes and None not in homes
    assert json.loads(cache.read_text()) == stale


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
        env=_base_env(log, FAKE_CDK_NO_OUTPUTS="1", FAKE_CDK_STACKS="Quickstart"),
        cdk=str(fake_cdk),
        check=False,  # the preflight is not this test's subject
        cloudformation_client=cloudformation,
        sts_client=session.client("sts"),
    )
    assert outputs == {}


def test_deploy_without_a_stack_takes_the_apps_stack_holding_the_queue(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an app whose stacks are Network and Jobs, only Jobs holding an OrderedAgentQueue
    session.client("cloudformation").create_stack(
        StackName="CDKToolkit", TemplateBody=json.dumps({"Resources": {"B": {"Type": "AWS::S3::Bucket"}}})
    )
    log = tmp_path / "calls.jsonl"
    echoed: list[str] = []
    # WHEN it is deployed with no stack named
    deploy(
        app_dir,
        target=AwsTarget(None, REGION),
        env=_base_env(log, FAKE_CDK_STACKS="Network,Jobs", FAKE_CDK_QUEUED="Jobs"),
        cdk=str(fake_cdk),
        echo=echoed.append,
        check=False,
        cloudformation_client=session.client("cloudformation"),
        sts_client=session.client("sts"),
    )
    # THEN the whole app was synthesized, and Jobs (not the sample's AgentJobs) deployed, as it said
    assert [c["args"][:2] for c in _calls(log)] == [["synth", "--quiet"], ["deploy", "Jobs"]]
    assert "stack Jobs: the app's stack that holds an OrderedAgentQueue" in echoed


def test_deploy_without_a_stack_refuses_an_app_with_several_naming_them(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an app with two stacks, each holding an OrderedAgentQueue
    log = tmp_path / "calls.jsonl"
    # WHEN it is deployed with no stack named THEN it refuses before cdk deploy, naming both and the fix
    with pytest.raises(StackChoiceError) as raised:
        deploy(
            app_dir,
            target=AwsTarget(None, REGION),
            env=_base_env(log, FAKE_CDK_STACKS="Blue,Green", FAKE_CDK_QUEUED="Blue,Green"),
            cdk=str(fake_cdk),
            check=False,
            **_clients(session),
        )
    assert raised.value.one_line().startswith("several stacks hold an OrderedAgentQueue: Blue, Green (")
    assert raised.value.fix == "pass --stack NAME, e.g. --stack Blue"
    assert [c["args"][0] for c in _calls(log)] == ["synth"]


def test_deploy_of_a_stack_the_app_does_not_define_names_the_apps_stacks(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN an app whose one stack is Jobs
    log = tmp_path / "calls.jsonl"
    # WHEN the sample's stack is deployed from it THEN one error names the app's stacks, not CDK's output
    with pytest.raises(StackChoiceError) as raised:
        deploy(
            app_dir,
            stack="AgentJobs",
            target=AwsTarget(None, REGION),
            env=_base_env(log, FAKE_CDK_STACKS="Jobs"),
            cdk=str(fake_cdk),
            check=False,
            **_clients(session),
        )
    assert "has no stack 'AgentJobs' (its stacks: Jobs)" in raised.value.message


def _fake_node(directory: Path, version: str) -> Path:
    node = directory / "node"
    directory.mkdir()
    node.write_text(f"#!{sys.executable}\nprint({version!r})\n")
    node.chmod(node.stat().st_mode | stat.S_IEXEC)
    return node


def test_every_cdk_command_of_deploy_runs_with_the_node_banners_silenced(
    app_dir: Path, fake_cdk: Path, session: boto3.Session, tmp_path: Path
) -> None:
    # GIVEN a Node 20 first on PATH (end-of-life: jsii prints its banner in each Node process) and no
    # silencing variable of the user's
    node = _fake_node(tmp_path / "node-bin", "v20.20.2")
    log = tmp_path / "calls.jsonl"
    env = _base_env(log)
    env["PATH"] = os.pathsep.join([str(node.parent), env["PATH"]])
    # WHEN the app is deployed
    deploy(app_dir, target=AwsTarget(None, REGION), env=env, cdk=str(fake_cdk), **_clients(session))
    # THEN synth, bootstrap and deploy each ran with jsii's and the AWS SDK's Node banners silenced,
    # the end-of-life one for Node 20 only
    calls = _calls(log)
    assert [c["args"][0] for c in calls] == ["synth", "bootstrap", "deploy"]
    for call in calls:
        assert call["quiet"] == {
            "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1",
            "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "20",
            "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED": "true",
        }
    # AND the caller's environment still has none of them
    assert not [k for k in env if k.startswith("JSII_SILENCE_")]


def test_the_cdk_cli_runs_with_jsiis_end_of_life_banner_silenced_for_its_node(tmp_path: Path) -> None:
    # GIVEN a Node 20 on PATH (the banner's version list must name the running major version)
    node = tmp_path / "node-bin" / "node"
    node.parent.mkdir()
    node.write_text(f"#!{sys.executable}\nprint('v20.20.2')\n")
    node.chmod(node.stat().st_mode | stat.S_IEXEC)
    # WHEN the CDK CLI's environment is made THEN it lists 20; a list the user set is kept
    assert quiet_node({"PATH": str(node.parent)})["JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION"] == "20"
    mine = {
        "PATH": str(node.parent),
        "JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION": "18,20",
        "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED": "false",
    }
    assert quiet_node(mine) == mine
    # AND the CDK CLI's AWS SDK is told not to warn of Node versions; without Node no version is listed
    assert quiet_node({"PATH": str(tmp_path / "nothing")}) == {
        "PATH": str(tmp_path / "nothing"),
        "AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED": "true",
    }
