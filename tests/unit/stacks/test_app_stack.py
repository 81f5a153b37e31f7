"""Which stack a command takes without ``--stack``: the app's one stack holding an OrderedAgentQueue."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import aws_cdk as cdk
import pytest
from aws_cdk import aws_ecs as ecs
from aws_cdk import aws_lambda as lambda_

from constructs_fifo import ContainerConsumer, OrderedAgentQueue
from constructs_fifo.runtime.constants import ENV_MODE
from constructs_fifo.stacks.app_stack import AppStack, NestedStackQueues, read_app_stacks, resolve_stack
from constructs_fifo.stacks.errors import StackChoiceError, StackError

REPO = Path(__file__).resolve().parents[3]
#: What the CDK CLI passes an app by default (and so every synth of constructs-fifo's commands).
CLI_METADATA = {"aws:cdk:enable-asset-metadata": True, "aws:cdk:enable-path-metadata": True}


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


def _nested_app(outdir: Path, context: dict[str, Any]) -> Path:
    """An app: Network (no queue), and Parent with a queue of its own, a NestedStack Inner holding one,
    and a NestedStack Deep inside Inner holding one."""
    app = cdk.App(outdir=str(outdir), context=context)
    code = lambda_.Code.from_asset(str(REPO / "lambda"))
    cdk.Stack(app, "Network")
    parent = cdk.Stack(app, "Parent")
    OrderedAgentQueue(parent, "Direct", code=code, handler="notifier.handle")
    inner = cdk.NestedStack(parent, "Inner")
    OrderedAgentQueue(inner, "Jobs", code=code, handler="notifier.handle")
    OrderedAgentQueue(cdk.NestedStack(inner, "Deep"), "Jobs", code=code, handler="notifier.handle")
    app.synth()
    return outdir


@pytest.fixture(scope="module")
def nested_assemblies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("nested")
    return {
        "cli": _nested_app(root / "cli", CLI_METADATA),
        "bare": _nested_app(root / "bare", {}),
    }


def test_queues_inside_nested_stacks_are_found_at_any_depth(nested_assemblies: dict[str, Path]) -> None:
    # GIVEN the app synthesized as the CDK CLI does (asset and path metadata on)
    # WHEN its stacks are read
    stacks = read_app_stacks(nested_assemblies["cli"])
    # THEN Parent holds its own queue, and its nested stacks' queues are named by their construct paths
    assert stacks == [
        AppStack("Network", 0),
        AppStack(
            "Parent",
            1,
            (NestedStackQueues("Parent/Inner", 1), NestedStackQueues("Parent/Inner/Deep", 1)),
        ),
    ]


def test_nested_stacks_are_found_without_asset_metadata_through_the_asset_manifest(
    nested_assemblies: dict[str, Path],
) -> None:
    # GIVEN the app synthesized by a bare `python app.py` (no asset or path metadata on the resources)
    # WHEN its stacks are read
    [network, parent] = read_app_stacks(nested_assemblies["bare"])
    # THEN the nested templates are still found (their TemplateURL's key in the asset manifest), named
    # by their parents' paths and their logical ids
    assert network == AppStack("Network", 0)
    assert (parent.name, parent.queues) == ("Parent", 1)
    [inner, deep] = parent.nested
    assert inner.queues == deep.queues == 1
    assert inner.path.startswith("Parent/InnerNestedStack")
    assert deep.path.startswith(f"{inner.path}/DeepNestedStack")


def test_a_queue_inside_a_nested_stack_is_refused_naming_it_and_the_fix(
    nested_assemblies: dict[str, Path], tmp_path: Path
) -> None:
    # GIVEN an app directory whose cdk.out holds a queue inside nested stacks
    (_app(tmp_path) / "cdk.out").symlink_to(nested_assemblies["cli"], target_is_directory=True)
    # WHEN no --stack is given
    with pytest.raises(StackChoiceError) as raised:
        resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth)
    # THEN the error names each nested stack and its queues, and says why commands would miss them
    message, fix = raised.value.message, raised.value.fix
    assert message.startswith(
        "an OrderedAgentQueue is inside a nested stack: Parent/Inner (1), Parent/Inner/Deep (1) ("
    )
    assert "not in its nested stacks'" in message
    # AND the fix: a top-level stack, or --stack for the queues outside nested stacks
    assert fix.startswith("define the OrderedAgentQueue in a top-level stack (a cdk.Stack of the app")
    assert fix.endswith("or pass --stack NAME to work on the queues outside nested stacks (Parent)")


def test_a_nested_stack_without_queues_changes_nothing(tmp_path: Path) -> None:
    # GIVEN a stack holding a queue and a nested stack resource whose template holds none
    assembly = _assembly(_app(tmp_path) / "cdk.out", {"Jobs": True})
    template = json.loads((assembly / "Jobs.template.json").read_text())
    template["Resources"]["Inner"] = {
        "Type": "AWS::CloudFormation::Stack",
        "Metadata": {"aws:asset:path": "JobsInner.nested.template.json"},
    }
    (assembly / "Jobs.template.json").write_text(json.dumps(template))
    (assembly / "JobsInner.nested.template.json").write_text(json.dumps(_template(queued=False)))
    # WHEN no --stack is given THEN the stack is chosen as before
    assert resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth) == "Jobs"


def test_an_app_whose_only_queue_has_the_container_consumer_is_found(tmp_path: Path) -> None:
    # GIVEN an app whose one queue is consumed by container workers (no function at all), synthesized
    # as the CDK CLI does
    app = cdk.App(outdir=str(_app(tmp_path) / "cdk.out"), context=CLI_METADATA)
    cdk.Stack(app, "Network")
    workers = cdk.Stack(app, "Workers")
    OrderedAgentQueue(
        workers,
        "Builds",
        code=lambda_.Code.from_asset(str(REPO / "lambda")),
        handler="notifier.handle",
        consumer=ContainerConsumer(image=ecs.ContainerImage.from_registry("public.ecr.aws/example/worker:1")),
    )
    app.synth()
    # WHEN no --stack is given THEN the stack holding it is taken, its queue counted once
    assert resolve_stack(None, app_dir=tmp_path, synthesize=_no_synth) == "Workers"
    assert [(stack.name, stack.queues) for stack in read_app_stacks(tmp_path / "cdk.out")] == [
        ("Network", 0),
        ("Workers", 1),
    ]
