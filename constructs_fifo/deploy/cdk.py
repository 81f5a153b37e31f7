"""Deploy a CDK app with the real CDK CLI, to AWS or to a local endpoint (the emulator).

``deploy`` synthesizes the app (``cdk synth``), runs the preflight on the synthesized stack
(:mod:`~constructs_fifo.deploy.preflight`: identity, region, CDK CLI, bootstrap, reserved concurrency
against the account's quota) and stops before CloudFormation when it finds a problem; then it
bootstraps the environment when it has no ``CDKToolkit`` stack, runs ``cdk deploy`` on the synthesized
assembly and returns the stack's outputs. With ``allow_unreserved=True`` and an account that cannot
hold the stack's reserved concurrency, the app is synthesized again with the context
:data:`~constructs_fifo.deploy.preflight.UNRESERVED_CONTEXT` and deployed without reservation.

Where it deploys and with which credentials is the :class:`~constructs_fifo.stacks.aws.AwsTarget` it
is given: its clients and the CDK CLI's environment both come from it, and only the child processes'
environment is set, never this process's. Against an endpoint, the CDK CLI gets a ``CDK_HOME`` of its
own for the call: it caches access key id -> account in ``$CDK_HOME/cache/accounts_partitions.json``,
every endpoint is reached with the same fake key, and a cache written for another endpoint (LocalStack
answers 000000000000, moto 123456789012) made ``cdk bootstrap`` fail with
``IncorrectDefaultCredentials``. Nothing in the user's ``~/.cdk`` is read or written then.

Examples
--------
>>> from constructs_fifo.stacks.aws import AwsTarget
>>> target = AwsTarget.for_endpoint("http://localhost:4566")
>>> outputs = deploy(".", target=target)  # doctest: +SKIP
>>> outputs["QueueUrl"]  # doctest: +SKIP
'http://localhost:4566/123456789012/AgentJobs-jobs.fifo'
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from constructs_fifo.deploy.preflight import UNRESERVED_CONTEXT
from constructs_fifo.deploy.preflight.facts import AccountConcurrency, Check, Facts, StackConcurrency
from constructs_fifo.deploy.preflight.observe import observe, with_stack
from constructs_fifo.deploy.preflight.verify import verify
from constructs_fifo.stacks.app_stack import assembly_dir, choose_stack, read_app_stacks
from constructs_fifo.stacks.aws import AwsTarget
from constructs_fifo.stacks.errors import (
    CdkCommandError,
    CdkNotFoundError,
    DeployError,
    PreflightError,
    StackChoiceError,
    StackError,
    StackNotFoundError,
    StackOutputsError,
)
from constructs_fifo.stacks.node_env import quiet_node
from constructs_fifo.stacks.status import BOOTSTRAP_STACK, COMPLETE_STATES, is_missing_stack

if TYPE_CHECKING:  # pragma: no cover - typing only
    from mypy_boto3_cloudformation.client import CloudFormationClient

__all__ = [
    "BOOTSTRAP_STACK",
    "COMPLETE_STATES",
    "cdk_executable",
    "deploy",
    "is_bootstrapped",
    "is_missing_stack",
    "readable_line",
    "run_preflight",
    "stack_outputs",
    "synth",
]


def cdk_executable(app_dir: str | os.PathLike[str]) -> str:
    """Return the CDK CLI to run, as a pip-installed tool must find it.

    ``cdk`` on ``PATH`` first, then ``node_modules/.bin/cdk`` in ``app_dir`` (the app's own pinned
    CLI). Nothing is looked up relative to this package's location.

    Raises
    ------
    CdkNotFoundError
        None was found; the fix says how to install it.
    """
    on_path = shutil.which("cdk")
    if on_path:
        return on_path
    local = Path(app_dir).resolve() / "node_modules" / ".bin" / "cdk"
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    raise CdkNotFoundError(
        f"the AWS CDK CLI was not found (no `cdk` on PATH, no {local}); deploying needs it",
        f"install it: `npm install -g aws-cdk@2`, or `npm install aws-cdk@2` in {Path(app_dir).resolve()}",
    )


def is_bootstrapped(*, cloudformation_client: CloudFormationClient) -> bool:
    """Whether the ``CDKToolkit`` stack exists in a complete state."""
    try:
        stacks = cloudformation_client.describe_stacks(StackName=BOOTSTRAP_STACK)["Stacks"]
    except ClientError as exc:
        if is_missing_stack(exc):
            return False
        raise
    return any(s["StackStatus"] in COMPLETE_STATES for s in stacks)


def stack_outputs(
    stack: str, *, cloudformation_client: CloudFormationClient, required: bool = True
) -> dict[str, str]:
    """Return the outputs of a deployed stack (DescribeStacks) as ``{OutputKey: OutputValue}``.

    On the local emulator this relies on the fidelity patch that gives a stack created or updated
    through a change set (what ``cdk deploy`` does) its outputs; moto 5.2.5 alone leaves them empty.

    Raises
    ------
    StackNotFoundError
        The stack does not exist or is not in a complete state.
    StackOutputsError
        The stack has no outputs and ``required`` (a caller that reads named outputs); with
        ``required=False`` a stack without outputs, which is normal, gives ``{}``.
    """
    try:
        stacks = cloudformation_client.describe_stacks(StackName=stack)["Stacks"]
    except ClientError as exc:
        if not is_missing_stack(exc):
            raise
        raise StackNotFoundError(
            f"stack {stack!r} was not found on this endpoint ({exc}); it must be deployed first",
            "run `constructs-fifo deploy` (with the same --endpoint-url and --region)",
        ) from exc
    [found] = stacks
    if found["StackStatus"] not in COMPLETE_STATES:
        raise StackNotFoundError(
            f"stack {stack!r} is in state {found['StackStatus']}; it must be in a *_COMPLETE state",
            "look at its events (describe-stack-events) and deploy again",
        )
    outputs = {o["OutputKey"]: o["OutputValue"] for o in found.get("Outputs", []) if "OutputKey" in o}
    if not outputs and required:
        raise StackOutputsError(
            f"stack {stack!r} ({found['StackStatus']}) has no outputs in DescribeStacks; its outputs "
            "(QueueUrl, ...) are needed",
            "deploy the app that defines them (`constructs-fifo deploy`); on a local endpoint, serve it "
            "with `constructs-fifo local serve` (moto without the constructs-fifo fidelity patches drops "
            "the outputs of stacks deployed by `cdk deploy`)",
        )
    return outputs


def readable_line(line: str) -> str:
    """``line`` as its writer meant it: a ``b'...'`` line (Python bytes printed as such) decoded.

    jsii's Python runtime relays what its Node process writes outside its protocol with
    ``print(bytes)``, so the CDK app's Node warnings (e.g. "Node 20 is end-of-life") reach the CDK
    CLI's output as ``b'!!  Node 20 is ... !!\\n'`` (aws/jsii issue 4065). Any other line is unchanged.
    """
    stripped = line.rstrip("\n")
    if len(stripped) < 3 or stripped[:2] not in ("b'", 'b"') or stripped[-1] != stripped[1]:
        return line
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError):
        return line
    if not isinstance(value, bytes):
        return line
    text = value.decode("utf-8", errors="replace")
    return text if text.endswith("\n") else text + "\n"


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
    for raw in process.stdout:
        line = readable_line(raw)
        lines.append(line)
        if echo is not None:
            echo(line.rstrip("\n"))
    returncode = process.wait()
    if returncode != 0:
        raise CdkCommandError(command, returncode, "".join(lines))


def synth(
    executable: str,
    stack: str | None,
    *,
    app_path: Path,
    assembly: Path,
    env: Mapping[str, str],
    echo: Callable[[str], None] | None,
    context: Mapping[str, str] | None = None,
) -> None:
    """``cdk synth STACK --quiet --output ASSEMBLY`` (with ``--context KEY=VALUE`` for each of ``context``).

    ``stack`` ``None`` synthesizes every stack of the app (``cdk synth --quiet``), as a command that
    has to find the app's stack does.

    Raises
    ------
    CdkCommandError
        The synth failed; its output is in the error's details.
    """
    extra = [arg for key, value in (context or {}).items() for arg in ("--context", f"{key}={value}")]
    selector = [] if stack is None else [stack]
    _run(
        [executable, "synth", *selector, "--quiet", "--output", str(assembly), *extra],
        cwd=app_path,
        env=env,
        echo=echo,
    )


def run_preflight(
    *,
    target: AwsTarget,
    stack: str | None,
    cdk: str | None,
    cdk_env: Mapping[str, str],
    assembly: Path | None,
    sts_client: Any = None,
    cloudformation_client: Any = None,
    ssm_client: Any = None,
    lambda_client: Any = None,
    run: Callable[..., subprocess.CompletedProcess[str]] = subprocess.run,
) -> Facts:
    """Observe the :class:`~constructs_fifo.deploy.preflight.facts.Facts` of ``target`` (read-only calls).

    Clients default to the target's; ``assembly`` is the synthesized app (``None``: no app).
    """
    known_regions: list[str] = []
    if target.endpoint_url is None:
        with contextlib.suppress(Exception):  # botocore's partition data; the check is skipped without it
            known_regions = list(target.session().get_available_regions("lambda"))
    return observe(
        target=target.describe(),
        region=target.region,
        endpoint_url=target.endpoint_url,
        stack=stack,
        sts_client=sts_client or target.client("sts"),
        cloudformation_client=cloudformation_client or target.client("cloudformation"),
        ssm_client=ssm_client or target.client("ssm"),
        lambda_client=lambda_client or target.client("lambda"),
        cdk=cdk,
        cdk_env=cdk_env,
        assembly=assembly,
        known_regions=known_regions,
        run=run,
    )


def _refuse(checks: Sequence[Check]) -> PreflightError:
    problems = [check for check in checks if not check.ok]
    first = problems[0]
    others = [f"{c.name}: {c.message}. Fix: {c.fix}" for c in problems[1:]]
    return PreflightError(
        f"preflight found {len(problems)} problem(s); nothing was deployed. {first.name}: {first.message}",
        first.fix,
        details=others,
    )


def _can_drop_reservation(facts: Facts, checks: Sequence[Check]) -> bool:
    problems = [check.name for check in checks if not check.ok]
    return (
        problems == ["concurrency"]
        and isinstance(facts.account, AccountConcurrency)
        and isinstance(facts.stack, StackConcurrency)
        and facts.stack.total > 0
    )


def _synth_stack(
    executable: str,
    stack: str | None,
    *,
    app_path: Path,
    assembly: Path,
    env: Mapping[str, str],
    echo: Callable[[str], None] | None,
) -> str:
    """Synthesize the app and return the stack to deploy: ``stack``, else the app's own.

    A ``stack`` the app does not define fails the synth with CDK's "No stacks match" among Node's
    output; the error names the app's stacks instead.
    """
    try:
        synth(executable, stack, app_path=app_path, assembly=assembly, env=env, echo=echo)
    except CdkCommandError as error:
        if stack is None or "No stacks match" not in error.output:
            raise
        try:
            names = ", ".join(found.name for found in read_app_stacks(assembly)) or "none"
        except StackError:
            names = "unknown (the assembly is unreadable)"
        raise StackChoiceError(
            f"the app in {app_path} has no stack {stack!r} (its stacks: {names})",
            "pass --stack with one of them, or leave --stack out to deploy the app's stack that holds "
            "an OrderedAgentQueue",
        ) from error
    if stack is not None:
        return stack
    chosen = choose_stack(read_app_stacks(assembly), where=f"the app in {app_path}")
    if echo is not None:
        echo(f"stack {chosen}: the app's stack that holds an OrderedAgentQueue")
    return chosen


def deploy(
    app_dir: str | os.PathLike[str],
    *,
    target: AwsTarget,
    stack: str | None = None,
    env: Mapping[str, str] | None = None,
    cdk: str | None = None,
    echo: Callable[[str], None] | None = None,
    cloudformation_client: CloudFormationClient | None = None,
    sts_client: Any = None,  # no STS stubs in the dev extra: typed loosely
    output_dir: str | os.PathLike[str] | None = None,
    ssm_client: Any = None,
    lambda_client: Any = None,
    check: bool = True,
    allow_unreserved: bool = False,
    report: Callable[[Check], None] | None = None,
) -> dict[str, str]:
    """Synthesize, run the preflight, bootstrap if needed, ``cdk deploy`` and return the outputs.

    Parameters
    ----------
    app_dir:
        The directory holding ``cdk.json``.
    target:
        Where to deploy and with which credentials; the CDK CLI runs in its
        :meth:`~constructs_fifo.stacks.aws.AwsTarget.child_environment`.
    stack:
        The stack to deploy; ``None`` (the default) takes the app's one stack holding an
        OrderedAgentQueue, read from the synthesized assembly (:mod:`~constructs_fifo.stacks.app_stack`)
        and told to ``echo``.
    env:
        Base environment of the CDK CLI; defaults to this process's (never changed).
    cdk:
        The CDK CLI; defaults to :func:`cdk_executable`.
    echo:
        Called with every line the CLI prints (e.g. ``print``); by default the output is kept and
        shown only in the error when a command fails.
    cloudformation_client, sts_client, ssm_client, lambda_client:
        Clients for the preflight, the bootstrap check, the account id and the outputs; by default
        the target's.
    output_dir:
        The CDK CLI's ``--output`` (cloud assembly) directory; default the app's own (``cdk.json``'s
        ``output``, else ``cdk.out``), where every command then reads the stack from. Pass a separate
        one when another synth may run in the same directory at the same time.
    check:
        Run the preflight (default); ``False`` deploys without it.
    allow_unreserved:
        When the only problem is that the account cannot hold the stack's reserved concurrency,
        synthesize again with ``--context constructs-fifo:unreserved=true`` and deploy that (the app
        must read the context; the sample app does). Without it such an account stops the deploy.
    report:
        Called with every preflight line (e.g. to print it).

    Returns
    -------
    dict[str, str]
        The stack's outputs (``{}`` for a stack without outputs: the README's quickstart app has none).

    Raises
    ------
    CdkNotFoundError, CdkCommandError, DeployError
    PreflightError
        The preflight found a problem; nothing was deployed (the message and fix name it).
    """
    app_path = Path(app_dir).resolve()
    if not (app_path / "cdk.json").is_file():
        raise DeployError(
            f"app_dir {str(app_path)!r} has no cdk.json; it must be the CDK app's directory",
            "pass the directory that holds cdk.json (the project root for the sample app)",
        )
    executable = cdk if cdk is not None else cdk_executable(app_path)
    child_env = quiet_node(target.child_environment(env))
    cloudformation = cloudformation_client or target.client("cloudformation")
    assembly = Path(output_dir).resolve() if output_dir is not None else assembly_dir(app_path)
    with contextlib.ExitStack() as scope:
        if target.endpoint_url is not None:
            child_env["CDK_HOME"] = scope.enter_context(
                tempfile.TemporaryDirectory(prefix="constructs-fifo-cdk-home-")
            )
        # The first AWS call, before a synth that takes tens of seconds: an endpoint that is down, a
        # missing credential, throttling or a denial stops the deploy here, as one line.
        bootstrapped = is_bootstrapped(cloudformation_client=cloudformation)
        stack = _synth_stack(
            executable, stack, app_path=app_path, assembly=assembly, env=child_env, echo=echo
        )
        if check:
            facts = run_preflight(
                target=target,
                stack=stack,
                cdk=executable,
                cdk_env=child_env,
                assembly=assembly,
                sts_client=sts_client,
                cloudformation_client=cloudformation,
                ssm_client=ssm_client,
                lambda_client=lambda_client,
            )
            checks = verify(facts)
            if allow_unreserved and _can_drop_reservation(facts, checks):
                if echo is not None:
                    echo("the account cannot hold the reserved concurrency: synthesizing without it")
                synth(
                    executable,
                    stack,
                    app_path=app_path,
                    assembly=assembly,
                    env=child_env,
                    echo=echo,
                    context={UNRESERVED_CONTEXT: "true"},
                )
                facts = with_stack(facts, assembly, allow_unreserved=True)
                checks = verify(facts)
            for line in checks:
                if report is not None:
                    report(line)
            if not all(line.ok for line in checks):
                raise _refuse(checks)
        if not bootstrapped:
            sts = sts_client or target.client("sts")
            account = sts.get_caller_identity()["Account"]
            # Outside the app directory: with no cdk.json there, the CLI bootstraps the named
            # environment without synthesizing the app first (measured: ~20 s less on 2 cores).
            with tempfile.TemporaryDirectory(prefix="constructs-fifo-bootstrap-") as elsewhere:
                _run(
                    [executable, "bootstrap", f"aws://{account}/{target.region}"],
                    cwd=Path(elsewhere),
                    env=child_env,
                    echo=echo,
                )
        scratch = scope.enter_context(tempfile.TemporaryDirectory(prefix="constructs-fifo-deploy-"))
        outputs_file = Path(scratch) / "outputs.json"
        _run(
            [
                executable,
                "deploy",
                stack,
                "--app",
                str(assembly),
                "--require-approval",
                "never",
                "--outputs-file",
                str(outputs_file),
            ],
            cwd=app_path,
            env=child_env,
            echo=echo,
        )
        if outputs_file.is_file():
            written: dict[str, dict[str, str]] = json.loads(outputs_file.read_text())
            if written.get(stack):
                return dict(written[stack])
    return stack_outputs(stack, cloudformation_client=cloudformation, required=False)
