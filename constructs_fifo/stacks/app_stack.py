"""Which stack a command works on when no ``--stack`` is given: the app's own.

A command run in a CDK app's directory (one with ``cdk.json``) takes the app's one stack that holds an
``OrderedAgentQueue``. The stacks are read from the app's synthesized cloud assembly, never from the
endpoint: an endpoint may hold other apps' stacks (the sample's ``AgentJobs`` among them), and the
command must not act on those because they happen to be deployed there.

How the assembly is found, cheapest first:

1. ``cdk.out`` of the app directory (or the ``output`` that ``cdk.json`` names): ``cdk synth``, ``cdk
   deploy`` and ``constructs-fifo deploy`` all write it, so after a deploy it is there and reading it
   is two small JSON files per stack (milliseconds);
2. otherwise the app is synthesized into a temporary directory (tens of seconds; the caller says so,
   and ``cdk synth`` once makes every later command fast).

A stack holds an ``OrderedAgentQueue`` when its template has an ``AWS::Lambda::Function`` whose
environment sets :data:`~constructs_fifo.runtime.constants.ENV_MODE` (claim or state), or an
``AWS::ECS::TaskDefinition`` with a container whose environment does (the container consumer's
workers): every queue's consumer does, with or without the construct's CfnOutputs, and no other
resource does. Stacks of a ``Stage``
(nested cloud assemblies) are read too.

Nested CloudFormation stacks (``NestedStack``) are read to be named, not chosen: every command finds a
stack's queues in the stack's own resources (:mod:`constructs_fifo.stacks.deployed`), where a nested
stack's functions are not, so a queue inside one would be missed. A nested stack's template is a file
of the assembly that its ``AWS::CloudFormation::Stack`` resource names in its ``aws:asset:path``
metadata, or, when the app was synthesized without asset metadata, the file its ``TemplateURL``'s
object key maps to in the stack's asset manifest.

With one such stack it is the answer; with none or several, or with a queue inside a nested stack,
:class:`~constructs_fifo.local.errors.StackChoiceError` names the stacks and the fix; it never falls back
to the sample's name.

Examples
--------
>>> resolve_stack("Jobs", app_dir=Path("."), synthesize=None)
'Jobs'
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from constructs_fifo.runtime.constants import ENV_MODE
from constructs_fifo.stacks.deployed import TASK_DEFINITION_TYPE
from constructs_fifo.stacks.errors import StackChoiceError, StackError

__all__ = [
    "CDK_APP_FILE",
    "DEFAULT_ASSEMBLY_DIR",
    "QUEUE_MARKER",
    "AppStack",
    "NestedStackQueues",
    "Synthesize",
    "assembly_dir",
    "choose_stack",
    "read_app_stacks",
    "resolve_stack",
]

#: The file that makes a directory a CDK app's.
CDK_APP_FILE: Final = "cdk.json"
#: Where the CDK CLI writes the cloud assembly unless ``cdk.json`` says ``"output"``.
DEFAULT_ASSEMBLY_DIR: Final = "cdk.out"
#: The environment variable every OrderedAgentQueue's function sets, and nothing else does.
QUEUE_MARKER: Final = ENV_MODE
_STACK_ARTIFACT: Final = "aws:cloudformation:stack"
_NESTED_ASSEMBLY_ARTIFACT: Final = "cdk:cloud-assembly"
_ASSET_MANIFEST_ARTIFACT: Final = "cdk:asset-manifest"
_NESTED_STACK_TYPE: Final = "AWS::CloudFormation::Stack"
#: Metadata CDK puts on a nested stack's resource: its template's file in the assembly, its construct path.
_ASSET_PATH_METADATA: Final = "aws:asset:path"
_CONSTRUCT_PATH_METADATA: Final = "aws:cdk:path"
#: What follows a NestedStack's own path in its resource's construct path (``Parent/Inner.NestedStack/...``).
_NESTED_STACK_PATH_SUFFIX: Final = ".NestedStack/"

#: Synthesizes the app into the directory it is given (``cdk synth --output DIR``).
Synthesize = Callable[[Path], None]


@dataclass(frozen=True, slots=True)
class NestedStackQueues:
    """A nested stack of an app's stack that holds queues: its construct path (``Parent/Inner``) and
    how many queues its own template holds."""

    path: str
    queues: int


@dataclass(frozen=True, slots=True)
class AppStack:
    """One stack of a synthesized app: its CloudFormation name, how many queues it holds itself, and
    its nested stacks (at any depth) that hold queues."""

    name: str
    queues: int
    nested: tuple[NestedStackQueues, ...] = ()


def assembly_dir(app_dir: Path) -> Path:
    """The app's cloud assembly directory: ``cdk.json``'s ``output``, else ``cdk.out``."""
    try:
        settings = json.loads((app_dir / CDK_APP_FILE).read_text())
    except (OSError, ValueError):
        settings = {}
    output = settings.get("output") if isinstance(settings, dict) else None
    return app_dir / (output if isinstance(output, str) and output else DEFAULT_ASSEMBLY_DIR)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise StackError(
            f"{path} is unreadable ({error}); the stack to work on is read from the synthesized app",
            f"run `cdk synth` in {path.parent.parent} again, or pass --stack NAME",
        ) from error


def _marks_a_queue(resource: Any) -> bool:
    """Whether ``resource`` is a queue's consumer: a function whose environment sets the marker, or a
    task definition with a container whose environment does (the container consumer has no function)."""
    if not isinstance(resource, dict):
        return False
    properties = resource.get("Properties") or {}
    if resource.get("Type") == "AWS::Lambda::Function":
        environment = properties.get("Environment") or {}
        variables = environment.get("Variables") if isinstance(environment, dict) else None
        return isinstance(variables, dict) and QUEUE_MARKER in variables
    if resource.get("Type") == TASK_DEFINITION_TYPE:
        containers = properties.get("ContainerDefinitions")
        return any(
            isinstance(pair, dict) and pair.get("Name") == QUEUE_MARKER
            for container in (containers if isinstance(containers, list) else ())
            if isinstance(container, dict)
            for pair in (container.get("Environment") or ())
        )
    return False


def _queue_count(template: Mapping[str, Any]) -> int:
    resources = template.get("Resources")
    return sum(
        1
        for resource in ((resources or {}).values() if isinstance(resources, dict) else ())
        if _marks_a_queue(resource)
    )


def _asset_files(assembly: Path, artifact: Mapping[str, Any], artifacts: Mapping[str, Any]) -> dict[str, str]:
    """The stack's file assets, object key (the asset's hash) to file in the assembly."""
    files: dict[str, str] = {}
    for dependency in artifact.get("dependencies") or ():
        found = artifacts.get(dependency) or {}
        manifest_file = (found.get("properties") or {}).get("file")
        if found.get("type") != _ASSET_MANIFEST_ARTIFACT or not isinstance(manifest_file, str):
            continue
        manifest = _read_json(assembly / manifest_file)
        entries = manifest.get("files") if isinstance(manifest, dict) else None
        for key, entry in (entries or {}).items() if isinstance(entries, dict) else ():
            path = ((entry or {}).get("source") or {}).get("path")
            if isinstance(path, str):
                files[key] = path
    return files


def _object_key(template_url: Any) -> str | None:
    """The asset hash a ``TemplateURL`` ends with (``.../<hash>.json``, joined or plain)."""
    if isinstance(template_url, dict) and isinstance(template_url.get("Fn::Join"), list):
        parts = template_url["Fn::Join"][-1]
        template_url = parts[-1] if isinstance(parts, list) and parts else None
    if not isinstance(template_url, str):
        return None
    return template_url.rsplit("/", 1)[-1].removesuffix(".json")


def _nested_stacks(
    assembly: Path, template: Any, assets: Mapping[str, str], owner: str
) -> Iterator[NestedStackQueues]:
    """The nested stacks of ``template`` (and theirs) that hold queues; ``owner`` names ``template``."""
    resources = template.get("Resources") if isinstance(template, dict) else None
    for logical_id, resource in (resources or {}).items() if isinstance(resources, dict) else ():
        if not isinstance(resource, dict) or resource.get("Type") != _NESTED_STACK_TYPE:
            continue
        metadata = resource.get("Metadata") or {}
        template_file = metadata.get(_ASSET_PATH_METADATA) or assets.get(
            _object_key((resource.get("Properties") or {}).get("TemplateURL")) or ""
        )
        if not isinstance(template_file, str) or not (assembly / template_file).is_file():
            continue  # not a CDK NestedStack's (a TemplateURL of the user's own): nothing to read
        construct_path = metadata.get(_CONSTRUCT_PATH_METADATA)
        path = (
            construct_path.partition(_NESTED_STACK_PATH_SUFFIX)[0]
            if isinstance(construct_path, str) and _NESTED_STACK_PATH_SUFFIX in construct_path
            else f"{owner}/{logical_id}"
        )
        nested = _read_json(assembly / template_file)
        queues = _queue_count(nested) if isinstance(nested, dict) else 0
        if queues:
            yield NestedStackQueues(path, queues)
        yield from _nested_stacks(assembly, nested, assets, path)


def _stacks(assembly: Path) -> Iterator[AppStack]:
    manifest = _read_json(assembly / "manifest.json")
    artifacts = manifest.get("artifacts") if isinstance(manifest, dict) else None
    for artifact_id, artifact in (artifacts or {}).items():
        properties = artifact.get("properties") or {}
        if artifact.get("type") == _NESTED_ASSEMBLY_ARTIFACT and properties.get("directoryName"):
            yield from _stacks(assembly / properties["directoryName"])
        elif artifact.get("type") == _STACK_ARTIFACT and properties.get("templateFile"):
            template = _read_json(assembly / properties["templateFile"])
            name = str(properties.get("stackName") or artifact_id)
            assets = _asset_files(assembly, artifact, artifacts or {})
            yield AppStack(
                name,
                _queue_count(template) if isinstance(template, dict) else 0,
                tuple(_nested_stacks(assembly, template, assets, name)),
            )


def read_app_stacks(assembly: Path) -> list[AppStack]:
    """Every stack of the cloud assembly at ``assembly`` (a ``cdk.out``), in the manifest's order.

    Raises
    ------
    StackError
        The manifest or a template is unreadable.
    """
    return list(_stacks(assembly))


def choose_stack(stacks: list[AppStack], *, where: str) -> str:
    """The name of the one stack of ``stacks`` holding an OrderedAgentQueue.

    Raises
    ------
    StackChoiceError
        None holds one, or several do, or a queue is inside a nested stack; the message lists them.
    """
    nested = [queues for stack in stacks for queues in stack.nested]
    holding = [stack.name for stack in stacks if stack.queues]
    if nested:
        named = ", ".join(f"{queues.path} ({queues.queues})" for queues in nested)
        raise StackChoiceError(
            f"an OrderedAgentQueue is inside a nested stack: {named} ({where}); constructs-fifo's "
            "commands find a stack's queues in the stack's own resources, not in its nested stacks'",
            "define the OrderedAgentQueue in a top-level stack (a cdk.Stack of the app, not a "
            "cdk.NestedStack)"
            + (
                f", or pass --stack NAME to work on the queues outside nested stacks ({', '.join(holding)})"
                if holding
                else ""
            ),
        )
    if len(holding) == 1:
        return holding[0]
    if holding:
        raise StackChoiceError(
            f"several stacks hold an OrderedAgentQueue: {', '.join(holding)} ({where})",
            f"pass --stack NAME, e.g. --stack {holding[0]}",
        )
    names = ", ".join(stack.name for stack in stacks) or "none"
    raise StackChoiceError(
        f"no stack of the app holds an OrderedAgentQueue ({where}; its stacks: {names})",
        "pass --stack NAME naming the stack that holds one, or run `cdk synth` again if the app's "
        "cdk.out is out of date",
    )


def resolve_stack(
    stack: str | None,
    *,
    app_dir: Path,
    synthesize: Synthesize | None,
    say: Callable[[str], None] | None = None,
) -> str:
    """``stack`` when given; otherwise the app's one stack holding an OrderedAgentQueue.

    Parameters
    ----------
    stack
        What ``--stack`` says (``None``: not given).
    app_dir
        The app's directory (``--app-dir``, else the working directory).
    synthesize
        Synthesizes the app when it has no cloud assembly yet; ``None`` refuses instead.
    say
        Told when the app is synthesized (the slow path).

    Raises
    ------
    StackChoiceError
        No app directory, no assembly and no way to synthesize, or not exactly one stack to choose.
    StackError, DeployError
        The assembly is unreadable, or the synth failed.
    """
    if stack is not None:
        return stack
    app_dir = app_dir.resolve()
    assembly = assembly_dir(app_dir)
    if (assembly / "manifest.json").is_file():
        return choose_stack(read_app_stacks(assembly), where=f"read from {assembly}")
    if not (app_dir / CDK_APP_FILE).is_file():
        raise StackChoiceError(
            f"no --stack given and {app_dir} is not a CDK app's directory (no {CDK_APP_FILE}); the "
            "command needs the stack to work on",
            "pass --stack NAME, or run the command in the app's directory (the one with cdk.json)",
        )
    if synthesize is None:
        raise StackChoiceError(
            f"no --stack given and the app in {app_dir} is not synthesized (no {assembly})",
            "run `cdk synth` there, or pass --stack NAME",
        )
    if say is not None:
        say(
            f"no --stack and no {assembly}: synthesizing the app to find its stack (a `cdk synth` skips this)"
        )
    with tempfile.TemporaryDirectory(prefix="constructs-fifo-synth-") as scratch:
        synthesized = Path(scratch) / DEFAULT_ASSEMBLY_DIR
        synthesize(synthesized)
        return choose_stack(read_app_stacks(synthesized), where=f"synthesized from {app_dir}")
