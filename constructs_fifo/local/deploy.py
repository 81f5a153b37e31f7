"""Deploy a CDK app with the real CDK CLI, to AWS or to a local endpoint (the emulator).

``deploy`` bootstraps the environment when it has no ``CDKToolkit`` stack, runs ``cdk deploy`` and
returns the stack's outputs. With an ``endpoint_url`` the CLI's children talk to that endpoint
(``AWS_ENDPOINT_URL``), and when no credentials are configured they get fake ones: only the child
processes' environment changes, never this process's.

Examples
--------
>>> outputs = deploy(".", endpoint_url="http://localhost:4566")  # doctest: +SKIP
>>> outputs["QueueUrl"]  # doctest: +SKIP
'http://localhost:4566/123456789012/AgentJobs-jobs.fifo'
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import boto3
from botocore.exceptions import ClientError

from constructs_fifo.local.credentials import FAKE_CREDENTIALS, isolated_environment

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_cloudformation.client import CloudFormationClient

__all__ = [
    "BOOTSTRAP_STACK",
    "CdkCommandError",
    "CdkNotFoundError",
    "DeployError",
    "StackNotFoundError",
    "StackOutputsError",
    "cdk_executable",
    "child_environment",
    "deploy",
    "is_bootstrapped",
    "stack_outputs",
]

#: The stack ``cdk bootstrap`` creates.
BOOTSTRAP_STACK: Final = "CDKToolkit"

_CREDENTIAL_VARIABLES: Final = (
    "AWS_ACCESS_KEY_ID",
    "AWS_PROFILE",
    "AWS_WEB_IDENTITY_TOKEN_FILE",
    "AWS_CONTAINER_CREDENTIALS_FULL_URI",
    "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
)
_COMPLETE_STATES: Final = frozenset(
    {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE"}
)
_PROJECT_ROOT: Final = Path(__file__).resolve().parents[2]


class DeployError(Exception):
    """Base class of the errors of deploying with the CDK CLI."""


class CdkNotFoundError(DeployError):
    """No CDK CLI was found."""


class CdkCommandError(DeployError):
    """A ``cdk`` command exited with an error; the message holds the end of its output."""

    def __init__(self, command: Sequence[str], returncode: int, output: str) -> None:
        self.command = list(command)
        self.returncode = returncode
        self.output = output
        tail = "\n".join(output.strip().splitlines()[-25:])
        super().__init__(
            f"`{' '.join(command)}` exited with status {returncode}; it must exit with 0. "
            f"Fix the cause shown in its output:\n{tail}"
        )


class StackNotFoundError(DeployError):
    """The stack does not exist (or is not in a complete state) on the endpoint."""


class StackOutputsError(DeployError):
    """The stack exists but DescribeStacks returns no outputs for it."""


def cdk_executable(project_dir: str | os.PathLike[str] | None = None) -> str:
    """Return the CDK CLI to run.

    Looks for ``node_modules/.bin/cdk`` in ``project_dir`` (the app's directory), then in this
    project's checkout, then for ``cdk`` on ``PATH``.

    Raises
    ------
    CdkNotFoundError
        None was found; the message says how to install it.
    """
    candidates = []
    if project_dir is not None:
        candidates.append(Path(project_dir).resolve() / "node_modules" / ".bin" / "cdk")
    candidates.append(_PROJECT_ROOT / "node_modules" / ".bin" / "cdk")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    on_path = shutil.which("cdk")
    if on_path:
        return on_path
    looked = ", ".join(str(c) for c in candidates)
    raise CdkNotFoundError(
        f"the AWS CDK CLI was not found (looked at {looked} and for `cdk` on PATH); deploying needs it. "
        "Fix: run `npm ci` in the project (it pins aws-cdk@2 in package.json) or `npm install -g aws-cdk@2`."
    )


def _has_credentials(env: Mapping[str, str], *, look_in_files: bool) -> bool:
    """Whether ``env`` names credentials (or, when ``look_in_files``, boto3 finds any)."""
    if any(env.get(name) for name in _CREDENTIAL_VARIABLES):
        return True
    return look_in_files and boto3.Session().get_credentials() is not None


def child_environment(
    *,
    endpoint_url: str | None = None,
    region: str = "us-east-1",
    env: Mapping[str, str] | None = None,
    fake_credentials: bool | None = None,
) -> dict[str, str]:
    """Return the environment for the CDK CLI, the emulator and other children.

    Parameters
    ----------
    endpoint_url:
        The AWS endpoint (e.g. the local emulator); ``None`` for AWS itself.
    region:
        The region to deploy to.
    env:
        The base environment; defaults to this process's environment (which is never changed).
    fake_credentials:
        ``True``: the child gets :data:`~constructs_fifo.local.credentials.FAKE_CREDENTIALS` and is
        cut off from the user's profiles and config files, so nothing it runs can reach a real
        account. ``None`` (default): fake credentials only when an endpoint is given and none are
        configured. ``False``: never.

    Returns
    -------
    dict[str, str]
        ``env`` plus the region, the endpoint, fake credentials when an endpoint is given and no
        credentials are configured, and the variables that keep jsii and the CLI quiet. The Python
        running this code comes first on ``PATH`` so the app runs with the same interpreter.
    """
    base = dict(os.environ if env is None else env)
    child = dict(base)
    child["AWS_REGION"] = region
    child["AWS_DEFAULT_REGION"] = region
    child["CDK_DEFAULT_REGION"] = region
    child.setdefault("JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION", "1")
    child.setdefault("CDK_DISABLE_VERSION_CHECK", "1")
    child.setdefault("CDK_DISABLE_CLI_TELEMETRY", "true")
    child["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), base.get("PATH", os.defpath)])
    if endpoint_url is not None:
        child["AWS_ENDPOINT_URL"] = endpoint_url
    if fake_credentials:
        return isolated_environment(child)
    if (
        fake_credentials is None
        and endpoint_url is not None
        and not _has_credentials(base, look_in_files=env is None)
    ):
        child.update(FAKE_CREDENTIALS)
    return child


def _session(child_env: Mapping[str, str]) -> boto3.Session:
    return boto3.Session(
        aws_access_key_id=child_env.get("AWS_ACCESS_KEY_ID"),
        aws_secret_access_key=child_env.get("AWS_SECRET_ACCESS_KEY"),
        aws_session_token=child_env.get("AWS_SESSION_TOKEN"),
        region_name=child_env["AWS_REGION"],
        profile_name=child_env.get("AWS_PROFILE") if not child_env.get("AWS_ACCESS_KEY_ID") else None,
    )


def is_bootstrapped(*, cloudformation_client: CloudFormationClient) -> bool:
    """Whether the ``CDKToolkit`` stack exists in a complete state."""
    try:
        stacks = cloudformation_client.describe_stacks(StackName=BOOTSTRAP_STACK)["Stacks"]
    except ClientError as exc:
        if "does not exist" in str(exc):
            return False
        raise
    return any(s["StackStatus"] in _COMPLETE_STATES for s in stacks)


def stack_outputs(stack: str, *, cloudformation_client: CloudFormationClient) -> dict[str, str]:
    """Return the outputs of a deployed stack (DescribeStacks) as ``{OutputKey: OutputValue}``.

    On the local emulator this relies on the fidelity patch that gives a stack created or updated
    through a change set (what ``cdk deploy`` does) its outputs; moto 5.2.5 alone leaves them empty.

    Raises
    ------
    StackNotFoundError
        The stack does not exist or is not in a complete state.
    StackOutputsError
        The stack has no outputs.
    """
    try:
        stacks = cloudformation_client.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        raise StackNotFoundError(
            f"stack {stack!r} was not found on this endpoint ({exc}); it must be deployed first. "
            "Fix: run `constructs-fifo deploy` (with the same --endpoint-url and --region)."
        ) from exc
    [found] = stacks
    if found["StackStatus"] not in _COMPLETE_STATES:
        raise StackNotFoundError(
            f"stack {stack!r} is in state {found['StackStatus']}; it must be in a *_COMPLETE state. "
            "Fix: look at its events (describe-stack-events) and deploy again."
        )
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", []) if "OutputKey" in o}
    if not outputs:
        raise StackOutputsError(
            f"stack {stack!r} ({found['StackStatus']}) has no outputs in DescribeStacks; its outputs "
            "(QueueUrl, ...) are needed. Fix: deploy the app that defines them (`constructs-fifo deploy`); "
            "on a local endpoint, serve it with `constructs-fifo local serve` (moto without the "
            "constructs-fifo fidelity patches drops the outputs of stacks deployed by `cdk deploy`)."
        )
    return outputs


def _run(
    command: Sequence[str], *, cwd: Path, env: Mapping[str, str], echo: Callable[[str], None] | None
) -> None:
    process = subprocess.Popen(
        list(command),
        cwd=cwd,
        env=dict(env),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    lines: list[str] = []
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if echo is not None:
            echo(line.rstrip("\n"))
    returncode = process.wait()
    if returncode != 0:
        raise CdkCommandError(command, returncode, "".join(lines))


def deploy(
    app_dir: str | os.PathLike[str],
    *,
    stack: str = "AgentJobs",
    endpoint_url: str | None = None,
    region: str = "us-east-1",
    env: Mapping[str, str] | None = None,
    cdk: str | None = None,
    echo: Callable[[str], None] | None = None,
    cloudformation_client: CloudFormationClient | None = None,
    sts_client: Any = None,  # no STS stubs in the dev extra: typed loosely
    output_dir: str | os.PathLike[str] | None = None,
) -> dict[str, str]:
    """Bootstrap if needed, ``cdk deploy`` the stack and return its outputs.

    Parameters
    ----------
    app_dir:
        The directory holding ``cdk.json``.
    stack:
        The stack to deploy.
    endpoint_url:
        A local endpoint (e.g. ``http://localhost:4566``); ``None`` deploys to AWS.
    region:
        The region.
    env:
        Base environment of the CDK CLI; defaults to this process's (never changed).
    cdk:
        The CDK CLI; defaults to :func:`cdk_executable`.
    echo:
        Called with every line the CLI prints (e.g. ``print``); by default the output is kept and
        shown only in the error when a command fails.
    cloudformation_client, sts_client:
        Clients for the bootstrap check, the account id and the outputs; by default built from the
        child environment (so they use the same endpoint and credentials as the CLI).
    output_dir:
        The CDK CLI's ``--output`` (cloud assembly) directory; default ``cdk.out`` in ``app_dir``.
        Pass a separate one when another synth may run in the same directory at the same time.

    Returns
    -------
    dict[str, str]
        The stack's outputs.

    Raises
    ------
    CdkNotFoundError, CdkCommandError, DeployError
    """
    app_path = Path(app_dir).resolve()
    if not (app_path / "cdk.json").is_file():
        raise DeployError(
            f"app_dir {str(app_path)!r} has no cdk.json; it must be the CDK app's directory. "
            "Fix: pass the directory that holds cdk.json (the project root for the sample app)."
        )
    executable = cdk if cdk is not None else cdk_executable(app_path)
    child_env = child_environment(endpoint_url=endpoint_url, region=region, env=env)
    cloudformation = cloudformation_client or _session(child_env).client(
        "cloudformation", endpoint_url=endpoint_url, region_name=region
    )
    output_args = ["--output", str(Path(output_dir).resolve())] if output_dir is not None else []
    if not is_bootstrapped(cloudformation_client=cloudformation):
        sts = sts_client or _session(child_env).client("sts", endpoint_url=endpoint_url, region_name=region)
        account = sts.get_caller_identity()["Account"]
        # Outside the app directory: with no cdk.json there, the CLI bootstraps the named environment
        # without synthesizing the app first (measured: ~20 s less on 2 cores).
        with tempfile.TemporaryDirectory(prefix="constructs-fifo-bootstrap-") as elsewhere:
            _run(
                [executable, "bootstrap", f"aws://{account}/{region}"],
                cwd=Path(elsewhere),
                env=child_env,
                echo=echo,
            )
    with tempfile.TemporaryDirectory(prefix="constructs-fifo-deploy-") as scratch:
        outputs_file = Path(scratch) / "outputs.json"
        _run(
            [
                executable,
                "deploy",
                stack,
                "--require-approval",
                "never",
                "--outputs-file",
                str(outputs_file),
                *output_args,
            ],
            cwd=app_path,
            env=child_env,
            echo=echo,
        )
        if outputs_file.is_file():
            written: dict[str, dict[str, str]] = json.loads(outputs_file.read_text())
            if written.get(stack):
                return dict(written[stack])
    return stack_outputs(stack, cloudformation_client=cloudformation)
