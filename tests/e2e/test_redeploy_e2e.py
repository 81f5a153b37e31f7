"""End to end: the real CDK CLI deploys a two-stack app four times into one running emulator.

``cdk deploy`` names every stack's change set ``cdk-deploy-change-set``, deletes it by name and stack
before each update and deletes a change set with no changes by ARN; moto 5.2.5 found change sets by
name across stacks and failed the third deploy (HTTP 500 on DeleteChangeSet, then ~50 s of CLI
retries). The deploys: create, update (a code change), an unchanged app with ``--force`` (the
no-change change set, FAILED and deleted), update back. The app is synthesized once per version,
so each deploy is the CLI alone (a few seconds).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from constructs_fifo.local.emulator.server import LocalEmulator
from constructs_fifo.stacks.aws import AwsTarget

from .conftest import REGION, ROOT

pytestmark = pytest.mark.e2e

STACKS = ("RedeployA", "RedeployB")
APP = """\
from aws_cdk import App, CfnOutput, Duration, Stack
from aws_cdk import aws_sqs as sqs

app = App()
for name in {stacks!r}:
    stack = Stack(app, name)
    queue = sqs.Queue(
        stack,
        "Jobs",
        fifo=True,
        queue_name=f"{{name}}-jobs.fifo",
        visibility_timeout=Duration.seconds(int(app.node.try_get_context("visibility") or 30)),
    )
    CfnOutput(stack, "QueueUrl", value=queue.queue_url)
app.synth()
"""


@pytest.fixture
def emulator() -> Iterator[LocalEmulator]:
    with LocalEmulator(port=0) as emu:
        yield emu


def _cdk(args: list[str], *, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ROOT / "node_modules" / ".bin" / "cdk"), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _visibility_seconds(emulator: LocalEmulator) -> dict[str, str]:
    sqs = emulator.client("sqs")
    found = {}
    for stack in STACKS:
        url = sqs.get_queue_url(QueueName=f"{stack}-jobs.fifo")["QueueUrl"]
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])
        found[stack] = attributes["Attributes"]["VisibilityTimeout"]
    return found


def test_four_deploys_of_two_stacks_into_one_emulator_succeed(
    emulator: LocalEmulator, tmp_path: Path
) -> None:
    # GIVEN a running emulator, bootstrapped, and a two-stack app synthesized at two versions
    env = AwsTarget(emulator.endpoint_url, REGION, fake_credentials=True).child_environment()
    env["CDK_HOME"] = str(tmp_path / "cdk-home")
    app_dir = tmp_path / "app"
    app_dir.mkdir()
    (app_dir / "app.py").write_text(APP.format(stacks=STACKS))
    (app_dir / "cdk.json").write_text('{"app": "python app.py"}')
    assemblies = {}
    for visibility in ("30", "45"):
        assemblies[visibility] = str(tmp_path / f"assembly-{visibility}")
        synth = _cdk(
            ["synth", "--quiet", "--context", f"visibility={visibility}", "--output", assemblies[visibility]],
            cwd=app_dir,
            env=env,
        )
        assert synth.returncode == 0, synth.stderr[-3000:]
    account = emulator.client("sts").get_caller_identity()["Account"]
    bootstrap = _cdk(["bootstrap", f"aws://{account}/{REGION}"], cwd=tmp_path, env=env)
    assert bootstrap.returncode == 0, bootstrap.stderr[-3000:]

    # WHEN it is deployed four times: create, update, unchanged (forced), update back
    for visibility, extra in (("30", []), ("45", []), ("45", ["--force"]), ("30", [])):
        deployed = _cdk(
            ["deploy", "--all", "--app", assemblies[visibility], "--require-approval", "never", *extra],
            cwd=app_dir,
            env={**env, "PATH": f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{env['PATH']}"},
        )
        # THEN every deploy succeeds and both stacks hold that version
        assert deployed.returncode == 0, (visibility, extra, deployed.stderr[-3000:])
        assert _visibility_seconds(emulator) == dict.fromkeys(STACKS, visibility)
        if extra:
            # AND the forced deploy of an unchanged app found no changes in either stack
            # (the CDK CLI writes its messages to stdout instead of stderr when CI=true, as CI sets it)
            said = deployed.stdout + deployed.stderr
            assert said.count("(no changes)") == len(STACKS), said[-3000:]
