"""Which stack a command takes without ``--stack``: the app's one stack holding an OrderedAgentQueue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from constructs_fifo.local.app_stack import read_app_stacks, resolve_stack
from constructs_fifo.local.errors import StackChoiceError, StackError
from constructs_fifo.runtime.constants import ENV_MODE


def _template(*, queued: bool) -> dict[str, Any]:
    variables = {ENV_MODE: "state", "OTHER": "x"} if queued else {"OTHER": "x"}
    return {
        "Resources": {
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": {"Environment": {"Variables": variables}}},
            "Bucket": {"Type": "AWS::S3::Bucket"},
        }
    }


def _assembly(directory: Path, stacks: dict[str, bool], *, names: dict[str, str] | None = None) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    artifacts: dict[str, Any] = {}
    for artifact_id, queued in stacks.items():
        (directory / f"{artifact_id}.template.json").write_text(json.dumps(_template(queued=queued)))
        properties: dict[str, Any] = {"templateFile": f"{artifact_id}.template.json"}
        if names and artifact_id in names:
            properties["stackName"] = names[artifact_id]
        artifacts[artifact_id] = {"type": "aws:cloudformation:stack", "properties": properties}
    artifacts["Tree"] = {"type": "cdk:tree", "properties": {"file": "tree.json"}}
    (directory / "manifest.json").write_text(json.dumps({"artifacts": artifacts}))
    return directory


def _app(directory: Path, cdk_json: dict[str, Any] | None = None) -> Path:
    (directory / "cdk.json").write_text(json.dumps(cdk_json or {"app": "python app.py"}))
    return directory


def _no_synth(assembly: Path) -> None:
    raise AssertionError("the app must not be synthesized when its cdk.out is there")


def test_a_given_stack_is_taken_as_it_is(tmp_path: Path) -> None:
    # GIVEN no app at all WHEN --stack names one THEN that is the stack, nothing read
    assert resolve_stack("Jobs", app_dir=tmp_path, synthesize=_no_synth) == "Jobs"


def test_the_one_stack_holding_a_queue_is_read_from_the_apps_cdk_out(tmp_path: Path) -> None:
    # GIVEN an app whose cdk.out holds Network and Jobs, only Jobs with a queue's function
    _assembly(_app(tmp_path) / "cdk.out", {"Network": False, "Jobs": True})
    # WHEN no --stack is given THEN Jobs, read without synthesizing
    assert resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth) == "Jobs"


def test_the_cloudformation_name_of_the_stack_is_taken(tmp_path: Path) -> None:
    # GIVEN a stack whose CloudFormation name differs from its construct id
    _assembly(_app(tmp_path) / "cdk.out", {"Jobs": True}, names={"Jobs": "jobs-prod"})
    # THEN the name the endpoint knows it by
    assert resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth) == "jobs-prod"


def test_cdk_jsons_output_directory_and_a_stages_stacks_are_read(tmp_path: Path) -> None:
    # GIVEN an app writing its assembly to build/cdk, whose only queue is in a Stage (a nested assembly)
    assembly = _assembly(
        _app(tmp_path, {"app": "python app.py", "output": "build/cdk"}) / "build" / "cdk", {}
    )
    _assembly(assembly / "assembly-Prod", {"Prod-Jobs": True})
    manifest = json.loads((assembly / "manifest.json").read_text())
    manifest["artifacts"]["assembly-Prod"] = {
        "type": "cdk:cloud-assembly",
        "properties": {"directoryName": "assembly-Prod"},
    }
    (assembly / "manifest.json").write_text(json.dumps(manifest))
    # THEN the Stage's stack is found
    assert resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth) == "Prod-Jobs"


def test_an_app_without_cdk_out_is_synthesized_elsewhere_and_said_so(tmp_path: Path) -> None:
    # GIVEN an app never synthesized
    _app(tmp_path)
    said: list[str] = []
    synthesized: list[Path] = []

    def synthesize(assembly: Path) -> None:
        synthesized.append(assembly)
        _assembly(assembly, {"Jobs": True})

    # WHEN no --stack is given
    stack = resolve_stack(None, app_dir=tmp_path, synthesize=synthesize, say=said.append)
    # THEN the app was synthesized once, outside the app's directory (it stays as it was), and it said so
    assert stack == "Jobs"
    assert len(synthesized) == 1
    assert tmp_path not in synthesized[0].parents
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cdk.json"]
    assert said and "synthesizing the app to find its stack" in said[0]


def test_several_stacks_holding_a_queue_are_refused_naming_them(tmp_path: Path) -> None:
    _assembly(_app(tmp_path) / "cdk.out", {"Blue": True, "Green": True, "Network": False})
    with pytest.raises(StackChoiceError) as raised:
        resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth)
    assert raised.value.message.startswith("several stacks hold an OrderedAgentQueue: Blue, Green (")
    assert raised.value.fix == "pass --stack NAME, e.g. --stack Blue"


def test_an_app_without_a_queue_is_refused_naming_its_stacks(tmp_path: Path) -> None:
    _assembly(_app(tmp_path) / "cdk.out", {"Network": False})
    with pytest.raises(StackChoiceError) as raised:
        resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth)
    assert "no stack of the app holds an OrderedAgentQueue" in raised.value.message
    assert "its stacks: Network" in raised.value.message


def test_an_unsynthesized_app_without_a_way_to_synthesize_is_refused(tmp_path: Path) -> None:
    _app(tmp_path)
    with pytest.raises(StackChoiceError) as raised:
        resolve_stack(None, app_dir=tmp_path, synthesize=None)
    assert raised.value.fix == "run `cdk synth` there, or pass --stack NAME"


def test_an_unreadable_manifest_names_the_file_and_the_fix(tmp_path: Path) -> None:
    (_app(tmp_path) / "cdk.out").mkdir()
    (tmp_path / "cdk.out" / "manifest.json").write_text("{not json")
    with pytest.raises(StackError) as raised:
        read_app_stacks(tmp_path / "cdk.out")
    assert str(tmp_path / "cdk.out" / "manifest.json") in raised.value.message
    assert "pass --stack NAME" in raised.value.fix
