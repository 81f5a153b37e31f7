"""``constructs-fifo doctor`` against moto in-process: the lines, the JSON, the exit code."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from moto import mock_aws

from constructs_fifo.cli import main
from constructs_fifo.cli.doctor import EXIT_PROBLEMS
from constructs_fifo.runtime.constants import ENV_MODE

FAKE_CDK = f"#!{sys.executable}\nprint('2.1148.1 (build fake)')\n"


@pytest.fixture
def app_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A synthesized app (cdk.out reserving 10 + 10) and its own CDK CLI; no `cdk` on PATH."""
    cli = tmp_path / "node_modules" / ".bin" / "cdk"
    cli.parent.mkdir(parents=True)
    cli.write_text(FAKE_CDK)
    cli.chmod(cli.stat().st_mode | stat.S_IEXEC)
    assembly = tmp_path / "cdk.out"
    assembly.mkdir()
    # each an OrderedAgentQueue's function: its environment names the mode
    properties = {"ReservedConcurrentExecutions": 10, "Environment": {"Variables": {ENV_MODE: "claim"}}}
    resources = {
        name: {"Type": "AWS::Lambda::Function", "Properties": properties}
        for name in ("Workspaces", "Notifications")
    }
    (assembly / "AgentJobs.template.json").write_text(json.dumps({"Resources": resources}))
    properties = {"templateFile": "AgentJobs.template.json", "requiresBootstrapStackVersion": 6}
    manifest = {"artifacts": {"AgentJobs": {"type": "aws:cloudformation:stack", "properties": properties}}}
    (assembly / "manifest.json").write_text(json.dumps(manifest))
    monkeypatch.setenv("PATH", os.pathsep.join(["/nonexistent"]))
    return tmp_path


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """moto in-process, reached with fake credentials and no endpoint (AWS itself, as boto3 sees it)."""
    monkeypatch.delenv("AWS_ENDPOINT_URL", raising=False)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", os.devnull)
    with mock_aws():
        yield


def test_doctor_prints_one_line_per_check_and_passes_on_moto(
    app_dir: Path, aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN moto (no CDKToolkit stack yet, no GetAccountSettings) and the synthesized sample
    # WHEN doctor runs
    code = main(["doctor", "--app-dir", str(app_dir), "--region", "eu-west-1"])
    # THEN five ok lines, each starting with its status and name, and exit 0
    lines = capsys.readouterr().out.splitlines()
    assert code == 0
    assert [line.split()[:2] for line in lines] == [
        ["ok", "identity"],
        ["ok", "region"],
        ["ok", "cdk-cli"],
        ["ok", "bootstrap"],
        ["ok", "concurrency"],
    ]
    assert lines[0].endswith("account 123456789012 as arn:aws:sts::123456789012:user/moto")
    assert "2.1148.1 at " in lines[2]


def test_doctor_json_has_the_checks_and_the_facts(
    app_dir: Path, aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN doctor runs with --json
    code = main(["doctor", "--app-dir", str(app_dir), "--region", "eu-west-1", "--json"])
    document = json.loads(capsys.readouterr().out)
    # THEN the checks in every command's --json casing (camelCase), and the facts they were made from
    assert code == 0
    assert [c["status"] for c in document["checks"]] == ["ok"] * 5
    assert document["facts"]["identity"]["account"] == "123456789012"
    assert document["facts"]["bootstrap"] == {"version": None, "status": None}
    assert document["facts"]["accountConcurrency"] is None  # moto does not implement GetAccountSettings
    assert document["facts"]["stackConcurrency"]["reservedConcurrentExecutions"] == {
        "Workspaces": 10,
        "Notifications": 10,
    }


def test_doctor_without_credentials_reports_the_problem_and_exits_1(
    app_dir: Path, aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN no credentials at all
    monkeypatch.delenv("AWS_ACCESS_KEY_ID")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    # WHEN doctor runs
    code = main(["doctor", "--app-dir", str(app_dir), "--region", "eu-west-1"])
    out = capsys.readouterr().out
    # THEN the identity line is a problem followed by its fix, and the exit code says so
    assert code == EXIT_PROBLEMS
    first, fix = out.splitlines()[:2]
    assert first.startswith("problem  identity")
    assert fix.split()[0] == "fix"


def test_doctor_reports_a_stack_it_could_not_read_as_a_problem_on_an_emulator(
    app_dir: Path, aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an app whose assembly holds AgentJobs only, and an endpoint with no concurrency quota (moto)
    # WHEN doctor checks a stack the app does not define
    code = main(["doctor", "--app-dir", str(app_dir), "--region", "eu-west-1", "--stack", "Jobs"])
    lines = capsys.readouterr().out.splitlines()
    # THEN the concurrency line is a problem naming what could not be read, with a fix, and exit 1
    assert code == EXIT_PROBLEMS
    concurrency = next(line for line in lines if line.split()[1] == "concurrency")
    assert concurrency.startswith("problem  concurrency  the stack's reserved concurrency is unknown: ")
    assert "has no stack 'Jobs' (it has ['AgentJobs'])" in concurrency
    assert lines[lines.index(concurrency) + 1].split()[:2] == ["fix", "pass"]


def test_doctor_without_stack_checks_the_apps_stack_holding_a_queue(
    app_dir: Path, aws: None, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN an app whose assembly holds AgentJobs WHEN doctor runs with no --stack and --json
    code = main(["doctor", "--app-dir", str(app_dir), "--region", "eu-west-1", "--json"])
    # THEN it checked AgentJobs, read from the app's cdk.out
    assert code == 0
    assert json.loads(capsys.readouterr().out)["facts"]["stack"] == "AgentJobs"


def test_doctor_in_an_app_whose_only_queue_has_the_container_consumer_takes_its_stack(
    app_dir: Path, aws: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the app's stack holds one queue, consumed by container workers (a task definition whose
    # container sets the mode; no function), and doctor runs in the app's directory
    container = {"Name": "Worker", "Environment": [{"Name": ENV_MODE, "Value": "claim"}]}
    resources = {
        "Workers": {"Type": "AWS::ECS::TaskDefinition", "Properties": {"ContainerDefinitions": [container]}}
    }
    (app_dir / "cdk.out" / "AgentJobs.template.json").write_text(json.dumps({"Resources": resources}))
    monkeypatch.chdir(app_dir)
    # WHEN doctor runs with no --stack and no --app-dir
    code = main(["doctor", "--region", "eu-west-1", "--json"])
    # THEN it checked that stack, as every other command takes it
    assert code == 0
    assert json.loads(capsys.readouterr().out)["facts"]["stack"] == "AgentJobs"
