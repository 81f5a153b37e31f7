"""The examples' integration tests for a real account, checked without one.

Each ``examples/<name>/integ_<name>.py`` is a CDK app with an ``IntegTest`` (aws-cdk.integ-tests-alpha):
the example's stack and an assertion stack that sends a job and waits for its effect on AWS
(docs/deploying.md says how to run it on an account). Here each is synthesized as integ-runner runs it
(``python integ_<name>.py`` in its directory) and compared with its reviewed snapshot: every stack's
template and the test case (``integ.json``), asset hashes normalised; so a change to what the integ test
deploys or asserts shows in review. Update with ``pytest tests/examples/test_examples_integ_snapshots.py
--snapshot-update`` after reading the diff. cfn-lint checks the example's stack too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import cfnlint.api
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from .conftest import EXAMPLES

INTEG_APPS = {"agent_workspace": "integ_agent_workspace.py", "account_events": "integ_account_events.py"}
_HASH = re.compile(r"[0-9a-f]{64}")
#: What the synthesized assembly's manifest calls a stack.
_STACK = "aws:cloudformation:stack"


#: The assertion calls' ``salt`` property: the synth's time, so that every deployment runs them again.
_SALT = "salt"


def _normalise(value: Any) -> Any:
    """Replace asset hashes (they change with every edit of the runtime or the job code) and salts."""
    if isinstance(value, str):
        return _HASH.sub("<asset-hash>", value)
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: "<salt>" if k == _SALT else _normalise(v) for k, v in value.items()}
    return value


@pytest.fixture(scope="module", params=sorted(INTEG_APPS))
def synthesized(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The integ app's assembly: ``{"integ.json": ..., <stack artifact id>: template, ...}``."""
    example = str(request.param)
    out = tmp_path_factory.mktemp(f"integ-{example}")
    env = {**os.environ, "CDK_OUTDIR": str(out), "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1"}
    env.pop("AGENT_WORKSPACE_IMAGE", None)  # the integ app builds its image: the snapshot names the asset
    result = subprocess.run(
        [sys.executable, INTEG_APPS[example]],
        cwd=EXAMPLES / example,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assembly: dict[str, Any] = {
        "example": example,
        "integ.json": json.loads((out / "integ.json").read_text()),
    }
    for artifact_id, artifact in sorted(manifest["artifacts"].items()):
        if artifact["type"] == _STACK:
            template_file = artifact["properties"]["templateFile"]
            assembly[artifact_id] = json.loads((out / template_file).read_text())
    return assembly


def test_integ_app_matches_its_snapshot(synthesized: dict[str, Any], snapshot: SnapshotAssertion) -> None:
    # GIVEN an example's integ app, synthesized as integ-runner synthesizes it, asset hashes normalised
    # THEN its stacks and test case match the reviewed snapshot
    assert _normalise(synthesized) == snapshot.use_extension(JSONSnapshotExtension)


def test_integ_app_tests_the_example_stack_and_asserts_in_a_stack_of_its_own(
    synthesized: dict[str, Any],
) -> None:
    # GIVEN the integ app's test case
    [case] = synthesized["integ.json"]["testCases"].values()
    # THEN it deploys the example's stack, with the assertions in a second stack, and no update workflow
    # (the snapshot holds no assets to deploy the previous version from)
    assert len(case["stacks"]) == 1 and case["stacks"][0] in synthesized
    assert case["assertionStackName"] in synthesized
    assert case["stackUpdateWorkflow"] is False
    # AND every assertion waits for its result (a waiter fails the deployment when it never holds)
    assertions = synthesized[case["assertionStackName"]]["Resources"]
    calls = [r for r in assertions.values() if str(r["Type"]).startswith("Custom::DeployAssert@SdkCall")]
    assert calls and all("stateMachineArn" in r["Properties"] for r in calls)


def test_integ_app_example_stack_passes_cfn_lint(synthesized: dict[str, Any]) -> None:
    # GIVEN the example's stack as the integ app deploys it (the assertion stack is integ-tests' own)
    [case] = synthesized["integ.json"]["testCases"].values()
    [stack] = case["stacks"]
    # WHEN cfn-lint checks it THEN there is no error (E rules)
    matches = cfnlint.api.lint(json.dumps(synthesized[stack]))
    assert [f"{m.rule.id} {m.message} at {m.path}" for m in matches if m.rule.id.startswith("E")] == []
