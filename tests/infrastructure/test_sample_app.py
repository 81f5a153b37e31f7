"""The sample app: snapshot, cfn-lint over every template, cdk-nag through the real ``app.py``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import cfnlint.api
import pytest
from syrupy.assertion import SnapshotAssertion
from syrupy.extensions.json import JSONSnapshotExtension

from constructs_fifo.local.demo.sample_app import ENV_WORKSPACE_TABLE, OUTPUTS, WORKSPACE_KEY

from .stacks import REPO, Synthesized

_HASH = re.compile(r"[0-9a-f]{64}")


def _normalise(value: Any) -> Any:
    """Replace asset hashes (they change with every edit of the runtime or the job code)."""
    if isinstance(value, str):
        return _HASH.sub("<asset-hash>", value)
    if isinstance(value, list):
        return [_normalise(v) for v in value]
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    return value


def test_sample_stack_matches_snapshot(synthesized: Synthesized, snapshot: SnapshotAssertion) -> None:
    # GIVEN the sample stack's template, asset hashes normalised
    template = _normalise(synthesized.templates["AgentJobs"].to_json())
    # THEN it matches the reviewed snapshot (update with `pytest --snapshot-update` after review)
    assert template == snapshot.use_extension(JSONSnapshotExtension)


def test_sample_stack_states_the_contracts_outputs_and_workspace_table(synthesized: Synthesized) -> None:
    # GIVEN the sample stack's template
    template = synthesized.templates["AgentJobs"].to_json()
    # THEN its outputs are exactly the contract's, and the worker is told its workspace table
    assert set(template["Outputs"]) == set(OUTPUTS)
    [function] = [r for r in template["Resources"].values() if r["Type"] == "AWS::Lambda::Function"]
    assert ENV_WORKSPACE_TABLE in function["Properties"]["Environment"]["Variables"]
    [workspaces] = [
        r for logical_id, r in template["Resources"].items() if logical_id.startswith("WorkspaceTable")
    ]
    assert workspaces["Properties"]["KeySchema"] == [{"AttributeName": WORKSPACE_KEY, "KeyType": "HASH"}]


@pytest.mark.parametrize("stack", ["AgentJobs", "Variant", "Risky"])
def test_cfn_lint_reports_no_errors(synthesized: Synthesized, stack: str) -> None:
    # GIVEN a synthesized template
    template = json.dumps(synthesized.templates[stack].to_json())
    # WHEN cfn-lint checks it
    matches = cfnlint.api.lint(template)
    # THEN there is no error (E rules); warnings are listed for the reader
    errors = [f"{m.rule.id} {m.message} at {m.path}" for m in matches if m.rule.id.startswith("E")]
    assert errors == []


def test_app_synthesizes_with_zero_unacknowledged_nag_findings(tmp_path: Path) -> None:
    # GIVEN the real app.py, with both cdk-nag packs, synthesized as `cdk synth` would
    env = {**os.environ, "CDK_OUTDIR": str(tmp_path), "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1"}
    # WHEN it runs
    result = subprocess.run(
        [sys.executable, str(REPO / "app.py")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    # THEN it succeeds, every plugin passes with no open finding, and each acknowledgement has a reason
    assert result.returncode == 0, result.stderr[-3000:]
    assert (tmp_path / "AgentJobs.template.json").is_file()
    report = json.loads((tmp_path / "validation-report.json").read_text())
    plugins = {p["pluginName"]: p for p in report["pluginReports"]}
    # (a pack with neither findings nor acknowledgements is left out of the report)
    assert set(plugins) <= {"AwsSolutions", "Serverless"}
    assert "(AwsSolutions)" not in result.stdout + result.stderr
    assert "(Serverless)" not in result.stdout + result.stderr
    for plugin in plugins.values():
        assert plugin["conclusion"] == "success"
        assert plugin["violations"] == []
        for suppressed in plugin.get("suppressedViolations", []):
            assert len(suppressed["reason"]) > 40, suppressed
    acknowledged = sorted(s["ruleName"] for p in plugins.values() for s in p.get("suppressedViolations", []))
    assert acknowledged == [
        "Serverless-LambdaDLQ",
        "Serverless-LambdaEventSourceMappingDestination",
        "Serverless-LambdaTracing",
        "Serverless-SQSRedrivePolicy",
    ]
