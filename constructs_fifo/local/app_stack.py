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
environment sets :data:`~constructs_fifo.runtime.constants.ENV_MODE` (claim or state): every queue's
consumer does, with or without the construct's CfnOutputs, and no other resource does. Stacks of a ``Stage``
(nested cloud assemblies) are read too; nested CloudFormation stacks are not (their templates are
assets of the parent).

With one such stack it is the answer; with none or several, :class:`~constructs_fifo.local.errors.
StackChoiceError` names the stacks and the fix; it never falls back to the sample's name.

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

from constructs_fifo.local.errors import StackChoiceError, StackError
from constructs_fifo.runtime.constants import ENV_MODE

__all__ = [
    "CDK_APP_FILE",
    "DEFAULT_ASSEMBLY_DIR",
    "QUEUE_MARKER",
    "AppStack",
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

#: Synthesizes the app into the directory it is given (``cdk synth --output DIR``).
Synthesize = Callable[[Path], None]


@dataclass(frozen=True, slots=True)
class AppStack:
    """One stack of a synthesized app: its CloudFormation name and how many queues it holds."""

    name: str
    queues: int


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


def _queue_count(template: Mapping[str, Any]) -> int:
    resources = template.get("Resources")
    count = 0
    for resource in (resources or {}).values() if isinstance(resources, dict) else ():
        if not isinstance(resource, dict) or resource.get("Type") != "AWS::Lambda::Function":
            continue
        environment = (resource.get("Properties") or {}).get("Environment") or {}
        variables = environment.get("Variables") if isinstance(environment, dict) else None
        if isinstance(variables, dict) and QUEUE_MARKER in variables:
            count += 1
    return count


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
            yield AppStack(name, _queue_count(template) if isinstance(template, dict) else 0)


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
        None holds one, or several do; the message lists them.
    """
    holding = [stack.name for stack in stacks if stack.queues]
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
